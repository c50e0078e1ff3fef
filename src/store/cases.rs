//! Cases, the messages in them and their events, as the engine writes
//! them.
//!
//! Events have a natural key (see the `events` table): writing a
//! message's events into a case again changes only what differs, so
//! threading a message a second time with the same outcome writes
//! nothing, and stale marks are kept, not deleted and inserted again.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::db::query;
use super::rows;
use super::{StoreError, Tx, err};
use crate::case::commit_prefix;
use crate::case::{CaseFacts, CaseId, CaseKind, CaseState, CaseView, Event, EventKind, Replayed, Strategy};
use crate::model::MessageId;

/// What a stale sweep found and changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StaleSweep {
    pub cases: u64,
    pub changed: u64,
}

/// Events as stored in one case, by their natural key, with their row ids.
#[derive(Default)]
pub struct StoredEvents(BTreeMap<EventKey, (i64, Event)>);

impl StoredEvents {
    /// Rows of `e.id, e.seq` and [`rows::EVENT_COLUMNS`], by case.
    fn read(rows: &[super::db::Row]) -> Result<HashMap<CaseId, StoredEvents>, StoreError> {
        let mut out: HashMap<CaseId, StoredEvents> = HashMap::new();
        for row in rows {
            let id: i64 = row.try_get("id").map_err(err("read events"))?;
            let seq: i64 = row.try_get("seq").map_err(err("read events"))?;
            let (case, e) = rows::event(row)?;
            out.entry(case).or_default().insert(id, seq, e);
        }
        Ok(out)
    }

    /// Keeps stored event `id` (its `seq` and itself) under its key.
    fn insert(&mut self, id: i64, seq: i64, e: Event) {
        let key = (e.message_id.as_ref().map(|m| m.to_string()), e.kind.as_str(), seq);
        self.0.insert(key, (id, e));
    }

    /// Whether one of them is of `kind`.
    pub fn has(&self, kind: EventKind) -> bool {
        self.0.values().any(|(_, e)| e.kind == kind)
    }
}

/// What [`Tx::put_events_over`] changed of a case's events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// Any event was added, changed or taken away.
    pub any: bool,
    /// One of them was a `retitled` event: the case's title may differ
    /// (the title is the one thing of a case's replay that threading reads).
    pub title: bool,
}

impl Changed {
    fn add(&mut self, kind: EventKind) {
        self.any = true;
        self.title |= kind == EventKind::Retitled;
    }
}

/// An event's natural key within its case, minus the case.
type EventKey = (Option<String>, &'static str, i64);

fn event_keys(events: &[Event]) -> Vec<(EventKey, &Event)> {
    let mut seq: BTreeMap<(Option<&str>, EventKind), i64> = BTreeMap::new();
    events
        .iter()
        .map(|e| {
            let id = e.message_id.as_ref().map(MessageId::as_str);
            // Stale marks are told apart by their time, the rest by order.
            let n = if e.kind == EventKind::Stale {
                e.at
            } else {
                let n = seq.entry((id, e.kind)).or_insert(0);
                *n += 1;
                *n - 1
            };
            ((id.map(str::to_string), e.kind.as_str(), n), e)
        })
        .collect()
}

type Query<'q> = super::db::Query<'q>;

/// Binds what an event says besides its time, kind and message, in the
/// order both statements that write events name them: verdict, fix
/// commit, note, tree, by, tag, tree commit.
fn bind_details<'q>(q: Query<'q>, e: &'q Event) -> Query<'q> {
    q.bind(e.verdict.map(|v| v.as_str()))
        .bind(e.fix_commit.as_deref())
        .bind(e.note.as_deref())
        .bind(e.tree.as_deref())
        .bind(e.by.as_deref())
        .bind(e.tag.as_deref())
        .bind(e.tree_commit.as_deref())
}

impl Tx<'_> {
    async fn case_views_where<'v, V>(
        &mut self,
        condition: &str,
        suffix: &str,
        values: &'v [V],
        what: &'static str,
    ) -> Result<Vec<CaseView>, StoreError>
    where
        V: Into<super::db::Arg<'v>> + Copy + Send + Sync + 'v,
    {
        let select = format!("SELECT {} FROM cases c WHERE {condition} IN", rows::CASE_COLUMNS);
        let rows = super::select_in(&mut self.tx, &select, suffix, values, what).await?;
        let mut out: Vec<CaseView> = rows.iter().map(rows::case_view).collect::<Result<_, _>>()?;
        out.sort_by_key(|v| v.id);
        out.dedup_by_key(|v| v.id);
        Ok(out)
    }

    pub async fn case_views(&mut self, ids: &[CaseId]) -> Result<Vec<CaseView>, StoreError> {
        let ids: Vec<i64> = ids.iter().map(|i| i.0).collect();
        self.case_views_where("c.id", "", &ids, "read cases").await
    }

    /// Cases holding any of the messages `ids`.
    pub async fn cases_of_messages(&mut self, ids: &[MessageId]) -> Result<Vec<CaseView>, StoreError> {
        let refs: Vec<&str> = ids.iter().map(MessageId::as_str).collect();
        self.case_views_where(
            "c.id IN (SELECT case_id FROM case_messages WHERE message_id",
            ")",
            &refs,
            "find cases by message",
        )
        .await
    }

    pub async fn cases_by_subject_key(&mut self, key: &str) -> Result<Vec<CaseView>, StoreError> {
        self.case_views_where("c.subject_key", "", &[key], "find cases by subject").await
    }

    /// Cases whose commit shares the seven-digit prefix of any of `commits`.
    pub async fn cases_by_commit(&mut self, commits: &[String]) -> Result<Vec<CaseView>, StoreError> {
        let prefixes: Vec<String> = commits.iter().filter_map(|c| commit_prefix(c)).collect();
        let refs: Vec<&str> = prefixes.iter().map(String::as_str).collect();
        self.case_views_where("c.commit_prefix", "", &refs, "find cases by commit").await
    }

    /// Cases whose culprit's subject is one of `subjects`, exactly.
    pub async fn cases_by_commit_subject(&mut self, subjects: &[&str]) -> Result<Vec<CaseView>, StoreError> {
        self.case_views_where("c.commit_subject", "", subjects, "find cases by culprit subject").await
    }

    /// Cases whose patch key (`thread::keys::patch_key`) is one of `keys`.
    pub async fn cases_by_patch_key(&mut self, keys: &[&str]) -> Result<Vec<CaseView>, StoreError> {
        if let [key] = keys
            && let Some(views) = self.patch_cases.get(*key)
        {
            return Ok(views.clone());
        }
        let views = self.case_views_where("c.patch_key", "", keys, "find cases by patch").await?;
        if let [key] = keys {
            self.patch_cases.insert((*key).to_string(), views.clone());
        }
        Ok(views)
    }

    /// Which of the patch keys `keys` some case has (however closed): a
    /// later version of any other patch supersedes nothing.
    pub async fn patch_keys_with_cases(&mut self, keys: &[&str]) -> Result<HashSet<String>, StoreError> {
        let rows = super::select_in(
            &mut self.tx,
            "SELECT DISTINCT patch_key FROM cases WHERE patch_key IN",
            "",
            keys,
            "find cases by patch",
        )
        .await?;
        rows.iter().map(|r| r.try_get::<String, _>(0).map_err(err("find cases by patch"))).collect()
    }

    /// The case a report opened, if it did.
    pub async fn case_opened_by(&mut self, report: &MessageId) -> Result<Option<CaseView>, StoreError> {
        Ok(self.case_views_where("c.report_message_id", "", &[report.as_str()], "read cases").await?.pop())
    }

    /// Opens a case; its report message must be stored already. Its id
    /// is the highest so far plus one, as SQLite numbers rows by itself,
    /// on both backends (under the write lock, so never contended).
    pub async fn open_case(&mut self, f: &CaseFacts) -> Result<CaseId, StoreError> {
        self.patch_cases.clear();
        let state = f.kind.initial_state();
        let row = query(
            "INSERT INTO cases (id, kind, state, title, report_message_id, report_to, opened_at, updated_at, \
             commit_sha, commit_prefix, commit_subject, tree, branch, testcase, metric, change_pct, direction, \
             signature, subject_key, patch_key, base_stddev_pct, new_stddev_pct) \
             VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM cases), $1, $2, $3, $4, $5, $6, $6, $7, $8, $9, $10, $11, \
             $12, $13, $14, $15, $16, $17, $18, $19, $20) RETURNING id",
        )
        .bind(f.kind.as_str())
        .bind(state.as_str())
        .bind(f.title.as_str())
        .bind(f.report_message_id.as_str())
        .bind(f.report_to.join(" "))
        .bind(f.opened_at)
        .bind(f.commit.as_deref())
        .bind(f.commit.as_deref().and_then(commit_prefix))
        .bind(f.commit_subject.as_deref())
        .bind(f.tree.as_deref())
        .bind(f.branch.as_deref())
        .bind(f.testcase.as_deref())
        .bind(f.metric.as_deref())
        .bind(f.change_pct)
        .bind(f.direction.map(rows::direction_str))
        .bind(f.signature.as_deref())
        .bind(f.subject_key.as_deref())
        .bind(f.patch_key.as_deref())
        .bind(f.base_stddev_pct)
        .bind(f.new_stddev_pct)
        .fetch_one(&mut self.tx)
        .await
        .map_err(err("open a case"))?;
        Ok(CaseId(row.try_get(0).map_err(err("open a case"))?))
    }

    /// Deletes a case with its events and memberships (its report turned
    /// out to repeat another case's); returns the messages that were in it.
    pub async fn delete_case(&mut self, case: CaseId) -> Result<Vec<MessageId>, StoreError> {
        self.patch_cases.clear();
        let rows = query("SELECT message_id FROM case_messages WHERE case_id = $1 ORDER BY message_id")
            .bind(case.0)
            .fetch_all(&mut self.tx)
            .await
            .map_err(err("read case messages"))?;
        let members = rows
            .iter()
            .map(|r| r.try_get::<String, _>(0).map_err(err("read case messages")).and_then(|s| rows::message_id(&s)))
            .collect::<Result<Vec<_>, _>>()?;
        for sql in [
            "DELETE FROM events WHERE case_id = $1",
            "DELETE FROM case_messages WHERE case_id = $1",
            "DELETE FROM cases WHERE id = $1",
        ] {
            query(sql).bind(case.0).execute(&mut self.tx).await.map_err(err("delete a case"))?;
        }
        Ok(members)
    }

    /// Puts a message in a case, or changes the rung that put it there.
    pub async fn attach(&mut self, case: CaseId, message: &MessageId, strategy: Strategy) -> Result<(), StoreError> {
        query(
            "INSERT INTO case_messages (case_id, message_id, strategy) VALUES ($1, $2, $3) \
             ON CONFLICT (case_id, message_id) DO UPDATE SET strategy = excluded.strategy",
        )
        .bind(case.0)
        .bind(message.as_str())
        .bind(strategy.as_str())
        .execute(&mut self.tx)
        .await
        .map_err(err("attach a message to a case"))?;
        Ok(())
    }

    /// Takes a message and its events out of a case.
    pub async fn detach(&mut self, case: CaseId, message: &MessageId) -> Result<(), StoreError> {
        for sql in [
            "DELETE FROM events WHERE case_id = $1 AND message_id = $2",
            "DELETE FROM case_messages WHERE case_id = $1 AND message_id = $2",
        ] {
            query(sql)
                .bind(case.0)
                .bind(message.as_str())
                .execute(&mut self.tx)
                .await
                .map_err(err("detach a message from a case"))?;
        }
        Ok(())
    }

    /// Makes `events` the events `message` caused in `case` (or, with no
    /// message, its stale marks), changing only what differs; true when
    /// anything did.
    pub async fn put_events(
        &mut self,
        case: CaseId,
        message: Option<&MessageId>,
        events: &[Event],
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "SELECT e.id, e.seq, {} FROM events e WHERE e.case_id = $1 AND {}",
            rows::EVENT_COLUMNS,
            if message.is_some() { "e.message_id = $2" } else { "e.message_id IS NULL AND e.kind = $2" }
        );
        let q = query(sql).bind(case.0);
        let q = match message {
            Some(m) => q.bind(m.as_str()),
            None => q.bind(EventKind::Stale.as_str()),
        };
        let rows = q.fetch_all(&mut self.tx).await.map_err(err("read events"))?;
        let had = StoredEvents::read(&rows)?.remove(&case).unwrap_or_default();
        Ok(self.put_events_over(case, had, events).await?.any)
    }

    /// The events `message` caused, in each case it caused any: read in
    /// one statement, for [`Tx::put_events_over`] (a later version of a
    /// patch joins every case of its patch key, up to a hundred and more).
    /// Found through its memberships (migration 0014): an event with a
    /// message is only ever in a case the message is a member of.
    pub async fn events_of(&mut self, message: &MessageId) -> Result<HashMap<CaseId, StoredEvents>, StoreError> {
        let sql = format!(
            "SELECT e.id, e.seq, {} FROM case_messages cm \
             JOIN events e ON e.case_id = cm.case_id AND e.message_id = cm.message_id WHERE cm.message_id = $1",
            rows::EVENT_COLUMNS
        );
        let rows = query(sql).bind(message.as_str()).fetch_all(&mut self.tx).await.map_err(err("read events"))?;
        StoredEvents::read(&rows)
    }

    /// [`Tx::put_events`] for a message whose events in `case` are `had`
    /// (as [`Tx::events_of`] read them, in this transaction). A message's
    /// events go only in a case it is a member of ([`Tx::attach`] first):
    /// that is how [`Tx::events_of`] and [`Tx::delete_message`] find them.
    pub async fn put_events_over(
        &mut self,
        case: CaseId,
        had: StoredEvents,
        events: &[Event],
    ) -> Result<Changed, StoreError> {
        let mut have = had.0;
        let mut changed = Changed::default();
        let want = event_keys(events);
        for (key, e) in &want {
            match have.remove(key) {
                Some((_, old)) if &old == *e => {}
                Some((id, _)) => {
                    let q = query(
                        "UPDATE events SET at = $2, verdict = $3, fix_commit = $4, note = $5, tree = $6, \
                         by_addr = $7, tag = $8, tree_commit = $9 WHERE id = $1",
                    );
                    bind_details(q.bind(id).bind(e.at), e)
                        .execute(&mut self.tx)
                        .await
                        .map_err(err("update an event"))?;
                    changed.add(e.kind);
                }
                None => {
                    self.insert_event(case, e, key.2).await?;
                    changed.add(e.kind);
                }
            }
        }
        for (id, old) in have.into_values() {
            query("DELETE FROM events WHERE id = $1")
                .bind(id)
                .execute(&mut self.tx)
                .await
                .map_err(err("delete an event"))?;
            changed.add(old.kind);
        }
        Ok(changed)
    }

    pub(super) async fn insert_event(&mut self, case: CaseId, e: &Event, seq: i64) -> Result<(), StoreError> {
        let q = query(
            "INSERT INTO events (case_id, at, kind, message_id, seq, verdict, fix_commit, note, tree, by_addr, tag, \
             tree_commit) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        );
        let q = q.bind(case.0).bind(e.at).bind(e.kind.as_str()).bind(e.message_id.as_ref().map(MessageId::as_str));
        bind_details(q.bind(seq), e).execute(&mut self.tx).await.map_err(err("record an event"))?;
        Ok(())
    }

    /// A case's events (in a deterministic order; `replay` sorts by time).
    pub async fn events(&mut self, case: CaseId) -> Result<Vec<Event>, StoreError> {
        let sql =
            format!("SELECT {} FROM events e WHERE e.case_id = $1 ORDER BY {}", rows::EVENT_COLUMNS, rows::EVENT_ORDER);
        let rows = query(sql).bind(case.0).fetch_all(&mut self.tx).await.map_err(err("read events"))?;
        rows.iter().map(|r| rows::event(r).map(|(_, e)| e)).collect()
    }

    /// The events of each of `cases` (as [`Tx::events`] reads one case's,
    /// in its order), and its stale marks as stored, for
    /// [`Tx::put_events_over`]: a stale sweep's reads, one statement for
    /// many cases.
    pub async fn events_of_cases(
        &mut self,
        cases: &[CaseId],
    ) -> Result<HashMap<CaseId, (Vec<Event>, StoredEvents)>, StoreError> {
        let ids: Vec<i64> = cases.iter().map(|c| c.0).collect();
        let select = format!("SELECT e.id, e.seq, {} FROM events e WHERE e.case_id IN", rows::EVENT_COLUMNS);
        let rows = super::select_in(
            &mut self.tx,
            &select,
            &format!(" ORDER BY e.case_id, {}", rows::EVENT_ORDER),
            &ids,
            "read events",
        )
        .await?;
        let mut out: HashMap<CaseId, (Vec<Event>, StoredEvents)> = HashMap::new();
        for row in &rows {
            let (case, e) = rows::event(row)?;
            let (all, stale) = out.entry(case).or_default();
            if e.message_id.is_none() && e.kind == EventKind::Stale {
                let id: i64 = row.try_get("id").map_err(err("read events"))?;
                let seq: i64 = row.try_get("seq").map_err(err("read events"))?;
                stale.insert(id, seq, e.clone());
            }
            all.push(e);
        }
        Ok(out)
    }

    /// Adds an event no message caused (stale marks aside): the bot's own
    /// doings, like a retest request timing out.
    pub async fn add_event(&mut self, case: CaseId, e: &Event) -> Result<(), StoreError> {
        query(
            "INSERT INTO events (case_id, at, kind, message_id, seq, verdict, fix_commit, note) \
             VALUES ($1, $2, $3, NULL, 0, NULL, NULL, $4)",
        )
        .bind(case.0)
        .bind(e.at)
        .bind(e.kind.as_str())
        .bind(e.note.as_deref())
        .execute(&mut self.tx)
        .await
        .map_err(err("record an event"))?;
        Ok(())
    }

    /// Recomputes a case's state and summary from its events: the one
    /// place a case's [`crate::case::replay`] is stored.
    pub async fn replay(&mut self, case: CaseId) -> Result<(), StoreError> {
        let Some(view) = self.case_views(&[case]).await?.pop() else { return Ok(()) };
        let events = self.events(case).await?;
        let (progress, _) = crate::case::replay(view.facts.kind, &events);
        if progress.state != view.state {
            tracing::debug!(case = case.0, from = view.state.as_str(), to = progress.state.as_str(), "case state");
        }
        self.set_progress(case, &progress, view.facts.opened_at).await
    }

    /// Puts off the replay of `cases` to the end of an archive import
    /// (`cases.replay_due`, which any replay clears).
    pub async fn put_off_replays(&mut self, cases: &[CaseId]) -> Result<(), StoreError> {
        let ids: Vec<i64> = cases.iter().map(|c| c.0).collect();
        for chunk in super::padded(&ids) {
            let sql = format!(
                "UPDATE cases SET replay_due = 1 WHERE replay_due = 0 AND id IN ({})",
                super::placeholders(chunk.len())
            );
            let mut q = query(sql);
            for id in chunk {
                q = q.bind(*id);
            }
            q.execute(&mut self.tx).await.map_err(err("put off a case's replay"))?;
        }
        Ok(())
    }

    /// Replays up to `n` of the cases whose replay was put off, in id
    /// order; how many there were.
    pub async fn replay_due(&mut self, n: usize) -> Result<usize, StoreError> {
        let limit = i64::try_from(n).unwrap_or(i64::MAX);
        let rows = query("SELECT id FROM cases WHERE replay_due = 1 ORDER BY id LIMIT $1")
            .bind(limit)
            .fetch_all(&mut self.tx)
            .await
            .map_err(err("list cases to replay"))?;
        let ids = rows
            .iter()
            .map(|r| r.try_get::<i64, _>(0).map(CaseId))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err("list cases to replay"))?;
        for &id in &ids {
            self.replay(id).await?;
        }
        Ok(ids.len())
    }

    /// Stores the replay of a case's events.
    async fn set_progress(&mut self, case: CaseId, p: &Replayed, opened_at: i64) -> Result<(), StoreError> {
        self.patch_cases.clear();
        query(
            "UPDATE cases SET state = $2, updated_at = $3, verdict = $4, fix_commit = $5, fix_message_id = $6, \
             custom_title = $7, replay_due = 0 WHERE id = $1",
        )
        .bind(case.0)
        .bind(p.state.as_str())
        .bind(p.last_activity.unwrap_or(opened_at))
        .bind(p.verdict.map(|v| v.as_str()))
        .bind(p.fix_commit.as_deref())
        .bind(p.fix_message_id.as_ref().map(MessageId::as_str))
        .bind(p.title.as_deref())
        .execute(&mut self.tx)
        .await
        .map_err(err("update a case"))?;
        Ok(())
    }

    /// Cases that are neither closed nor improvements, with their kind.
    pub async fn open_cases(&mut self) -> Result<Vec<(CaseId, CaseKind)>, StoreError> {
        let open: Vec<&str> = CaseState::ALL.iter().filter(|s| s.is_open()).map(|s| s.as_str()).collect();
        let rows = super::select_in(
            &mut self.tx,
            "SELECT id, kind FROM cases WHERE state IN",
            " ORDER BY id",
            &open,
            "list cases",
        )
        .await?;
        rows.iter()
            .map(|r| {
                let kind: String = r.try_get(1).map_err(err("list cases"))?;
                let kind = CaseKind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("case kind {kind:?}")))?;
                Ok((CaseId(r.try_get(0).map_err(err("list cases"))?), kind))
            })
            .collect()
    }
}
