-- 0007: the %stddev a perf report prints beside its headline's base and
-- new values (NULL: not printed, which LKP does below 2%), kept on the
-- case so that lists can say how clear its change is (`significance`)
-- without reading the report's facts. Cases opened before are filled in
-- from their report.
ALTER TABLE cases ADD COLUMN base_stddev_pct DOUBLE PRECISION;
ALTER TABLE cases ADD COLUMN new_stddev_pct DOUBLE PRECISION;
UPDATE cases SET
    base_stddev_pct = (SELECT (r.facts::json #>> '{headline,base_stddev_pct}')::double precision
                       FROM reports r WHERE r.message_id = cases.report_message_id),
    new_stddev_pct = (SELECT (r.facts::json #>> '{headline,new_stddev_pct}')::double precision
                      FROM reports r WHERE r.message_id = cases.report_message_id)
WHERE metric IS NOT NULL;
