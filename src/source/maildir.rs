//! Maildir reader: every file in `new/` and `cur/`, in name order (Maildir
//! names start with the delivery time, so this is arrival order). Every
//! entry but dot files is taken for a message: one that cannot be read (a
//! dangling link, a directory) is reported as a per-message error, never
//! skipped in silence and never the end of the rest.

use std::path::{Path, PathBuf};

use super::{RawMessage, SourceError};

pub fn is_maildir(path: &Path) -> bool {
    path.join("cur").is_dir() && path.join("new").is_dir()
}

pub fn read(path: &Path) -> Result<impl Iterator<Item = Result<RawMessage, SourceError>> + use<>, SourceError> {
    let mut files: Vec<PathBuf> = Vec::new();
    for sub in ["new", "cur"] {
        let dir = path.join(sub);
        let entries = std::fs::read_dir(&dir).map_err(|e| SourceError::Open { path: dir.clone(), source: e })?;
        for entry in entries {
            let entry = entry.map_err(|e| SourceError::Read { path: dir.clone(), source: e })?;
            if !entry.file_name().to_string_lossy().starts_with('.') {
                files.push(entry.path());
            }
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files
        .into_iter()
        .map(|p| super::read_file(&p).map_err(|e| SourceError::Message { path: p, source: e }))
        .filter(|r| !r.as_ref().is_ok_and(RawMessage::is_blank)))
}
