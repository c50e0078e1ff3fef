//! `lkpbot cases` and `lkpbot case`: the read side of the store, as a
//! table, a timeline or JSON. A missing store is a usage error (exit 1),
//! and nothing is created.

use crate::store::Location;

use anyhow::Context;

use super::failure::Failure;
use super::store::{reader, runtime, write_stdout, write_text};
use crate::case::{CaseFilter, CaseId};
use crate::view;
use crate::web::list;

fn parse_filter(state: &str) -> Result<CaseFilter, Failure> {
    CaseFilter::parse(state).map_err(|e| Failure::usage(anyhow::anyhow!(e)))
}

/// `lkpbot cases [--json] [--state S] [--sort S]`: in the order the
/// web's list takes the same `sort` in, else by id.
pub fn list(
    db: &Location,
    state: &str,
    sort: Option<&str>,
    json: bool,
    now: i64,
    archive_url: &str,
) -> Result<(), Failure> {
    let filter = parse_filter(state)?;
    let order = match sort {
        None => None,
        Some(s) => {
            let p = list::Params { state: Some(state.into()), sort: Some(s.into()), ..list::Params::default() };
            Some(list::Query::parse(p).map_err(|e| Failure::usage(anyhow::anyhow!("--sort: {e}")))?)
        }
    };
    let rt = runtime()?;
    let cases = rt.block_on(async {
        let store = reader(db).await?;
        let cases = store.cases(filter, json).await.context("cannot list cases").map_err(Failure::runtime);
        store.close().await;
        cases
    })?;
    let cases = match &order {
        Some(q) => list::select(&cases, q, now).into_iter().cloned().collect(),
        None => cases,
    };
    if json {
        let all: Vec<serde_json::Value> = cases.iter().map(|c| view::case_json(c, archive_url)).collect();
        write_stdout(&format!("{}\n", serde_json::Value::Array(all)))
    } else {
        write_text(&view::cases_table(&cases, now))
    }
}

/// `lkpbot case ID [--json]`
pub fn show(db: &Location, id: i64, json: bool, now: i64, archive_url: &str) -> Result<(), Failure> {
    let rt = runtime()?;
    let case = rt.block_on(async {
        let store = reader(db).await?;
        let case = store.case(CaseId(id)).await.context("cannot read the case").map_err(Failure::runtime);
        store.close().await;
        case
    })?;
    let Some(case) = case else {
        return Err(Failure::usage(anyhow::anyhow!("no case {id}")));
    };
    if json {
        write_stdout(&format!("{}\n", view::case_json(&case, archive_url)))
    } else {
        write_text(&view::case_timeline(&case, now, archive_url))
    }
}
