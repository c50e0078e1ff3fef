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
    Regex::new(concat!(
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

/// ASCII case-insensitive substring search; `needle` must be lower-case.
pub fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else { return true };
    if hay.len() < needle.len() {
        return false;
    }
    let upper = first.to_ascii_uppercase();
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        match hay[i..=hay.len() - needle.len()].iter().position(|&b| b == first || b == upper) {
            None => return false,
            Some(p) => {
                let s = i + p;
                if hay[s..s + needle.len()].eq_ignore_ascii_case(needle) {
                    return true;
                }
                i = s + 1;
            }
        }
    }
    false
}

/// Lower-cased needles searched in one lower-cased copy of a text: far
/// cheaper on English prose than a multi-pattern automaton, whose
/// rare-byte prefilter finds letters everywhere. Needles that share a
/// substring can sit behind it as a gate: the text is searched for the
/// gate, and for them only where it occurs.
pub struct Needles(Vec<(memchr::memmem::Finder<'static>, Vec<memchr::memmem::Finder<'static>>)>);

impl Needles {
    /// `needles` must be lower-case.
    pub fn new(needles: &[&'static str]) -> Needles {
        Needles(needles.iter().map(|n| (memchr::memmem::Finder::new(n.as_bytes()), Vec::new())).collect())
    }

    /// Adds `needles`, each of which contains `gate`.
    pub fn gated(mut self, gate: &'static str, needles: &[&'static str]) -> Needles {
        debug_assert!(needles.iter().all(|n| n.contains(gate)), "every gated needle contains its gate");
        let finders = needles.iter().map(|n| memchr::memmem::Finder::new(n.as_bytes())).collect();
        self.0.push((memchr::memmem::Finder::new(gate.as_bytes()), finders));
        self
    }

    /// Whether any needle occurs in `lower`, a lower-cased text.
    pub fn any_in(&self, lower: &[u8]) -> bool {
        self.0.iter().any(|(first, behind)| {
            first.find(lower).is_some() && (behind.is_empty() || behind.iter().any(|f| f.find(lower).is_some()))
        })
    }
}

/// The largest char boundary of `s` at or below `i`.
pub fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The text before a `-- ` signature line.
pub fn strip_signature(text: &str) -> &str {
    match text.find("\n-- \n") {
        Some(i) => &text[..i + 1],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gated_needles_need_a_needle_not_only_the_gate() {
        let n = Needles::new(&["we noticed"]).gated("lkp", &["lkp@intel.com", "#lkp"]);
        assert!(n.any_in(b"reported-by: kernel test robot <lkp@intel.com>"));
        assert!(n.any_in(b"#lkp test"));
        assert!(n.any_in(b"hi, we noticed"));
        assert!(!n.any_in(b"the lkp-tests repository"));
        assert!(!n.any_in(b"nothing here"));
    }

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
}
