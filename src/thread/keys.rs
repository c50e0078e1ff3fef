//! The keys the ladder matches on, computed once per message: normalised
//! subjects, patch subjects without their version, commit ids, and the
//! Message-IDs inside `Closes:`/`Link:` URLs.

use crate::case::CaseFacts;
pub use crate::case::{commit_prefix, same_commit};
use crate::classify::fix::lore_message_id;
use crate::classify::subject;
pub use crate::classify::subject::strip_tags;
use crate::model::MessageId;

/// The key of the subject rung: the robot subject without prefixes and
/// tags, lower-cased, whitespace collapsed
/// (`01b9da291c: stress-ng.switch.ops_per_sec 67.7% regression`). Only
/// robot subjects (a commit id before the colon) have one: a patch subject
/// is shared by the whole patch discussion, most of which is not about the
/// report.
pub fn subject_key(subject: &str) -> Option<String> {
    subject::parse(subject).short_sha.as_ref()?;
    let key = collapse_ws_lower(strip_tags(subject));
    (key.len() >= 12).then_some(key)
}

/// The key that says "the same patch": its subject without prefixes, tags
/// and `[PATCH vN m/n]`, lower-cased. `None` for merges (every merge of a
/// branch has the same subject) and for subjects too short to mean much.
pub fn patch_key(patch_subject: &str) -> Option<String> {
    let key = collapse_ws_lower(strip_tags(patch_subject));
    let key = key.trim_matches(|c: char| c == '"' || c.is_whitespace()).to_string();
    if key.len() < 12 || key.starts_with("merge ") || key.starts_with("revert \"merge") {
        return None;
    }
    Some(key)
}

/// Message-IDs named by `Closes:` and `Link:` lines of a message's own
/// (unquoted) text.
pub fn link_ids(own_text: &str) -> Vec<MessageId> {
    let mut out: Vec<MessageId> = Vec::new();
    for line in own_text.lines() {
        let t = line.trim_start();
        let Some((tag, url)) = t.split_once(':') else { continue };
        if !(tag.eq_ignore_ascii_case("closes") || tag.eq_ignore_ascii_case("link")) {
            continue;
        }
        if let Some(id) = url.split_whitespace().next().and_then(lore_message_id)
            && !out.contains(&id)
        {
            out.push(id);
        }
    }
    out
}

/// Lower-cased, runs of whitespace made one space.
fn collapse_ws_lower(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The keys of what a message's threading depends on (the store keeps
/// them, and threads the message again when one changes): another
/// message's arrival or cases, the cases with a subject key, the cases of
/// a commit.
pub fn dep_message(id: &MessageId) -> String {
    format!("m:{id}")
}

pub fn dep_subject(subject_key: &str) -> String {
    format!("s:{subject_key}")
}

pub fn dep_commit(prefix: &str) -> String {
    format!("c:{prefix}")
}

/// A case's culprit subject and patch key, which reverts and later
/// versions of a patch look up.
pub fn dep_culprit(subject: &str) -> String {
    format!("cs:{subject}")
}

pub fn dep_patch(patch_key: &str) -> String {
    format!("pk:{patch_key}")
}

/// The end of an archive import: what an import batch woke is threaded
/// again then, once, rather than at each batch that wakes it (see
/// `engine::threading`).
pub const DEP_IMPORT_END: &str = "i:end";

/// A key some message offers (`message_keys`): whoever looked it up
/// depends on who offers it.
pub fn dep_key(key: &str) -> String {
    format!("k:{key}")
}

/// The key of the fix patches titled `patch_key`.
pub fn key_title(patch_key: &str) -> String {
    format!("t:{patch_key}")
}

/// The key of the robot report whose HyperKitty id (its Message-ID's
/// hash, `MessageId::hyperkitty_id`) is `id`: what a lists.01.org link
/// to the report's thread or message names.
pub fn key_hyperkitty(id: &str) -> String {
    crate::model::hyperkitty_key(id)
}

/// The key of the patches of the series whose cover letter is `id`.
pub fn key_cover(id: &MessageId) -> String {
    format!("r:{id}")
}

/// The title keys a pull request's `pt:` keys name.
pub fn pulled_title(pull_key: &str) -> Option<String> {
    pull_key.strip_prefix("pt:").map(key_title)
}

/// The store keys of messages whose threading a case's opening or
/// removal may change (see [`super::Incoming::dependencies`]).
pub fn case_deps(f: &CaseFacts) -> Vec<String> {
    let mut out = vec![dep_message(&f.report_message_id)];
    out.extend(f.subject_key.as_deref().map(dep_subject));
    out.extend(f.commit.as_deref().and_then(commit_prefix).map(|p| dep_commit(&p)));
    out.extend(f.commit_subject.as_deref().map(dep_culprit));
    out.extend(f.patch_key.as_deref().map(dep_patch));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subject_keys_ignore_prefixes_and_tags() {
        let report = "[linus:master] [mm]  01b9da291c: stress-ng.switch.ops_per_sec 67.7% regression";
        let key = subject_key(report).unwrap();
        assert_eq!(key, "01b9da291c: stress-ng.switch.ops_per_sec 67.7% regression");
        assert_eq!(subject_key(&format!("Re: {report}")).as_deref(), Some(key.as_str()));
        let old = "[lkp-robot] [mm/cma] 2b0f904a5a: fio.read_bw_MBps -16.1% regression";
        assert_eq!(
            subject_key(old),
            subject_key("Re: [lkp-robot] [mm/cma] 2b0f904a5a: fio.read_bw_MBps -16.1% regression")
        );
        assert_eq!(
            subject_key("[LKP] Re: [mm/mremap] ecf8443e51: x.y -29.4% regression").unwrap(),
            "ecf8443e51: x.y -29.4% regression"
        );
        assert_eq!(subject_key("Re: [PATCH v2] mm: fix the thing"), None);
    }

    #[test]
    fn patch_keys_drop_versions() {
        assert_eq!(
            patch_key("[PATCH v4 2/3] mm/cma: manage the memory"),
            patch_key("Re: [PATCH v5 2/3] mm/cma: manage the memory")
        );
        assert_eq!(patch_key("mm/cma: manage the memory").as_deref(), Some("mm/cma: manage the memory"));
        assert_eq!(patch_key("Merge branch 'for-next' of git://x"), None);
        assert_eq!(patch_key("fix"), None);
    }

    #[test]
    fn links_from_own_lines() {
        let text = "Fix it.\nReported-by: kernel test robot <lkp@intel.com>\n\
                    Closes: https://lore.kernel.org/oe-lkp/202605121641.b6a60cb0-lkp@intel.com\n\
                    Link: https://lore.kernel.org/r/abc%40host.org/\nnot a Link: line\n";
        let ids: Vec<String> = link_ids(text).iter().map(|m| m.to_string()).collect();
        assert_eq!(ids, ["202605121641.b6a60cb0-lkp@intel.com", "abc@host.org"]);
    }

    #[test]
    fn commits() {
        assert!(same_commit("01b9da291c", "01B9DA291C4969354807B52956F4AAE1F41B4924"));
        assert!(!same_commit("01b9da", "01b9da291c"));
        assert!(!same_commit("01b9da291c", "01b9da2920"));
        assert_eq!(commit_prefix("01B9DA291C").as_deref(), Some("01b9da2"));
        assert_eq!(commit_prefix("xyz"), None);
    }
}
