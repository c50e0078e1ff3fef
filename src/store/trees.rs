//! What `[[trees]]` commits caused: events with no message, each keyed by
//! its case, kind, tree and commit (see the `events_tree` index), so a
//! tree read again records nothing twice; and what a tree pass reads of
//! the store first (the keys a commit can be tied through, what was
//! tracked since the last pass). The pass's checkpoint is an ordinary
//! one (`tree:<name>`), written in the transaction that writes its
//! events.

use std::collections::{BTreeSet, HashSet};

use super::db::query;
use super::{StoreError, Tx, err};
use crate::case::{CaseId, Event, EventKind};

/// Everything a commit could be tied through, for a first sieve over a
/// tree's history (exact matching reads the cases afterwards).
#[derive(Clone, Debug, Default)]
pub struct TreeKeys {
    /// Every case's report Message-ID.
    pub reports: HashSet<String>,
    /// Fix patch titles (`t:` keys, without the prefix) and the patch
    /// keys of cases on a patch under review (no tree).
    pub titles: HashSet<String>,
    /// Culprit subjects, and the seven-digit prefixes of culprits.
    pub culprit_subjects: HashSet<String>,
    pub culprit_prefixes: HashSet<String>,
}

impl Tx<'_> {
    /// What a tree pass sifts commits with.
    pub async fn tree_keys(&mut self) -> Result<TreeKeys, StoreError> {
        let what = "read what trees are tied through";
        let mut k = TreeKeys::default();
        let rows = query(
            "SELECT report_message_id, CASE WHEN tree IS NULL AND branch IS NULL THEN patch_key END, commit_subject, \
             commit_prefix FROM cases",
        )
        .fetch_all(&mut self.tx)
        .await
        .map_err(err(what))?;
        for r in rows {
            k.reports.insert(r.try_get(0).map_err(err(what))?);
            k.titles.extend(r.try_get::<Option<String>, _>(1).map_err(err(what))?);
            k.culprit_subjects.extend(r.try_get::<Option<String>, _>(2).map_err(err(what))?);
            k.culprit_prefixes.extend(r.try_get::<Option<String>, _>(3).map_err(err(what))?);
        }
        let rows = query("SELECT DISTINCT key FROM message_keys WHERE key >= 't:' AND key < 't;'")
            .fetch_all(&mut self.tx)
            .await
            .map_err(err(what))?;
        for r in rows {
            let key: String = r.try_get(0).map_err(err(what))?;
            k.titles.extend(key.strip_prefix("t:").map(str::to_string));
        }
        Ok(k)
    }

    /// The earliest time of a report or a fix posted among the messages
    /// fetched at `after` or later: what a tree's older commits may have
    /// to be read again for.
    pub async fn tracked_since(&mut self, after: i64) -> Result<Option<i64>, StoreError> {
        let row = query(
            "SELECT MIN(e.at) FROM events e JOIN messages m ON m.message_id = e.message_id \
             WHERE e.kind IN ($1, $2) AND m.fetched_at >= $3",
        )
        .bind(EventKind::Reported.as_str())
        .bind(EventKind::FixPosted.as_str())
        .bind(after)
        .fetch_one(&mut self.tx)
        .await
        .map_err(err("read what was tracked since"))?;
        row.try_get::<Option<i64>, _>(0).map_err(err("read what was tracked since"))
    }

    /// The commits of `tree` that caused events, each once, and whether
    /// they have their tag.
    pub async fn tree_commits(&mut self, tree: &str) -> Result<Vec<(String, bool)>, StoreError> {
        let rows = query(
            "SELECT tree_commit, CAST(MIN(CASE WHEN tag IS NULL THEN 0 ELSE 1 END) AS BIGINT) FROM events \
             WHERE message_id IS NULL AND tree = $1 AND tree_commit IS NOT NULL \
             GROUP BY tree_commit ORDER BY tree_commit",
        )
        .bind(tree)
        .fetch_all(&mut self.tx)
        .await
        .map_err(err("read a tree's commits"))?;
        rows.iter()
            .map(|r| {
                let tagged: i64 = r.try_get(1).map_err(err("read a tree's commits"))?;
                Ok((r.try_get(0).map_err(err("read a tree's commits"))?, tagged == 1))
            })
            .collect()
    }

    /// Records a tree commit's event in `case` unless it is recorded
    /// already; true when it was not.
    pub async fn put_tree_event(&mut self, case: CaseId, e: &Event) -> Result<bool, StoreError> {
        let have = query(
            "SELECT 1 FROM events WHERE case_id = $1 AND kind = $2 AND tree = $3 AND tree_commit = $4 \
             AND message_id IS NULL",
        )
        .bind(case.0)
        .bind(e.kind.as_str())
        .bind(e.tree.as_deref())
        .bind(e.tree_commit.as_deref())
        .fetch_optional(&mut self.tx)
        .await
        .map_err(err("read events"))?;
        if have.is_some() || e.message_id.is_some() || e.tree_commit.is_none() {
            return Ok(false);
        }
        self.insert_event(case, e, 0).await?;
        Ok(true)
    }

    /// Forgets what `commit` of `tree` caused (it is no longer on the
    /// branch); returns the cases that changed.
    pub async fn forget_tree_commit(&mut self, tree: &str, commit: &str) -> Result<BTreeSet<CaseId>, StoreError> {
        let rows =
            query("DELETE FROM events WHERE message_id IS NULL AND tree = $1 AND tree_commit = $2 RETURNING case_id")
                .bind(tree)
                .bind(commit)
                .fetch_all(&mut self.tx)
                .await
                .map_err(err("forget a tree commit"))?;
        rows.iter().map(|r| Ok(CaseId(r.try_get(0).map_err(err("forget a tree commit"))?))).collect()
    }

    /// Gives `commit`'s events in `tree` the first tag that contains it,
    /// where they had none; returns the cases that changed.
    pub async fn tag_tree_commit(
        &mut self,
        tree: &str,
        commit: &str,
        tag: &str,
    ) -> Result<BTreeSet<CaseId>, StoreError> {
        let rows = query(
            "UPDATE events SET tag = $3 WHERE message_id IS NULL AND tree = $1 AND tree_commit = $2 \
             AND tag IS NULL RETURNING case_id",
        )
        .bind(tree)
        .bind(commit)
        .bind(tag)
        .fetch_all(&mut self.tx)
        .await
        .map_err(err("tag a tree commit"))?;
        rows.iter().map(|r| Ok(CaseId(r.try_get(0).map_err(err("tag a tree commit"))?))).collect()
    }
}
