//! `lkpbot store copy --to URL|PATH`: the store into an empty one, either
//! way between SQLite and PostgreSQL.

use super::failure::Failure;
use super::store::{open, runtime, write_stdout};
use crate::store::{Location, StoreError};

pub(super) fn copy(from: &Location, to: &str) -> Result<(), Failure> {
    let target = if to.starts_with("postgres://") || to.starts_with("postgresql://") {
        Location::postgres(to, None).map_err(|e| Failure::usage(e.into()))?
    } else {
        Location::Sqlite(to.into())
    };
    if &target == from {
        return Err(Failure::usage(anyhow::anyhow!("--to {target}: that is the store itself")));
    }
    let stats = runtime()?.block_on(async {
        let mut source = open(from).await?;
        let mut target = open(&target).await?;
        let stats = source.copy_into(&mut target).await.map_err(|e| match e {
            StoreError::NotEmpty(_) => Failure::usage(e.into()),
            e => Failure::runtime(e.into()),
        })?;
        target.close().await.map_err(|e| Failure::runtime(e.into()))?;
        Ok::<_, Failure>(stats)
    })?;
    let mut text = String::new();
    for (table, n) in stats {
        text.push_str(&format!("{table:<28}{n:>8}\n"));
    }
    write_stdout(&text)
}
