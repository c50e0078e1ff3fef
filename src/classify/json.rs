//! The `classify --json` contract (DESIGN.md, "Interfaces"): one object per
//! message with stable key names and order. Fields a message does not
//! state are `null`, never absent.

use serde_json::{Map, Value, json};

use super::report::ReportFacts;
use super::{Classified, Kind};
use crate::mail::Mail;
use crate::model::rfc3339;

fn v<T: serde::Serialize>(x: &T) -> Value {
    serde_json::to_value(x).unwrap_or(Value::Null)
}

/// The report facts as the contract's flat field list.
fn report_fields(r: &ReportFacts, out: &mut Map<String, Value>, full: bool) {
    out.insert("commit".into(), v(&r.commit));
    out.insert("tree".into(), v(&r.tree));
    out.insert("branch".into(), v(&r.branch));
    out.insert("patch".into(), v(&r.patch));
    out.insert("testcase".into(), v(&r.testcase));
    out.insert("test_machine".into(), v(&r.test_machine));
    out.insert("headline".into(), v(&r.headline));
    out.insert("signatures".into(), v(&r.signatures));
    if full {
        out.insert("tree_url".into(), v(&r.tree_url));
        out.insert("parameters".into(), v(&r.parameters));
        out.insert("config".into(), v(&r.config));
        out.insert("compiler".into(), v(&r.compiler));
        out.insert("also_impacts".into(), v(&r.also_impacts));
        out.insert("still_on".into(), v(&r.still_on));
        out.insert("tags".into(), v(&r.tags));
        out.insert("download_link".into(), v(&r.download_link));
        out.insert("table".into(), v(&r.table));
    }
}

fn report_object(r: &ReportFacts) -> Value {
    let mut m = Map::new();
    report_fields(r, &mut m, false);
    Value::Object(m)
}

/// Builds the contract object for one classified message.
pub fn to_json(mail: &Mail, c: &Classified) -> Value {
    let mut o = Map::new();
    o.insert("message_id".into(), v(&mail.message_id));
    o.insert("kind".into(), Value::String(c.kind.as_str().into()));
    for key in ["commit", "tree", "branch", "patch", "testcase", "test_machine", "headline"] {
        o.insert(key.into(), Value::Null);
    }
    if let Some(r) = &c.own_report {
        report_fields(r, &mut o, true);
    }
    if let Some(b) = &c.build {
        o.insert("commit".into(), v(&b.commit));
        o.insert("tree".into(), v(&b.tree));
        o.insert("branch".into(), v(&b.branch));
        o.insert("patch".into(), v(&b.patch));
        o.insert("build".into(), v(b));
    }
    if let Some(s) = &c.build_summary {
        o.insert("tree".into(), v(&s.tree));
        o.insert("branch".into(), v(&s.branch));
        o.insert("build_summary".into(), v(s));
    }
    o.insert("subject".into(), Value::String(mail.subject.clone()));
    o.insert("from".into(), mail.from.as_ref().map_or(Value::Null, |a| json!({"name": a.name, "email": a.email})));
    o.insert("date".into(), mail.date.map_or(Value::Null, |d| Value::String(rfc3339(d))));
    o.insert("in_reply_to".into(), v(&mail.in_reply_to));
    o.insert("list_id".into(), v(&mail.list_id));
    o.insert("sender".into(), v(&c.sender));
    o.insert("report".into(), c.report.as_deref().map_or(Value::Null, report_object));
    if let Some(l) = &c.lifecycle {
        o.insert("lifecycle".into(), v(l));
    }
    if c.kind == Kind::RetestResult {
        o.insert("retest".into(), c.retests.first().map_or(Value::Null, v));
        o.insert("retests".into(), v(&c.retests));
        o.insert("prose_verdict".into(), v(&c.prose_verdict));
        // What the result found, and the verdict it states: a fix's,
        // `still-regressed` for a rerun without a fix, null when the mail
        // does not say (`problems` says why).
        o.insert("outcome".into(), v(&c.outcome));
        o.insert("verdict".into(), v(&c.outcome.as_ref().and_then(|x| x.verdict_str())));
    }
    if c.cannot_reproduce {
        o.insert("cannot_reproduce".into(), Value::Bool(true));
    }
    if c.test_request.is_some() {
        o.insert("test_request".into(), v(&c.test_request));
    }
    if !c.commands.is_empty() {
        o.insert("commands".into(), v(&c.commands));
    }
    if c.fix.is_some() {
        o.insert("fix".into(), v(&c.fix));
    }
    let attachments: Vec<Value> = mail
        .attachments
        .iter()
        .map(|a| json!({"name": a.name, "content_type": a.content_type, "size": a.size}))
        .collect();
    o.insert("attachments".into(), Value::Array(attachments));
    let problems: Vec<&String> = mail.problems.iter().chain(&c.problems).collect();
    o.insert("problems".into(), v(&problems));
    Value::Object(o)
}
