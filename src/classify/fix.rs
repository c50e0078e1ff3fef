//! Fix patches: a patch mail that names a robot report it fixes, through
//! `Closes:`/`Link:` to the report or `Reported-by: kernel test robot`.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use crate::model::MessageId;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FixRef {
    pub sha: String,
    pub subject: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FixPosted {
    /// The patch subject, reply prefixes removed.
    pub patch_subject: String,
    /// Message-IDs named by `Closes:` and `Link:` URLs.
    pub closes: Vec<MessageId>,
    pub reported_by_robot: bool,
    /// `Fixes: <sha> ("subject")` tags.
    pub fixes: Vec<FixRef>,
    /// True for the robot's own generated patches (`... can be static`).
    pub robot_generated: bool,
}

static PATCH_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\[(?:[^\]]*\s)?PATCH\b[^\]]*\]").expect("static regex"));
static CLOSES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?mi)^\s*(?:Closes|Link):\s*(\S+)").expect("static regex"));
static REPORTED_BY_ROBOT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?mi)^\s*Reported-by:\s*(?:k(?:ernel|build)\s+test\s+r\w+|.*<lkp@intel\.com>)").expect("static regex")
});
static FIXES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?mi)^\s*Fixes:\s*([0-9a-f]{7,40})(?:\s*\(\s*"?(.*?)"?\s*\))?\s*$"#).expect("static regex")
});

/// The Message-ID inside a lore-style URL:
/// `https://lore.kernel.org/oe-lkp/202605121641.b6a60cb0-lkp@intel.com/`.
pub fn lore_message_id(url: &str) -> Option<MessageId> {
    let url = url.trim().trim_end_matches(['.', ',', ')', '>']);
    let path = url.split_once("://").map_or(url, |(_, p)| p);
    path.split('/')
        .skip(1)
        .find(|seg| seg.contains('@') || seg.contains("%40"))
        .map(|seg| seg.trim_start_matches('<'))
        .and_then(MessageId::from_url_segment)
}

pub fn is_patch_subject(subject: &str) -> bool {
    PATCH_TAG.is_match(subject)
}

pub fn has_diff(text: &str) -> bool {
    text.contains("\ndiff --git ") || (text.contains("\n--- a/") && text.contains("\n+++ b/"))
}

/// Reads a fix from a patch mail. `own` is its unquoted text.
pub fn extract(subject: &str, own: &str, from_robot: bool) -> Option<FixPosted> {
    if crate::mail::subject_is_reply(subject) || !is_patch_subject(subject) {
        return None;
    }
    let closes: Vec<MessageId> = CLOSES
        .captures_iter(own)
        .filter_map(|c| c.get(1))
        .filter(|m| is_report_url(m.as_str()))
        .filter_map(|m| lore_message_id(m.as_str()))
        .collect();
    let reported_by_robot = REPORTED_BY_ROBOT.is_match(own);
    let robot_generated = from_robot && has_diff(own);
    if closes.is_empty() && !reported_by_robot && !robot_generated {
        return None;
    }
    let fixes = FIXES
        .captures_iter(own)
        .filter_map(|c| {
            Some(FixRef {
                sha: c.get(1)?.as_str().to_string(),
                subject: c.get(2).map(|m| m.as_str().to_string()).filter(|s| !s.is_empty()),
            })
        })
        .collect();
    Some(FixPosted {
        patch_subject: super::subject::strip_reply_prefixes(subject).to_string(),
        closes,
        reported_by_robot,
        fixes,
        robot_generated,
    })
}

/// A link to a robot report: the robot's lists, or a Message-ID the robot
/// minted (`...-lkp@intel.com`).
fn is_report_url(url: &str) -> bool {
    let u = url.to_ascii_lowercase();
    u.contains("/oe-lkp/")
        || u.contains("/oe-kbuild-all/")
        || u.contains("lkp@intel.com")
        || u.contains("lkp%40intel.com")
        || u.contains("kbuild-all")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lore_ids() {
        assert_eq!(
            lore_message_id("https://lore.kernel.org/oe-lkp/202605121641.b6a60cb0-lkp@intel.com/").unwrap().as_str(),
            "202605121641.b6a60cb0-lkp@intel.com"
        );
        assert_eq!(lore_message_id("https://lore.kernel.org/r/a%40b.c").unwrap().as_str(), "a@b.c");
        assert!(lore_message_id("https://lore.kernel.org/oe-lkp/").is_none());
    }

    #[test]
    fn fix_patch() {
        let own = "Fix it.\n\nFixes: 01b9da291c49 (\"mm: x\")\nReported-by: kernel test robot <oliver.sang@intel.com>\n\
                   Closes: https://lore.kernel.org/oe-lkp/202605121641.b6a60cb0-lkp@intel.com\n---\n";
        let f = extract("[PATCH v2] mm: fix", own, false).unwrap();
        assert_eq!(f.closes.len(), 1);
        assert!(f.reported_by_robot);
        assert_eq!(f.fixes[0].sha, "01b9da291c49");
        assert!(extract("Re: [PATCH v2] mm: fix", own, false).is_none());
        assert!(extract("[PATCH] unrelated", "Signed-off-by: a <a@b>\n", false).is_none());
    }
}
