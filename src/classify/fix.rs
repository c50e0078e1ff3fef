//! Fix patches: a patch mail that names a robot report it fixes, through
//! `Closes:`/`Link:` to the report, `Reported-by: kernel test robot`, or
//! its changelog naming the robot's report; and the same patch sent inline
//! in a reply, with its own subject, commit message and tags.

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
    /// The commit message or changelog names the robot's report in words
    /// ("v2: fix the build warning reported by the kernel test robot").
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub robot_in_changelog: bool,
    /// Sent inline in a reply (after a scissors line, or as the commit a
    /// maintainer just added), not as a patch mail of its own.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub inline: bool,
}

static PATCH_TAG: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?i)\[(?:[^\]]*\s)?PATCH(?:v\d+)?\b[^\]]*\]").expect("static regex"));
static CLOSES: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?mi)^\s*(?:Closes|Link):\s*(\S+)").expect("static regex"));
static REPORTED_BY_ROBOT: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?mi)^\s*Reported-by:\s*(?:k(?:ernel|build)\s+test\s+r\w+|.*<lkp@intel\.com>)")
        .expect("static regex")
});
static FIXES: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r#"(?mi)^\s*Fixes:\s*([0-9a-f]{7,40})(?:\s*\(\s*"?(.*?)"?\s*\))?\s*$"#).expect("static regex")
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

/// Reads a fix from a patch mail. `own` is its unquoted text; `lkp` the
/// robot's and its team's addresses, which a changelog may name.
pub fn extract(subject: &str, own: &str, from_robot: bool, lkp: &[String]) -> Option<FixPosted> {
    if crate::mail::subject_is_reply(subject) || !is_patch_subject(subject) {
        return None;
    }
    read_patch(super::subject::strip_reply_prefixes(subject), own, from_robot && has_diff(own), lkp, false)
}

/// A fix sent inline in a reply: an embedded `Subject:` line (after a
/// scissors line or a `From:` line) or a `commit <sha>` / `Author:` block,
/// then a commit message naming the robot's report, then its diff.
pub fn extract_inline(own: &str, lkp: &[String]) -> Option<FixPosted> {
    let m = EMBEDDED.captures(own)?;
    let whole = m.get(0)?;
    let title = m.name("subject").map_or_else(
        || own[whole.end()..].lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").to_string(),
        |t| t.as_str().trim().to_string(),
    );
    let patch = &own[whole.start()..];
    // A quoted original message ("Subject: Re: ...") is no patch.
    if crate::mail::subject_is_reply(&title) || !has_diff(patch) && !patch.contains("\n---\n") {
        return None;
    }
    read_patch(super::subject::strip_reply_prefixes(&title), patch, false, lkp, true)
}

/// The start of a patch embedded in a reply.
static EMBEDDED: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(
        r"(?m)^(?:Subject:[ \t]*(?P<subject>.+)$|commit [0-9a-f]{40}\b.*\n(?:Merge:.*\n)?Author:.*\n(?:Date:.*\n)?)",
    )
    .expect("static regex")
});

fn read_patch(
    patch_subject: &str,
    own: &str,
    robot_generated: bool,
    lkp: &[String],
    inline: bool,
) -> Option<FixPosted> {
    // `Closes:`/`Link:`, and any other link to a report in the commit
    // message or changelog ("[1] https://lore...", "Link to report: ...").
    static URL: LazyLock<Regex> = LazyLock::new(|| crate::text::regex(r"https?://\S+").expect("static regex"));
    let before_diff = own.find("\ndiff --git ").map_or(own, |i| &own[..i]);
    let mut closes: Vec<MessageId> = Vec::new();
    for m in CLOSES.captures_iter(own).filter_map(|c| c.get(1)).chain(URL.find_iter(before_diff)) {
        if is_report_url(m.as_str())
            && let Some(id) = lore_message_id(m.as_str())
            && !closes.contains(&id)
        {
            closes.push(id);
        }
    }
    let reported_by_robot = REPORTED_BY_ROBOT.is_match(own);
    let robot_in_changelog = !reported_by_robot && closes.is_empty() && !inline && names_the_robot(own, lkp);
    if closes.is_empty() && !reported_by_robot && !robot_generated && !robot_in_changelog {
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
        patch_subject: patch_subject.to_string(),
        closes,
        reported_by_robot,
        fixes,
        robot_generated,
        robot_in_changelog,
        inline,
    })
}

/// Whether the commit message or changelog (the text before the diff)
/// names the robot or one of its people, outside `Cc:` and the other
/// address tags: "v9 - resolves two warnings issued by kernel test robot",
/// "\[oliver.sang@intel.com: reported an assertion in the previous version\]".
fn names_the_robot(own: &str, lkp: &[String]) -> bool {
    static ROBOT: LazyLock<Regex> = LazyLock::new(|| {
        crate::text::regex(r"(?i)test[- ]robot|lkp@intel\.com|\b0-?day\b|kbuild-all|oe-kbuild|oe-lkp")
            .expect("static regex")
    });
    static ADDRESS_TAG: LazyLock<Regex> = LazyLock::new(|| {
        crate::text::regex(
            r"(?i)^\s*(?:cc|to|from|signed-off-by|acked-by|reviewed-by|tested-by|co-developed-by|suggested-by):",
        )
        .expect("static regex")
    });
    let before_diff = own.find("\ndiff --git ").map_or(own, |i| &own[..i]);
    // "On ..., kernel test robot wrote:" answers the robot; it names no fix.
    let attribution = |l: &str| l.trim_end().ends_with("wrote:");
    before_diff.lines().filter(|l| !ADDRESS_TAG.is_match(l) && !attribution(l)).any(|l| {
        ROBOT.is_match(l)
            || lkp.iter().any(|a| crate::text::contains_ci(l.as_bytes(), a.to_ascii_lowercase().as_bytes()))
    })
}

/// A link to a robot report: the robot's lists, or a Message-ID the robot
/// minted (`...-lkp@intel.com`).
fn is_report_url(url: &str) -> bool {
    // The robot's Message-IDs: `202410141536.1167190b-oliver.sang@intel.com`.
    static MINTED: LazyLock<Regex> =
        LazyLock::new(|| crate::text::regex(r"/\d{12}\.[0-9a-z]{8}-[\w.-]+(?:@|%40)intel\.com").expect("static regex"));
    let u = url.to_ascii_lowercase();
    u.contains("/oe-lkp/")
        || u.contains("/oe-kbuild-all/")
        || u.contains("lkp@intel.com")
        || u.contains("lkp%40intel.com")
        || u.contains("kbuild-all")
        || MINTED.is_match(&u)
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
        let f = extract("[PATCH v2] mm: fix", own, false, &[]).unwrap();
        assert_eq!(f.closes.len(), 1);
        assert!(f.reported_by_robot);
        assert_eq!(f.fixes[0].sha, "01b9da291c49");
        assert!(extract("Re: [PATCH v2] mm: fix", own, false, &[]).is_none());
        assert!(extract("[PATCH] unrelated", "Signed-off-by: a <a@b>\n", false, &[]).is_none());
    }

    /// A report named anywhere in the commit message or cover letter, by
    /// any of the robot's Message-IDs, and `[PATCHv6 0/7]` subjects.
    #[test]
    fn report_links_outside_closes() {
        let own = "The flush is not needed here [1].\n\n\
                   [1] https://lore.kernel.org/linux-xfs/202410141536.1167190b-oliver.sang@intel.com/\n\
                   Signed-off-by: B <b@example.com>\n---\n";
        let f = extract("[PATCH] iomap: elide the flush", own, false, &[]).unwrap();
        assert_eq!(f.closes[0].as_str(), "202410141536.1167190b-oliver.sang@intel.com");
        let cover = "Link to report: https://lore.kernel.org/oe-lkp/202503041413.872983bd-lkp@intel.com/\n";
        assert_eq!(extract("[PATCHv6 0/7] block: fix lock order", cover, false, &[]).unwrap().closes.len(), 1);
        assert!(is_patch_subject("[PATCHv5 6/7] block: x"));
        // A link to a diff of the patch below names no report.
        let after =
            "Fix.\n---\ndiff --git a/x b/x\n+// https://lore.kernel.org/oe-lkp/202503041413.872983bd-lkp@intel.com/\n";
        assert!(extract("[PATCH] x: y", after, false, &[]).is_none());
    }

    /// A new version whose changelog names the robot's report is a fix; a
    /// `Cc:` to the robot alone is not.
    #[test]
    fn changelogs_naming_the_robot() {
        let lkp = ["oliver.sang@intel.com".to_string()];
        let v9 = "Add the driver.\n\nSigned-off-by: a <a@b>\n---\nv9 - resolves two warnings issued by kernel test robot\n\ndiff --git a/x b/x\n";
        assert!(extract("[PATCH v9 2/2] power: add a driver", v9, false, &lkp).unwrap().robot_in_changelog);
        let by_name = "Fix it.\n\n[oliver.sang@intel.com: reported an assertion in the previous version]\nSigned-off-by: a <a@b>\n";
        assert!(extract("[PATCH v15 4/4] xfs: x", by_name, false, &lkp).is_some());
        let cc = "Fix it.\n\nSigned-off-by: a <a@b>\nCc: kernel test robot <oliver.sang@intel.com>\n---\ndiff --git a/x b/x\n";
        assert!(extract("[PATCH v15 4/4] xfs: x", cc, false, &lkp).is_none());
        let kbuild = "kbuild: rework the build of modules\n\nSigned-off-by: a <a@b>\n";
        assert!(extract("[PATCH] kbuild: rework", kbuild, false, &lkp).is_none());
    }

    /// A fix with its commit message and tags, sent inline in a reply.
    #[test]
    fn inline_fixes() {
        let reply = "Applied the following patch.\n\nThanks.\n----- 8< -----\nFrom: A <a@b>\nDate: Sun, 4 Apr 2021\nSubject: [PATCH] cgroup: mark a stub static inline\n\nThe stub was missing static inline.\n\nReported-by: kernel test robot <lkp@intel.com>\nSigned-off-by: A <a@b>\n---\n x.h | 2 +-\n\ndiff --git a/x.h b/x.h\n";
        let f = extract_inline(reply, &[]).unwrap();
        assert_eq!(f.patch_subject, "[PATCH] cgroup: mark a stub static inline");
        assert!(f.inline && f.reported_by_robot);
        let commit = "I added a fixup now:\n\ncommit 0123456789abcdef0123456789abcdef01234567\nAuthor: A <a@b>\nDate:   Fri Feb 18 2022\n\n    sparc64: fix building assembly files\n\n    Reported-by: kernel test robot <lkp@intel.com>\n\ndiff --git a/x b/x\n";
        assert_eq!(extract_inline(commit, &[]).unwrap().patch_subject, "sparc64: fix building assembly files");
        // A diff without the report's tags is a proposal, not a fix posted.
        let bare = "Something like this?\n\nSubject: [PATCH] x: y\n\nSigned-off-by: A <a@b>\n---\ndiff --git a/x b/x\n";
        assert!(extract_inline(bare, &[]).is_none());
    }
}
