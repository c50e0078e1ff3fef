//! The read model: a case with everything the read side shows (its
//! messages, events, retests and related cases), which cases a list or a
//! subscriber selects, and how related cases follow from the cases'
//! facts. The store fills these in; the CLI views, the digest and the web
//! pages read them.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use super::{CaseId, CaseState, CaseView, Event, Relatable, Relation, Strategy, commit_prefix, relation};
use crate::model::{MessageId, Verdict};

/// A message of a case, for the read side.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseMessage {
    pub message_id: MessageId,
    pub strategy: Strategy,
    pub kind: String,
    pub subject: String,
    pub from: Option<String>,
    pub date: Option<i64>,
    /// How its sender was authenticated (`none` unless it was verified).
    pub auth: crate::model::Auth,
}

/// Where LKP saw a case's regression again: a "[still regression on TREE
/// SHA]" (or "[test failed on ...]") line of its report or of a report
/// sent again into it.
#[derive(Clone, Debug, PartialEq)]
pub struct StillSeen {
    /// `still regression on` or `test failed on`.
    pub status: String,
    pub tree: String,
    pub sha: String,
    /// When the report that says so was sent.
    pub at: i64,
    pub message_id: Option<MessageId>,
}

/// One fix column of a retest result sent in a case's thread.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseRetest {
    pub message_id: MessageId,
    /// The column's place in its table.
    pub idx: i64,
    pub fix_commit: String,
    pub metric: String,
    pub verdict: Option<Verdict>,
    /// The column as extracted (JSON): `fix`, `base`, `bad` with their
    /// values and %stddev, `values`, `recovered_share`, ...
    pub facts: serde_json::Value,
}

/// A case with everything the read side shows.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseRecord {
    pub view: CaseView,
    pub updated_at: i64,
    pub verdict: Option<Verdict>,
    pub fix_commit: Option<String>,
    pub fix_message_id: Option<MessageId>,
    /// The parts of the report's facts the read side shows, with
    /// details and when stored: `headline`, `test_machine`, `still_on`
    /// and `table`'s `columns` and `fail_rows`, as extracted (JSON).
    pub report_facts: Option<serde_json::Value>,
    /// When a report sent again into the case last said the regression
    /// is still there (a "[still regression on TREE SHA]" line: a
    /// `reported-again` event with its tree commit); with or without
    /// details.
    pub seen_again_at: Option<i64>,
    /// Empty unless asked for.
    pub messages: Vec<CaseMessage>,
    pub events: Vec<Event>,
    pub related: Vec<(CaseId, Relation)>,
    /// Retest results in the case's thread, oldest first.
    pub retests: Vec<CaseRetest>,
}

impl CaseRecord {
    /// Every "[still regression on TREE SHA]" line of the case: its
    /// report's (from `report_facts`, so with details), then those of the
    /// reports sent again into it (their `reported-again` events), oldest
    /// first; a tree and commit said twice is kept where it was said
    /// first.
    pub fn still_seen(&self) -> Vec<StillSeen> {
        let f = &self.view.facts;
        let mut out: Vec<StillSeen> = Vec::new();
        if let Some(serde_json::Value::Array(v)) = self.report_facts.as_ref().and_then(|r| r.get("still_on")) {
            let text =
                |x: &serde_json::Value, k: &str| x.get(k).and_then(|s| s.as_str()).unwrap_or_default().to_string();
            out.extend(v.iter().map(|x| StillSeen {
                status: text(x, "status"),
                tree: text(x, "tree"),
                sha: text(x, "sha"),
                at: f.opened_at,
                message_id: Some(f.report_message_id.clone()),
            }));
        }
        for e in self.events.iter().filter(|e| e.kind == super::EventKind::ReportedAgain) {
            if let (Some(tree), Some(sha)) = (&e.tree, &e.tree_commit) {
                out.push(StillSeen {
                    status: e.note.clone().unwrap_or_default(),
                    tree: tree.clone(),
                    sha: sha.clone(),
                    at: e.at,
                    message_id: e.message_id.clone(),
                });
            }
        }
        // Stable: a report's lines keep their order.
        out.sort_by_key(|s| s.at);
        let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
        out.retain(|s| seen.insert((s.tree.clone(), s.sha.clone())));
        out
    }

    /// A case without its details (messages, events, retests, related
    /// cases), no fix and no verdict: what a test starts from.
    pub fn bare(view: CaseView, updated_at: i64) -> CaseRecord {
        CaseRecord {
            view,
            updated_at,
            verdict: None,
            fix_commit: None,
            fix_message_id: None,
            report_facts: None,
            seen_again_at: None,
            messages: Vec::new(),
            events: Vec::new(),
            related: Vec::new(),
            retests: Vec::new(),
        }
    }

    /// Its messages by Message-ID: what an event's message is looked up
    /// in (a case may hold thousands; a scan per event is quadratic).
    pub fn messages_by_id(&self) -> HashMap<&MessageId, &CaseMessage> {
        self.messages.iter().map(|m| (&m.message_id, m)).collect()
    }
}

/// Which cases to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseFilter {
    Open,
    All,
    State(CaseState),
}

impl CaseFilter {
    /// `open`, `all` or a state's name; the error names what is allowed.
    pub fn parse(s: &str) -> Result<CaseFilter, String> {
        match s {
            "open" => Ok(CaseFilter::Open),
            "all" => Ok(CaseFilter::All),
            s => CaseState::parse(s).map(CaseFilter::State).ok_or_else(|| {
                let names: Vec<&str> = CaseState::ALL.iter().map(|s| s.as_str()).collect();
                format!("unknown state {s:?}: use open, all, or one of {}", names.join(", "))
            }),
        }
    }

    /// Whether a case in `state` is one this filter lists.
    pub fn selects(self, state: CaseState) -> bool {
        match self {
            CaseFilter::Open => state.is_open(),
            CaseFilter::All => true,
            CaseFilter::State(s) => s == state,
        }
    }
}

/// Which cases a subscriber wants. Empty: all.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SubscriptionFilter {
    pub tree: Option<String>,
    /// A subsystem tag of the report's subject (`mm` for `[mm]`).
    pub tag: Option<String>,
    pub testcase: Option<String>,
    /// At least this |change| (percent).
    pub min_change: Option<f64>,
    /// Only cases the subscriber is in (From/To/Cc of the report or a
    /// reply).
    pub mine: bool,
}

impl SubscriptionFilter {
    /// `tree:linus tag:mm testcase:stress-ng min:5 mine`, any of them.
    pub fn parse(text: &str) -> Result<SubscriptionFilter, String> {
        let mut f = SubscriptionFilter::default();
        for word in text.split_whitespace() {
            match word.split_once(':') {
                Some(("tree", v)) if !v.is_empty() => f.tree = Some(v.to_lowercase()),
                Some(("tag", v)) if !v.is_empty() => f.tag = Some(v.trim_matches(['[', ']']).to_lowercase()),
                Some(("testcase", v)) if !v.is_empty() => f.testcase = Some(v.to_string()),
                Some(("min", v)) => {
                    let n: f64 =
                        v.trim_end_matches('%').parse().map_err(|_| format!("\"{word}\": min needs a number"))?;
                    f.min_change = Some(n.abs());
                }
                None if word.eq_ignore_ascii_case("mine") => f.mine = true,
                None if word.eq_ignore_ascii_case("all") => {}
                _ => {
                    return Err(format!(
                        "\"{word}\" is not a filter (tree:NAME tag:NAME testcase:NAME min:PERCENT mine)"
                    ));
                }
            }
        }
        Ok(f)
    }

    /// The filter in the words [`SubscriptionFilter::parse`] reads; `all` when empty.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.tree {
            parts.push(format!("tree:{t}"));
        }
        if let Some(t) = &self.tag {
            parts.push(format!("tag:{t}"));
        }
        if let Some(t) = &self.testcase {
            parts.push(format!("testcase:{t}"));
        }
        if let Some(m) = self.min_change {
            parts.push(format!("min:{m}"));
        }
        if self.mine {
            parts.push("mine".into());
        }
        if parts.is_empty() { "all".into() } else { parts.join(" ") }
    }

    pub fn matches(&self, c: &CaseRecord, who: &str) -> bool {
        let f = &c.view.facts;
        self.tree.as_ref().is_none_or(|t| f.tree.as_deref().is_some_and(|x| x.eq_ignore_ascii_case(t)))
            && self.tag.as_ref().is_none_or(|t| tags(&f.title).iter().any(|x| x == t))
            && self.testcase.as_ref().is_none_or(|t| f.testcase.as_deref() == Some(t.as_str()))
            && self.min_change.is_none_or(|m| f.change_pct.is_some_and(|p| p.abs() >= m))
            && (!self.mine || participants(c).iter().any(|p| p.eq_ignore_ascii_case(who)))
    }
}

/// The bracketed tags of a subject that are not a tree (`[linus:master]`)
/// nor a robot marker: `[mm]`, `[memcg]`.
pub fn tags(subject: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = subject;
    while let Some(i) = rest.find('[') {
        let Some(j) = rest[i..].find(']') else { break };
        let tag = rest[i + 1..i + j].trim().to_lowercase();
        rest = &rest[i + j + 1..];
        if !tag.is_empty() && !tag.contains(':') && !tag.contains(' ') && !matches!(tag.as_str(), "lkp" | "lkp-robot") {
            out.push(tag);
        }
    }
    out
}

/// Everyone a case's mail was from or to, as far as the store knows: the
/// report's addressees and the senders of its messages.
fn participants(c: &CaseRecord) -> Vec<String> {
    c.view.facts.report_to.iter().cloned().chain(c.messages.iter().filter_map(|m| m.from.clone())).collect()
}

/// The cases related to each of `cases`, in their order: `in_thread`
/// pairs (a report attached to another case, either way round), then
/// cases among `others` with the same commit, then the same patch; each
/// related case once, by id. `others` holds at least every case sharing
/// a commit prefix or a patch key with one of `cases`.
pub fn related(
    cases: &[Relatable],
    others: &[Relatable],
    in_thread: &[(CaseId, CaseId)],
) -> Vec<Vec<(CaseId, Relation)>> {
    let index: HashMap<CaseId, usize> = cases.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
    let mut found: Vec<Vec<(CaseId, u8, Relation)>> = vec![Vec::new(); cases.len()];
    let mut add = |a: CaseId, b: CaseId, rel: Relation| {
        let rank = match rel {
            Relation::InThread => 0,
            Relation::SameCommit => 1,
            Relation::SamePatch => 2,
        };
        if let Some(&i) = index.get(&a) {
            found[i].push((b, rank, rel));
        }
        if let Some(&i) = index.get(&b) {
            found[i].push((a, rank, rel));
        }
    };
    for (a, b) in in_thread {
        add(*a, *b, Relation::InThread);
    }
    let mut by_key: HashMap<String, Vec<&Relatable>> = HashMap::new();
    for v in others {
        for key in relation_keys(v) {
            by_key.entry(key).or_default().push(v);
        }
    }
    let mut pairs = Vec::new();
    for a in cases {
        for key in relation_keys(a) {
            for b in by_key.get(&key).into_iter().flatten() {
                if b.id != a.id
                    && let Some(rel) = relation(a, b)
                {
                    pairs.push((a.id, b.id, rel));
                }
            }
        }
    }
    for (a, b, rel) in pairs {
        add(a, b, rel);
    }
    found
        .into_iter()
        .map(|mut best| {
            let mut seen = BTreeSet::new();
            best.sort_by_key(|(id, rank, _)| (*id, *rank));
            best.into_iter().filter(|(id, _, _)| seen.insert(*id)).map(|(id, _, rel)| (id, rel)).collect()
        })
        .collect()
}

/// The keys a related case must share with a case: its commit prefix and
/// its patch key (the store indexes both).
pub fn relation_keys(v: &Relatable) -> Vec<String> {
    let prefix = v.commit.as_deref().and_then(commit_prefix);
    prefix.into_iter().chain(v.patch_key.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_read_and_say() {
        let f = SubscriptionFilter::parse("tree:Linus tag:[mm] testcase:stress-ng min:5% mine").unwrap();
        assert_eq!(f.describe(), "tree:linus tag:mm testcase:stress-ng min:5 mine");
        assert_eq!(SubscriptionFilter::parse("").unwrap().describe(), "all");
        assert!(SubscriptionFilter::parse("colour:blue").is_err());
        assert!(SubscriptionFilter::parse("min:lots").is_err());
    }

    #[test]
    fn subject_tags() {
        assert_eq!(tags("[linus:master] [mm]  01b9da291c: x 67.7% regression"), ["mm"]);
        assert_eq!(tags("[LKP] [memcg] [PATCH v2] x"), ["memcg"]);
    }
}
