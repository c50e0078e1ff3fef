//! Maildir reader: every file in `new/` and `cur/`, in name order (Maildir
//! names start with the delivery time, so this is arrival order).

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
            let p = entry.path();
            if p.is_file() && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
                files.push(p);
            }
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files.into_iter().map(|p| super::read_file(&p)).filter(|r| !r.as_ref().is_ok_and(RawMessage::is_blank)))
}
