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
    /// HyperKitty ids of the robot's old lists' threads or messages its
    /// commit message links (`Link: https://lists.01.org/hyperkitty/...`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hyperkitty: Vec<String>,
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
/// (A lists.01.org HyperKitty URL names its list with an `@` too, and no
/// Message-ID: see [`hyperkitty_links`].)
pub fn lore_message_id(url: &str) -> Option<MessageId> {
    let url = url.trim().trim_end_matches(['.', ',', ')', '>']);
    let path = url.split_once("://").map_or(url, |(_, p)| p);
    if path.to_ascii_lowercase().contains("/hyperkitty/") {
        return None;
    }
    path.split('/')
        .skip(1)
        .find(|seg| seg.contains('@') || seg.contains("%40"))
        .map(|seg| seg.trim_start_matches('<'))
        .and_then(MessageId::from_url_segment)
}

/// A link into the lists.01.org HyperKitty archive, where the robot's
/// reports were until 2022:
/// `https://lists.01.org/hyperkitty/list/lkp@lists.01.org/thread/<ID>/`
/// (or `.../message/<ID>/`). The ID is HyperKitty's hash of a Message-ID
/// (`MessageId::hyperkitty_id`): of the thread's first message for a
/// thread, of the message itself for a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyperkittyLink {
    /// The list, `lkp@lists.01.org`.
    pub list: String,
    pub id: String,
}

impl HyperkittyLink {
    /// On one of the robot's own lists (`lkp@`, `kbuild-all@`).
    pub fn on_robot_list(&self) -> bool {
        let l = self.list.to_ascii_lowercase();
        l.starts_with("lkp@") || l.starts_with("kbuild-all@") || l.starts_with("kbuild@")
    }
}

/// The HyperKitty links in `text`, each once, in order: with or without
/// the scheme and the trailing slash, and wrapped across lines (a
/// continuation line's indent and quote markers, `> `, are skipped).
pub fn hyperkitty_links(text: &str) -> Vec<HyperkittyLink> {
    const PATH: &str = "lists.01.org/hyperkitty/list/";
    let mut out: Vec<HyperkittyLink> = Vec::new();
    if !crate::text::contains_ci(text.as_bytes(), b"hyperkitty") {
        return out;
    }
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(PATH) {
        let start = from + i + PATH.len();
        from = start;
        if let Some(link) = read_hyperkitty(&text[start..])
            && !out.contains(&link)
        {
            out.push(link);
        }
    }
    out
}

/// `<list>/thread|message/<ID>` at the start of `rest`, lines joined.
fn read_hyperkitty(rest: &str) -> Option<HyperkittyLink> {
    // The URL's characters, a line break and what starts the next line
    // (indent, quote markers) skipped; `breaks` says where one was.
    let mut url = String::new();
    let mut breaks: Vec<usize> = Vec::new();
    let mut chars = rest.chars().peekable();
    while url.len() < 160 {
        match chars.next() {
            Some('\r') => {}
            Some('\n') => {
                while chars.next_if(|c| matches!(c, ' ' | '\t' | '>')).is_some() {}
                breaks.push(url.len());
            }
            Some(c) if c.is_whitespace() || matches!(c, '<' | '>' | '"' | ')') => break,
            Some(c) => url.push(c),
            None => break,
        }
    }
    let (list, rest) = url.split_once('/')?;
    let (kind, id) = rest.split_once('/')?;
    if list.is_empty() || !(kind.eq_ignore_ascii_case("thread") || kind.eq_ignore_ascii_case("message")) {
        return None;
    }
    let id_at = list.len() + kind.len() + 2;
    let id: String = id.chars().take(32).take_while(|c| c.is_ascii_uppercase() || ('2'..='7').contains(c)).collect();
    // 32 characters, then the URL ends (or its line does).
    let end = id_at + id.len();
    let ends = url[end..].chars().next().is_none_or(|c| !c.is_ascii_alphanumeric()) || breaks.contains(&end);
    (id.len() == 32 && ends).then(|| HyperkittyLink { list: list.to_string(), id })
}

pub fn is_patch_subject(subject: &str) -> bool {
    PATCH_TAG.is_match(subject)
}

/// The text of a patch mail before its diff: the commit message and the
/// changelog.
pub fn before_diff(text: &str) -> &str {
    text.find("\ndiff --git ").map_or(text, |i| &text[..i])
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
    let before_diff = before_diff(own);
    let mut closes: Vec<MessageId> = Vec::new();
    for m in CLOSES.captures_iter(own).filter_map(|c| c.get(1)).chain(URL.find_iter(before_diff)) {
        if is_report_url(m.as_str())
            && let Some(id) = lore_message_id(m.as_str())
            && !closes.contains(&id)
        {
            closes.push(id);
        }
    }
    let hyperkitty: Vec<String> =
        hyperkitty_links(before_diff).into_iter().filter(HyperkittyLink::on_robot_list).map(|l| l.id).collect();
    let linked = !closes.is_empty() || !hyperkitty.is_empty();
    let reported_by_robot = REPORTED_BY_ROBOT.is_match(own);
    let robot_in_changelog = !reported_by_robot && !linked && !inline && names_the_robot(own, lkp);
    if !linked && !reported_by_robot && !robot_generated && !robot_in_changelog {
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
        hyperkitty,
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
    let before_diff = before_diff(own);
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

    /// lists.01.org links as kernel commits of 2019-2022 carry them:
    /// `Link:` trailers, a thread or a message, with or without the
    /// scheme and slash, wrapped by a mail client, quoted.
    #[test]
    fn hyperkitty_links_in_text() {
        const A: &str = "VMDYQRH3JWQY2SLZ46RQ5EJAXIE2BK6O";
        const B: &str = "2AZYWIZED4JE6LED7JXVQIMSAA437BO3";
        let ids = |t: &str| hyperkitty_links(t).into_iter().map(|l| (l.list, l.id)).collect::<Vec<_>>();
        let lkp = |id: &str| ("lkp@lists.01.org".to_string(), id.to_string());
        assert_eq!(
            ids(&format!("Link: https://lists.01.org/hyperkitty/list/lkp@lists.01.org/thread/{A}/\n")),
            [lkp(A)]
        );
        assert_eq!(ids(&format!("see lists.01.org/hyperkitty/list/lkp@lists.01.org/message/{A}.")), [lkp(A)]);
        let wrapped = format!(
            "Link:\n https://lists.01.org/hyperkitty/list/kbuild-all@lists.01.org/thread/\n {}\n{}/\nSigned-off-by: A\n",
            &A[..10],
            &A[10..]
        );
        assert_eq!(ids(&wrapped), [("kbuild-all@lists.01.org".to_string(), A.to_string())]);
        // A link ending its line without a slash, the next line not joined on.
        let quoted = format!(
            "> Link: https://lists.01.org/hyperkitty/list/lkp@lists.01.org/\n> thread/{A}\n> Signed-off-by: A\n\
             <https://lists.01.org/hyperkitty/list/lkp@lists.01.org/message/{B}/>\n"
        );
        assert_eq!(ids(&quoted), [lkp(A), lkp(B)]);
        // The list's page (the robot's footer), a short or long id, a
        // lower-case one, another archive: no link.
        for t in [
            "https://lists.01.org/hyperkitty/list/kbuild-all@lists.01.org Intel Corporation\n",
            &format!("https://lists.01.org/hyperkitty/list/lkp@lists.01.org/thread/{}/", &A[..31]),
            &format!("https://lists.01.org/hyperkitty/list/lkp@lists.01.org/thread/{A}A/"),
            &format!("https://lists.01.org/hyperkitty/list/lkp@lists.01.org/thread/{}/", A.to_lowercase()),
            &format!("https://lists.01.org/hyperkitty/list/lkp@lists.01.org/search/{A}/"),
            "https://lore.kernel.org/oe-lkp/202606011200.eeee0001-lkp@intel.com/",
        ] {
            assert!(ids(t).is_empty(), "{t}");
        }
        // Not a lore link to `lkp@lists.01.org` either.
        assert!(
            lore_message_id(&format!("https://lists.01.org/hyperkitty/list/lkp@lists.01.org/thread/{A}/")).is_none()
        );
    }

    /// A patch linking the robot's old lists is a fix; a link to another
    /// list's thread is not enough.
    #[test]
    fn fixes_linking_the_old_archive() {
        const A: &str = "VMDYQRH3JWQY2SLZ46RQ5EJAXIE2BK6O";
        let own = |list: &str| {
            format!(
                "Take the lock first.\n\nLink: https://lists.01.org/hyperkitty/list/{list}/thread/{A}/\n\
                 Signed-off-by: A <a@example.org>\n---\ndiff --git a/x b/x\n"
            )
        };
        let f = extract("[PATCH] mm: take the lock", &own("lkp@lists.01.org"), false, &[]).unwrap();
        assert_eq!((f.hyperkitty, f.closes), (vec![A.to_string()], vec![]));
        assert!(extract("[PATCH] mm: take the lock", &own("linux-nvdimm@lists.01.org"), false, &[]).is_none());
    }
}
