//! `lkpbot digest --print/--json`: a week's digest from the store, sent
//! nowhere.

use crate::store::Location;

use anyhow::Context;

use super::failure::Failure;
use super::store::{reader, runtime, write_stdout, write_text};
use crate::case::CaseFilter;

/// `lkpbot digest [--print] [--json] [--date D]`: the digest of a week as
/// the lists get it, from the store, sending nothing.
pub fn digest(
    db: &Location,
    week: &crate::digest::Week,
    plan: &crate::engine::DigestPlan,
    bot: &crate::config::BotConfig,
    json: bool,
) -> Result<(), Failure> {
    let rt = runtime()?;
    let cases = rt.block_on(async {
        let store = reader(db).await?;
        let cases = store.cases(CaseFilter::All, true).await.context("cannot read the cases").map_err(Failure::runtime);
        store.close().await;
        cases
    })?;
    let model = crate::digest::model(&cases, week, plan.stale_days, &bot.archive_url, None);
    if json {
        let v = serde_json::to_value(&model).unwrap_or_default();
        return write_stdout(&format!("{v}\n"));
    }
    let subject = crate::digest::subject(&model);
    let body = crate::digest::render(&model, &bot.name, &plan.more);
    write_text(&format!("Subject: {subject}\n\n{body}"))
}
