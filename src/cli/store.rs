//! What the store-backed commands share: the runtime, the store opened
//! for writing or for reading (a missing store is a usage error), and
//! stdout.

use std::io::Write;

use super::failure::Failure;
use crate::store::{Location, Reader, Store, StoreError};

pub(super) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::runtime(anyhow::Error::new(e).context("cannot start the async runtime")))
}

pub(super) async fn open(db: &Location) -> Result<Store, Failure> {
    Store::connect(db).await.map_err(|e| Failure::runtime(e.into()))
}

/// The read side of an existing store; a missing store is the user's
/// mistake (exit 1), anything else a run-time failure.
pub(super) async fn reader(db: &Location) -> Result<Reader, Failure> {
    Reader::connect(db).await.map_err(|e| match e {
        StoreError::Missing { .. } => Failure::usage(e.into()),
        e => Failure::runtime(e.into()),
    })
}

/// Human output (tables, timelines, previews): text from mail without
/// the control characters and bidi overrides that would act on the
/// terminal. JSON output keeps what was sent, escaped.
pub(super) fn write_text(text: &str) -> Result<(), Failure> {
    write_stdout(&crate::text::clean(text))
}

pub(super) fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::runtime(anyhow::Error::new(e).context("cannot write to stdout")))
        }
        _ => Ok(()),
    }
}
