//! Test requests: a human asking for a retest or for a patch to be tested,
//! whether or not the mail is addressed to the bot, and what to test.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use crate::mail::Attachment;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    LoreLink,
    InlineDiff,
    Attachment,
    GitBranch,
    Commit,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Target {
    pub kind: TargetKind,
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TestRequest {
    /// The sentence that asks.
    pub phrase: String,
    pub targets: Vec<Target>,
}

static ASK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(",
        r"(?:could|can|would|will)\s+you\s+(?:please\s+)?(?:kindly\s+)?(?:help\s+(?:to\s+|me\s+)?)?(?:also\s+)?(?:test|retest|re-test|rerun|re-run|run|try|give\s+it\s+a)\b",
        r"|could\s+you\s+check\s+if\s+(?:the|this)\s+patch",
        r"|please\s+(?:help\s+(?:to\s+)?)?(?:test|retest|re-test|rerun|re-run|try|run)\s+(?:the|this|it|my|with|again|below|attached|following|that)\b",
        r"|please\s+(?:re-?test|re-?run)\b",
        r"|(?:mind|help)\s+(?:to\s+)?(?:test|retest|try|run)(?:ing)?\b",
        r"|(?:test|try)\s+(?:this|the\s+following|the\s+attached|my|below|the\s+below)\s+(?:patch|diff|fix|branch|version)",
        r"|give\s+(?:it|this)\s+a\s+(?:try|test|shot|spin)",
        r"|would\s+it\s+be\s+possible\s+to\s+(?:test|run)",
        r")"
    ))
    .expect("static regex")
});
static LORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bhttps?://(?:lore\.kernel\.org|lkml\.kernel\.org|patchwork\.kernel\.org|lkml\.org|patch\.msgid\.link)/\S+")
        .expect("static regex")
});
static GIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b((?:https?|git)://\S+?(?:\.git|/linux))/?[ \t]+([A-Za-z0-9][\w./+-]*)").expect("static regex")
});
static SHA: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b[0-9a-f]{12,40}\b").expect("static regex"));

/// Phrases that only look like requests: the writer offering to test.
fn is_self_offer(before: &str) -> bool {
    let b = before.to_ascii_lowercase();
    let tail = b.trim_end();
    ["i can", "i will", "i'll", "let me", "i would", "i'd", "we can", "we will", "we'll"]
        .iter()
        .any(|p| tail.ends_with(p))
}

/// Reads a test request from `own` (the unquoted text, signature removed).
pub fn extract(own: &str, attachments: &[Attachment]) -> Option<TestRequest> {
    let m = ASK.find_iter(own).find(|m| !is_self_offer(&own[..m.start()]))?;
    let line_start = own[..m.start()].rfind('\n').map_or(0, |i| i + 1);
    let line_end = own[m.end()..].find('\n').map_or(own.len(), |i| m.end() + i);
    let phrase = own[line_start..line_end].trim().chars().take(300).collect();
    Some(TestRequest { phrase, targets: targets(own, attachments) })
}

/// Everything in the mail that names something to test.
pub fn targets(own: &str, attachments: &[Attachment]) -> Vec<Target> {
    let mut out = Vec::new();
    for m in LORE.find_iter(own) {
        // `http://lkml.kernel.org/r/<id@host>`: the brackets are not part
        // of the link.
        let v = m.as_str().trim_end_matches(['.', ',', ')', '>', ']']).replace(['<', '>'], "");
        out.push(Target { kind: TargetKind::LoreLink, value: v });
    }
    if own.contains("\ndiff --git ")
        || own.starts_with("diff --git ")
        || (own.contains("\n--- a/") && own.contains("\n+++ b/"))
    {
        out.push(Target { kind: TargetKind::InlineDiff, value: "inline".into() });
    }
    for a in attachments {
        let name = a.name.as_deref().unwrap_or("").to_ascii_lowercase();
        if name.ends_with(".patch")
            || name.ends_with(".diff")
            || a.content_type.contains("x-patch")
            || a.content_type.contains("x-diff")
        {
            out.push(Target {
                kind: TargetKind::Attachment,
                value: a.name.clone().unwrap_or_else(|| a.content_type.clone()),
            });
        }
    }
    for c in GIT.captures_iter(own) {
        let (Some(url), Some(branch)) = (c.get(1), c.get(2)) else { continue };
        out.push(Target { kind: TargetKind::GitBranch, value: format!("{} {}", url.as_str(), branch.as_str()) });
    }
    let in_links: Vec<&str> = out.iter().map(|t| t.value.as_str()).collect();
    let mut shas = Vec::new();
    for m in SHA.find_iter(own) {
        if !in_links.iter().any(|l| l.contains(m.as_str())) && !shas.contains(&m.as_str()) {
            shas.push(m.as_str());
        }
    }
    out.extend(shas.into_iter().take(5).map(|s| Target { kind: TargetKind::Commit, value: s.to_string() }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_and_offers() {
        let r = extract("I may find the reason. Could you test this patch on\ntop of this patchset?\n\nhttp://lkml.kernel.org/r/<1522913236-15776-1-git-send-email-x@y>\n", &[]).unwrap();
        assert!(r.phrase.starts_with("I may find the reason. Could you test"));
        assert_eq!(r.targets[0].kind, TargetKind::LoreLink);
        assert!(extract("I can test this patch tomorrow.", &[]).is_none());
        assert!(extract("Thanks for the report.", &[]).is_none());
        assert!(extract("Please retest and provide feedback.", &[]).is_some());
        let r = extract("Please try the below patch\n\ndiff --git a/x b/x\n", &[]).unwrap();
        assert_eq!(r.targets[0].kind, TargetKind::InlineDiff);
    }

    #[test]
    fn git_branch_and_sha() {
        let t = targets(
            "Can you run git://git.kernel.org/pub/scm/linux/kernel/git/x/linux.git fix-branch and 0123456789abcdef?",
            &[],
        );
        assert_eq!(t[0].kind, TargetKind::GitBranch);
        assert!(t[0].value.ends_with(" fix-branch"));
        assert_eq!(t[1], Target { kind: TargetKind::Commit, value: "0123456789abcdef".into() });
    }
}
