//! Text clean-up shared by the extractors.

use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

pub fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Report markers before which a flattened report gets its line breaks
/// back. Each starts a line in every template era.
static MARKERS: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(concat!(
        r"(commit: |url: |base: |patch link: |patch subject: |in testcase: |testcase: |on test machine: |",
        r"test machine: |with following parameters: |parameters: |test-description: |test-url: |",
        r"config: |compiler: |If you fix the issue|\| Reported-by: |\| Closes: |\| Link: |Reported-by: |",
        r"Details are as below|To reproduce:|The kernel config and materials|={20,} |[a-z_]+(?:/[a-z_]+){2,}: |",
        r"Disclaimer:|\[still regression on |\[test failed on |https://git\.kernel\.org/\S+ \S+ )"
    ))
    .expect("static regex")
});

/// Lines longer than this that carry a report marker were flattened.
const FLAT_LINE: usize = 600;

/// Restores line breaks in a report that an archive flattened onto one
/// line, so line-anchored extraction works. Tables need no help: they are
/// read as tokens.
pub fn unflatten(text: &str) -> Cow<'_, str> {
    if !text.split('\n').any(|l| l.len() > FLAT_LINE && MARKERS.is_match(l)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 256);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.len() <= FLAT_LINE {
            out.push_str(line);
            continue;
        }
        let mut last = 0;
        for m in MARKERS.find_iter(line) {
            // Only at a word start; the space before the marker becomes
            // the line break.
            if m.start() == 0 || line.as_bytes()[m.start() - 1] != b' ' {
                continue;
            }
            out.push_str(&line[last..m.start() - 1]);
            out.push('\n');
            last = m.start();
        }
        out.push_str(&line[last..]);
    }
    Cow::Owned(out)
}

/// The largest char boundary of `s` at or below `i`.
pub fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One sentence of a mail's own prose, its lines joined by spaces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sentence {
    pub text: String,
    /// Byte offset of its first line in the text it was read from.
    pub start: usize,
}

/// Lines that are not prose: a diff's lines, a diffstat, a kernel log
/// line, a shell prompt.
fn is_code_line(l: &str) -> bool {
    let t = l.trim_start();
    t.starts_with('[')
        && t[1..]
            .trim_start()
            .split(']')
            .next()
            .is_some_and(|ts| ts.contains('.') && ts.trim().chars().all(|c| c.is_ascii_digit() || c == '.'))
        || t.starts_with("# ")
        || t.starts_with("$ ")
        || t.starts_with("/*")
        || t.starts_with("*/")
        || t.starts_with("* ")
        || t.starts_with("//")
        || t.starts_with("#include")
        || t.starts_with("#define")
        || t.starts_with("#if")
        || t.ends_with([';', '{', '}'])
        || (l.starts_with(' ') && t.contains(" | ") && t.ends_with(['+', '-']))
}

fn starts_diff(l: &str) -> bool {
    l.starts_with("diff --git ") || l.starts_with("--- a/") || l.starts_with("Index: ") || l.starts_with("@@ ")
}

fn in_diff(l: &str) -> bool {
    l.starts_with(['+', '-', ' ', '@', '\\'])
        || l.starts_with("index ")
        || l.starts_with("new file")
        || l.starts_with("deleted file")
        || l.starts_with("similarity")
        || l.starts_with("rename ")
        || starts_diff(l)
}

/// Whether the word before a full stop is an initial or an abbreviation
/// ("Darrick J. Wong", "e.g. this"), which ends no sentence.
fn is_abbreviation(before: &str) -> bool {
    let word = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("");
    let initial = word.len() == 1 && word.chars().all(|c| c.is_ascii_uppercase());
    initial
        || ["e.g", "i.e", "etc", "vs", "mr", "dr", "al", "approx", "cf", "resp", "no", "fig"]
            .iter()
            .any(|a| word.eq_ignore_ascii_case(a))
}

/// The sentences of `text` (a mail's unquoted text), diffs, diffstats and
/// kernel log lines left out: what the writer says, one sentence at a
/// time. A line ending with a colon ends a sentence ("Try this:").
pub fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    let mut diff = false;
    let mut offset = 0;
    let flush = |cur: &mut String, start: usize, out: &mut Vec<Sentence>| {
        let t = cur.trim();
        if !t.is_empty() {
            out.push(Sentence { text: t.to_string(), start });
        }
        cur.clear();
    };
    for line in text.split_inclusive('\n') {
        let here = offset;
        offset += line.len();
        let l = line.trim_end_matches(['\n', '\r']);
        if diff && in_diff(l) {
            continue;
        }
        diff = starts_diff(l);
        if diff || l.trim().is_empty() || is_code_line(l) {
            flush(&mut cur, start, &mut out);
            continue;
        }
        let mut rest = l.trim();
        let mut at = here + (l.len() - l.trim_start().len());
        while !rest.is_empty() {
            if cur.is_empty() {
                start = at;
            } else {
                cur.push(' ');
            }
            // A sentence ends at . ? ! followed by a blank, or at the end
            // of a line ending with one of them or a colon.
            let cut = rest
                .char_indices()
                .find(|&(i, c)| {
                    matches!(c, '。' | '！' | '？')
                        || matches!(c, '.' | '?' | '!')
                            && rest[i + c.len_utf8()..].starts_with(char::is_whitespace)
                            && !(c == '.' && is_abbreviation(&rest[..i]))
                })
                .map(|(i, c)| i + c.len_utf8());
            match cut {
                Some(i) => {
                    cur.push_str(&rest[..i]);
                    flush(&mut cur, start, &mut out);
                    let skipped = rest[i..].len() - rest[i..].trim_start().len();
                    at += i + skipped;
                    rest = rest[i..].trim_start();
                }
                None => {
                    cur.push_str(rest);
                    let initial = rest.ends_with('.') && is_abbreviation(&rest[..rest.len() - 1]);
                    if rest.ends_with(['.', '?', '!', ':']) && !initial {
                        flush(&mut cur, start, &mut out);
                    }
                    rest = "";
                }
            }
        }
    }
    flush(&mut cur, start, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unflattens_only_long_report_lines() {
        assert!(matches!(unflatten("short commit: x"), Cow::Borrowed(_)));
        let flat = format!(
            "Hello, FYI, we noticed a -3.4% regression of m due to commit: commit: 7e12beb8ca2ac98b2ec42e0ea4b76cdc93b58654 (\"x\") in testcase: vm-scalability on test machine: 96 threads {}",
            "pad ".repeat(200)
        );
        let u = unflatten(&flat);
        assert!(u.contains("\ncommit: 7e12beb8ca"));
        assert!(u.contains("\nin testcase: vm-scalability"));
        assert!(u.contains("\non test machine: 96 threads"));
    }

    #[test]
    fn sentences_skip_diffs_and_logs() {
        let initials = sentences("On Mon, Darrick J.\nWong wrote:\n\nOk, e.g. this one. Fine.");
        assert_eq!(initials[0].text, "On Mon, Darrick J. Wong wrote:");
        assert_eq!(initials[1].text, "Ok, e.g. this one.");
        let text = "Hi Oliver,\n\nThe fix is below. Can you\ntest it? Try this:\n\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\n[   12.345678] BUG: x\nThanks\n";
        let s: Vec<String> = sentences(text).into_iter().map(|s| s.text).collect();
        assert_eq!(s, ["Hi Oliver,", "The fix is below.", "Can you test it?", "Try this:", "Thanks"]);
        let first = &sentences(text)[2];
        assert_eq!(&text[first.start..first.start + 7], "Can you");
    }
}
