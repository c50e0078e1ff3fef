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

/// Asking in so many words: someone is to run a test.
static ASK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(",
        r"(?:could|can|would|will)\s+you(?:,?\s+please,?)?\s+(?:kindly\s+)?(?:help\s+(?:to\s+|me\s+|in\s+|with\s+)?)?(?:also\s+)?",
        r"(?:test|testing|retest|retesting|re-test|rerun|re-run|run|try|give\s+it\s+a|(?:still\s+)?reproduce)\b",
        r"|could\s+you\s+check\s+if\s+(?:the|this)\s+patch",
        r"|please\s+(?:help\s+(?:to\s+)?)?(?:test|retest|re-test|rerun|re-run|try|run)\s+(?:the|this|it|my|with|again|below|attached|following|that)\b",
        r"|please\s+(?:re-?test|re-?run)\b",
        r"|(?:mind|help)\s+(?:to\s+)?(?:test|retest|try|run|rerun|re-run)(?:ing)?\b",
        r"|mind\s+giving\s+(?:it|this|that|them|\w+(?:\s+\w+)?)\s+a\s+(?:try|test|shot|spin|go)",
        r"|(?:test|try)\s+(?:this|the\s+following|the\s+attached|my|below|the\s+below)\s+(?:patch|diff|fix|branch|version)",
        r"|give\s+(?:it|this|that|them|these|(?:the|my|our|this)\s+(?:[\w-]+\s+)?(?:patch(?:es|set)?|fix|branch|series|diff|version|tree|change))\s+a\s+(?:try|test|shot|spin|go|whirl)",
        r"|would\s+it\s+be\s+possible\s+to\s+(?:request\s+a\s+)?(?:test|run|re-?test|re-?run)",
        r"|is\s+it\s+possible\s+(?:for\s+you\s+)?to\s+(?:re-?)?(?:test|run)",
        r"|would\s+you\s+be\s+able\s+to\s+(?:re-?)?(?:test|run|try)",
        r"|if\s+you(?:\s+could|\s+can|'re\s+able\s+to|\s+are\s+able\s+to)\s+(?:re-?)?(?:test|run|try)\b",
        r"|(?:would|'d)\s+be\s+(?:nice|good|great|helpful|useful)\s+(?:if\s+you\s+could\s+|to\s+)(?:double[- ]?check|re-?test|re-?run|test|run)\b",
        r")"
    ))
    .expect("static regex")
});

/// Asking as a question or an aside ("can you check whether this fixes
/// it", "see if it helps", "try this:"): a request only with something to
/// test, in the mail or in the phrase itself.
static ASIDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?im)\b(",
        r"(?:check|see|confirm|verify)\s+(?:whether|if)\s+(?:this|it|that|these|the\s+[\w-]+(?:\s+[\w-]+)?|my\s+[\w-]+)\s+",
        r"(?:\w+\s+)?(?:fix|help|resolve|solve|cure|address|improve|recover|restore)\w*",
        r"|does\s+(?:this|it|the\s+(?:patch|fix|diff|branch))\s+(?:fix|help|resolve|solve|make)",
        r")|^\s*(?:please\s+)?try\s+(?:this|these|that|the\s+below|below)\s*(?:[:.]|$)"
    ))
    .expect("static regex")
});

/// An aside that names what to test itself.
static NAMES_A_FIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:patch(?:es|set)?|fix|diff|branch|commit|series|version)\b").expect("static regex")
});

static LORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bhttps?://(?:lore\.kernel\.org|lkml\.kernel\.org|patchwork\.kernel\.org|lkml\.org|patch\.msgid\.link)/\S+")
        .expect("static regex")
});
static GIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b((?:https?|git)://\S+?(?:\.git|/linux))/?[ \t]+([A-Za-z0-9][\w./+-]*)").expect("static regex")
});
/// A branch as a web link: `https://github.com/u/linux/tree/fix-x`,
/// `.../linux.git/log/?h=fix-x`.
static GIT_WEB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(https?://\S+?)/(?:tree|log|commits)/?(?:\?h=|\?id=\S*?&h=)?([A-Za-z0-9][\w.+-]*(?:/[\w.+-]+)*)")
        .expect("static regex")
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
    let asked = |re: &Regex| re.find_iter(own).find(|m| !is_self_offer(&own[..m.start()]));
    let targets = targets(own, attachments);
    let m = asked(&ASK).or_else(|| {
        asked(&ASIDE).filter(|m| {
            // The line the aside is on, for "the patch above fixes".
            let end = own[m.end()..].find('\n').map_or(own.len(), |i| m.end() + i);
            !targets.is_empty() || NAMES_A_FIX.is_match(&own[m.start()..end])
        })
    })?;
    let line_start = own[..m.start()].rfind('\n').map_or(0, |i| i + 1);
    let line_end = own[m.end()..].find('\n').map_or(own.len(), |i| m.end() + i);
    let phrase = own[line_start..line_end].trim().chars().take(300).collect();
    Some(TestRequest { phrase, targets })
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
    for c in GIT.captures_iter(own).chain(GIT_WEB.captures_iter(own)) {
        let (Some(url), Some(branch)) = (c.get(1), c.get(2)) else { continue };
        let value = format!("{} {}", url.as_str(), branch.as_str().trim_end_matches(['.', ',', ')']));
        if !out.iter().any(|t| t.value == value) {
            out.push(Target { kind: TargetKind::GitBranch, value });
        }
    }
    let in_links: Vec<&str> = out.iter().map(|t| t.value.as_str()).collect();
    let mut shas = Vec::new();
    // `index a1b2c3d4e5f6..f6e5d4c3b2a1 100644` in a diff names blobs, not
    // commits.
    for line in own.lines().filter(|l| !l.starts_with("index ")) {
        for m in SHA.find_iter(line) {
            if !in_links.iter().any(|l| l.contains(m.as_str())) && !shas.contains(&m.as_str()) {
                shas.push(m.as_str());
            }
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

    /// Requests phrased as questions and asides, and look-alikes that ask
    /// for nothing to be tested.
    #[test]
    fn questions_and_asides() {
        let asks = [
            "Would you mind retesting with my branch?\nhttps://github.com/someone/linux/tree/fix-stats\n",
            "Could you give this a spin?\n\ndiff --git a/x b/x\n",
            "Can you check whether this fixes it?\nhttps://lore.kernel.org/all/20990101.1234-1-a@b.c/\n",
            "Can you, please, check if the following patch resolves the regression entirely?\n\ndiff --git a/x b/x\n",
            "could you help check if the patch above fixes the issue on your end?",
            "In the meantime, Oliver, can you please help in testing this patch?",
            "Would it be possible to request a re-test with the branch:\nhttps://github.com/someone/linux fix-stats\n",
            "Oliver, would you be able to test if the attached patch helps?",
            "is it possible to rerun test with following options to further analyze it?",
            "Try this:\n\ndiff --git a/x b/x\n",
            "It would be nice to double check this on the kernel-test-robot side as\nwell, to make sure it's not a false positive.",
        ];
        for a in asks {
            assert!(extract(a, &[]).is_some(), "{a}");
        }
        let not = [
            "Can you check whether this is expected?",
            "Could you double check if anything missed in steps?",
            "I'll check whether this fixes it tomorrow.\nhttps://lore.kernel.org/all/x@y/",
            "Can you confirm if the symptoms match the original report?",
            "you could try running make.cross with URL=... to see if that works now.",
            "I will send a prototype in response on this email for which I will need your help in testing.",
        ];
        for n in not {
            assert!(extract(n, &[]).is_none(), "{n}");
        }
    }

    #[test]
    fn branches_as_web_links() {
        let t = targets("my branch https://github.com/someone/linux/tree/fix-stats please", &[]);
        assert_eq!(
            t,
            [Target { kind: TargetKind::GitBranch, value: "https://github.com/someone/linux fix-stats".into() }]
        );
        let t = targets("https://git.kernel.org/pub/scm/linux/kernel/git/x/linux.git/log/?h=for-next/core", &[]);
        assert_eq!(t[0].value, "https://git.kernel.org/pub/scm/linux/kernel/git/x/linux.git for-next/core");
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
