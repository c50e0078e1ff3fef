//! Verifying the senders of a batch before it is stored: DKIM needs DNS,
//! which must not happen inside the write transaction. Only fresh mail
//! the bot acts on is verified (a command, a retest result, the LKP
//! team's test request, lifecycle mail that moves a case); the rest of
//! the list's traffic, and history, is `none` and costs nothing. A few
//! verifications run at once.

use std::collections::HashMap;

use futures_util::StreamExt;

use super::Settings;
use super::pipeline::Item;
use crate::act;
use crate::classify::{Kind, Sender};
use crate::model::Auth;
use crate::thread::Incoming;

/// Verifications in flight at once: each may wait on DNS.
const AT_ONCE: usize = 8;

/// How the sender of each item that needs it was authenticated, by the
/// item's place in `items`.
pub(super) async fn verify(settings: &Settings, items: &[Item]) -> HashMap<usize, Auth> {
    let Some(acting) = &settings.acting else { return HashMap::new() };
    let Some(verifier) = &acting.auth else { return HashMap::new() };
    let now = (acting.clock)();
    let wanted: Vec<(usize, &Item)> = items
        .iter()
        .enumerate()
        .filter(|(_, it)| {
            it.incoming.as_ref().is_some_and(|inc| wanted(inc, it.fetched_at, now, settings.policy.fresh_hours))
        })
        .collect();
    if wanted.is_empty() {
        return HashMap::new();
    }
    let results: Vec<Auth> = futures_util::stream::iter(wanted.iter().map(|(_, it)| verifier.verify(&it.raw)))
        .buffered(AT_ONCE)
        .collect()
        .await;
    let mut out = HashMap::new();
    for ((i, it), auth) in wanted.into_iter().zip(results) {
        tracing::info!(message_id = %it.message_id, auth = %auth.label(), reason = %auth.reason, "sender verified");
        out.insert(i, auth);
    }
    out
}

/// Whether the bot needs to know who sent `inc`: mail it acts on (a
/// command, a retest result, the LKP team's test request) or that moves a
/// case by itself (an applied notice, a merge, a revert, a later version),
/// and fresh.
pub fn wanted(inc: &Incoming, fetched_at: i64, now: i64, fresh_hours: i64) -> bool {
    let acts_on = match inc.kind() {
        Kind::Command | Kind::RetestResult => true,
        Kind::TestRequest => matches!(inc.classified.sender, Sender::LkpTeam | Sender::Robot),
        _ => inc.has_lifecycle(),
    };
    acts_on && act::is_fresh(inc.date, fetched_at, now, fresh_hours)
}
