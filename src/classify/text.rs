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

/// The largest char boundary of `s` at or below `i`.
pub fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
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
}
