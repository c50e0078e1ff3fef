//! The read side's output: cases as a table, one case as a timeline, and
//! the `cases --json` contract (DESIGN.md, "Interfaces"). Pure: the time
//! that ages are counted from arrives as `now`.

pub mod chart;

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::text::cut;

use crate::case::significance::{self, Significance};
use crate::case::{CaseKind, Event, EventKind, replay};
use crate::case::{CaseMessage, CaseRecord};
use crate::model::{Auth, AuthMethod, MessageId, rfc3339};

/// The commit as `{sha, short, subject}`: `sha` only when full.
fn commit_json(c: &CaseRecord) -> Value {
    let f = &c.view.facts;
    match &f.commit {
        None => Value::Null,
        Some(sha) => json!({
            "sha": if sha.len() == 40 { Value::String(sha.clone()) } else { Value::Null },
            "short": sha.get(..10).unwrap_or(sha),
            "subject": f.commit_subject,
        }),
    }
}

/// The headline as the report stated it, else what the case row keeps.
fn headline_json(c: &CaseRecord) -> Value {
    if let Some(h) = c.report_facts.as_ref().and_then(|f| f.get("headline")).filter(|h| !h.is_null()) {
        return h.clone();
    }
    let f = &c.view.facts;
    match &f.metric {
        None => Value::Null,
        Some(m) => json!({"metric": m, "change_pct": f.change_pct, "direction": f.direction}),
    }
}

/// The significance of the fix verdict an event gave, if it gave one.
fn event_significance(c: &CaseRecord, e: &Event) -> Option<Significance> {
    if e.kind != EventKind::RetestDone {
        return None;
    }
    significance::of_result(&c.retests, e.message_id.as_ref()?, e.fix_commit.as_deref()?)
}

/// One case as the contract's object: `id`, `state`, `kind`, `title`,
/// `report_message_id`, `commit`, `testcase`, `headline`, `messages`,
/// `events` (each `at`, `kind`, `message_id`) and `related`, then more:
/// a perf case's `significance`, and a fix verdict's
/// (`verdict_significance`, and on its event and retest column).
pub fn case_json(c: &CaseRecord, archive_url: &str) -> Value {
    let f = &c.view.facts;
    let (_, steps) = replay(f.kind, &c.events);
    let by_id = c.messages_by_id();
    let events: Vec<Value> = steps
        .iter()
        .map(|(e, state)| {
            let auth = event_auth(&by_id, e);
            json!({
                "at": rfc3339(e.at),
                "kind": e.kind.as_str(),
                "message_id": e.message_id,
                "state": state.as_str(),
                "verdict": e.verdict,
                "significance": event_significance(c, e),
                "fix_commit": e.fix_commit,
                "note": e.note,
                "tree": e.tree,
                "commit": e.fix_commit.as_ref().filter(|_| e.kind.is_lifecycle()),
                "by": e.by,
                "tag": e.tag,
                "tree_commit": e.tree_commit,
                "auth": auth.map(|a| a.label()),
                "auth_reason": auth.map(|a| &a.reason).filter(|r| !r.is_empty()),
            })
        })
        .collect();
    json!({
        "id": c.view.id.0,
        "state": c.view.state.as_str(),
        "kind": f.kind.as_str(),
        "title": f.title,
        "report_message_id": f.report_message_id,
        "commit": commit_json(c),
        "testcase": f.testcase,
        "headline": headline_json(c),
        "messages": c.messages.iter().map(|m| &m.message_id).collect::<Vec<_>>(),
        "events": events,
        "related": c.related.iter().map(|(id, _)| id.0).collect::<Vec<_>>(),
        "relations": c.related.iter().map(|(id, r)| json!({"id": id.0, "relation": r.as_str()})).collect::<Vec<_>>(),
        "tree": f.tree,
        "branch": f.branch,
        "signature": f.signature,
        "opened_at": rfc3339(f.opened_at),
        "updated_at": rfc3339(c.updated_at),
        "verdict": c.verdict,
        "significance": significance::of_case(f),
        "verdict_significance": significance::of_case_verdict(c),
        "fix_commit": c.fix_commit,
        "fix_message_id": c.fix_message_id,
        "link": f.report_message_id.link(archive_url),
        "retests": c.retests.iter().map(|r| retest_json(r, archive_url)).collect::<Vec<_>>(),
        "still_on": c.still_seen().iter().map(|s| json!({
            "status": s.status,
            "tree": s.tree,
            "sha": s.sha,
            "at": rfc3339(s.at),
            "message_id": s.message_id,
        })).collect::<Vec<_>>(),
    })
}

/// Where LKP saw the regression again in a later tree, evidence it is
/// still there: `still regression on linus/master 1a2b3c4d5e (2026-05-20)`,
/// one for each line of the report and of the reports sent again into
/// the case, newest last.
pub fn still_on_lines(c: &CaseRecord) -> Vec<String> {
    c.still_seen()
        .iter()
        .map(|s| {
            let day = rfc3339(s.at);
            let line = format!("{} {} {} ({})", s.status, s.tree, s.sha, day.get(..10).unwrap_or(&day));
            crate::text::clean(&line).into_owned()
        })
        .collect()
}

/// [`still_on_lines`], joined.
pub fn still_on_text(c: &CaseRecord) -> Option<String> {
    let v = still_on_lines(c);
    (!v.is_empty()).then(|| v.join("; "))
}

/// One fix column of a retest result: where it was sent, then the column
/// as extracted (`fix`, `base`, `bad`, `metric`, `values`, `verdict`, ...).
fn retest_json(r: &crate::case::CaseRetest, archive_url: &str) -> Value {
    let mut o = Map::new();
    o.insert("message_id".into(), json!(r.message_id));
    o.insert("link".into(), Value::String(r.message_id.link(archive_url)));
    if let Value::Object(facts) = &r.facts {
        o.extend(facts.iter().map(|(k, v)| (k.clone(), v.clone())));
    } else {
        o.insert("fix_commit".into(), Value::String(r.fix_commit.clone()));
        o.insert("metric".into(), Value::String(r.metric.clone()));
        o.insert("verdict".into(), json!(r.verdict.map(|v| v.as_str())));
    }
    let sig = r.verdict.and_then(|v| significance::of_verdict(v, &r.facts));
    o.insert("significance".into(), json!(sig));
    Value::Object(o)
}

/// `5h`, `12d`, `3y`: how long ago, coarsely.
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s if s < 2 * 365 * 86_400 => format!("{}d", s / 86_400),
        s => format!("{}y", s / (365 * 86_400)),
    }
}

/// What the case measures: the metric with its change, else the signature.
pub fn what(c: &CaseRecord) -> String {
    let f = &c.view.facts;
    match (&f.metric, f.change_pct) {
        (Some(m), Some(p)) => format!("{m} {p:+}%"),
        (Some(m), None) => m.clone(),
        _ => f.signature.clone().unwrap_or_else(|| match f.kind {
            CaseKind::Build => "build".into(),
            _ => "-".into(),
        }),
    }
}

fn short_commit(c: &CaseRecord) -> String {
    c.view.facts.commit.as_deref().map_or("-".into(), |s| s.get(..10).unwrap_or(s).to_string())
}

/// `clear`, `marginal`, or `-` for a case the rule does not apply to.
pub fn significance_word(s: Option<Significance>) -> &'static str {
    s.map_or("-", Significance::as_str)
}

/// The `cases` table: id, state, age, metric and change, its
/// significance, commit, title.
pub fn cases_table(cases: &[CaseRecord], now: i64) -> String {
    let mut out = format!(
        "{:>5}  {:<16}  {:>4}  {:<44}  {:<8}  {:<10}  {}\n",
        "ID", "STATE", "AGE", "WHAT", "SIGNIF", "COMMIT", "TITLE"
    );
    for c in cases {
        out.push_str(&format!(
            "{:>5}  {:<16}  {:>4}  {:<44}  {:<8}  {:<10}  {}\n",
            c.view.id.0,
            c.view.state.as_str(),
            age(now - c.view.facts.opened_at),
            cut(&what(c), 44),
            significance_word(significance::of_case(&c.view.facts)),
            short_commit(c),
            cut(&c.view.facts.title, 90),
        ));
    }
    out
}

/// How the sender of the message that caused `e` was authenticated;
/// `None` for an event no message caused (a stale mark, a timeout).
fn event_auth<'a>(by_id: &HashMap<&MessageId, &'a CaseMessage>, e: &Event) -> Option<&'a Auth> {
    static NONE: Auth = Auth { method: AuthMethod::None, author: None, reason: String::new() };
    let id = e.message_id.as_ref()?;
    Some(by_id.get(id).map_or(&NONE, |m| &m.auth))
}

/// `case ID`: the facts, then every event with the state it led to.
pub fn case_timeline(c: &CaseRecord, now: i64, archive_url: &str) -> String {
    let f = &c.view.facts;
    let mut out = format!("case {}  {}  {}\n", c.view.id.0, c.view.state.as_str(), f.kind.as_str());
    out.push_str(&format!("title:    {}\n", f.title));
    out.push_str(&format!("report:   {}\n", f.report_message_id.link(archive_url)));
    if let Some(sha) = &f.commit {
        let subject = f.commit_subject.as_ref().map_or(String::new(), |s| format!(" (\"{s}\")"));
        out.push_str(&format!("commit:   {sha}{subject}\n"));
    }
    let place = [f.tree.as_deref(), f.branch.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(":");
    if !place.is_empty() {
        out.push_str(&format!("tree:     {place}\n"));
    }
    let sig = significance::of_case(f).map_or(String::new(), |s| format!(" ({})", s.as_str()));
    out.push_str(&format!("test:     {}  {}{sig}\n", f.testcase.as_deref().unwrap_or("-"), what(c)));
    out.push_str(&format!(
        "opened:   {} ({} ago), last activity {}\n",
        day_time(f.opened_at),
        age(now - f.opened_at),
        day_time(c.updated_at)
    ));
    if let Some(v) = c.verdict {
        let fix = c.fix_commit.as_ref().map_or(String::new(), |x| format!(" (fix {x})"));
        let sig = significance::of_case_verdict(c).map_or(String::new(), |s| format!(", {}", s.as_str()));
        out.push_str(&format!("verdict:  {}{fix}{sig}\n", v.as_str()));
    }
    if let Some(m) = &c.fix_message_id {
        out.push_str(&format!("fix:      {}\n", m.link(archive_url)));
    }
    for s in still_on_lines(c) {
        out.push_str(&format!("seen:     {s}\n"));
    }
    if !c.related.is_empty() {
        let rel: Vec<String> = c.related.iter().map(|(id, r)| format!("#{} ({})", id.0, r.as_str())).collect();
        out.push_str(&format!("related:  {}\n", rel.join(", ")));
    }
    out.push_str("\ntimeline:\n");
    let (_, steps) = replay(f.kind, &c.events);
    let by_id = c.messages_by_id();
    for (e, state) in steps {
        let mut line = format!("  {}  {:<16} -> {:<16}", day_time(e.at), e.kind.as_str(), state.as_str());
        if let Some(m) = e.message_id.as_ref().and_then(|id| by_id.get(id)) {
            let from = m.from.as_deref().unwrap_or("?");
            line.push_str(&format!("  {from} ({}): {}", m.auth.label(), cut(&m.subject, 70)));
        }
        if let Some(v) = e.verdict {
            let sig = event_significance(c, e).map_or(String::new(), |s| format!(", {}", s.as_str()));
            line.push_str(&format!("  [{}{sig}]", v.as_str()));
        }
        if let Some(n) = e.note.as_ref().filter(|_| e.verdict.is_none()) {
            line.push_str(&format!("  [{}]", cut(n, 60)));
        }
        if let Some(where_) = lifecycle_place(e) {
            line.push_str(&format!("  [{}]", cut(&where_, 70)));
        }
        out.push_str(&line);
        out.push('\n');
        if let Some(id) = &e.message_id {
            out.push_str(&format!("      {}\n", id.link(archive_url)));
        }
    }
    out
}

/// Where a lifecycle event happened, in words: `cgroup/for-6.15, commit
/// 0123456789ab, tag v6.9-rc3, by tj@kernel.org`.
/// A `[[trees]]` commit's events name their commit whatever their kind.
pub fn lifecycle_place(e: &Event) -> Option<String> {
    let commit = e.tree_commit.as_ref().or(e.fix_commit.as_ref().filter(|_| e.kind.is_lifecycle()));
    let parts: Vec<String> = [
        e.tree.clone(),
        commit.map(|c| format!("commit {}", c.get(..12).unwrap_or(c))),
        e.tag.as_ref().map(|t| format!("tag {t}")),
        e.by.as_ref().map(|b| format!("by {b}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// `YYYY-MM-DD HH:MM` (UTC).
fn day_time(ts: i64) -> String {
    let s = rfc3339(ts);
    format!("{} {}", s.get(..10).unwrap_or(&s), s.get(11..16).unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(age(59), "0m");
        assert_eq!(age(7200), "2h");
        assert_eq!(age(12 * 86_400), "12d");
        assert_eq!(age(3 * 365 * 86_400), "3y");
        assert_eq!(age(-5), "0m");
    }

    #[test]
    fn cut_marks_what_it_drops() {
        assert_eq!(cut("abcdef", 10), "abcdef");
        assert_eq!(cut("abcdefghijkl", 8), "abcde...");
    }
}
