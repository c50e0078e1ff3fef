//! Quoted versus unquoted text.
//!
//! A reply quotes with `> `, `>>`, `> >` or `>> >>` (archives re-quote
//! already quoted text), and Outlook replies put the original below an
//! `-----Original Message-----` line without any marker. Commands count only
//! in unquoted text; a quoted report is still a report to extract.

/// Splits one line into its quote depth and its content.
///
/// Up to three leading spaces are allowed before the first `>`; spaces
/// between markers are skipped, and one space after the last marker is
/// dropped.
pub fn split_line(line: &str) -> (usize, &str) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() && i < 3 && bytes[i] == b' ' {
        i += 1;
    }
    if bytes.get(i) != Some(&b'>') {
        return (0, line);
    }
    let mut depth = 0;
    let mut last_marker_end = i;
    while i < bytes.len() {
        match bytes[i] {
            b'>' => {
                depth += 1;
                i += 1;
                last_marker_end = i;
            }
            b' ' | b'\t' => i += 1,
            _ => break,
        }
    }
    let mut rest = &line[last_marker_end..];
    if let Some(r) = rest.strip_prefix(' ') {
        rest = r;
    }
    (depth, rest)
}

fn is_outlook_separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("-----Original Message-----") || t == "________________________________"
}

/// The lines with their depth; text below an Outlook separator counts one
/// level deeper than its markers say.
pub fn lines(body: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut extra = 0;
    body.split('\n').map(move |line| {
        let (d, text) = split_line(line);
        if d == 0 && is_outlook_separator(line) {
            extra = 1;
        }
        (d + extra, text)
    })
}

/// Depth-0 lines only, joined with LF.
pub fn unquoted(body: &str) -> String {
    let mut out = String::with_capacity(body.len().min(4096));
    for (d, text) in lines(body) {
        if d == 0 {
            out.push_str(text);
            out.push('\n');
        }
    }
    out
}

/// Quoted lines only (depth >= 1), with their markers removed.
pub fn quoted(body: &str) -> String {
    let mut out = String::new();
    for (d, text) in lines(body) {
        if d > 0 {
            out.push_str(text);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths() {
        assert_eq!(split_line("plain"), (0, "plain"));
        assert_eq!(split_line("> one"), (1, "one"));
        assert_eq!(split_line(">> >>       11451  -16.1%"), (4, "      11451  -16.1%"));
        assert_eq!(split_line("> > two"), (2, "two"));
        assert_eq!(split_line(">"), (1, ""));
        assert_eq!(split_line("  > indented"), (1, "indented"));
        assert_eq!(split_line("a > b"), (0, "a > b"));
    }

    #[test]
    fn outlook_original_is_quoted() {
        let body = "fine by me\n-----Original Message-----\nFrom: x\nFYI, we noticed\n";
        assert_eq!(unquoted(body), "fine by me\n");
        assert!(quoted(body).contains("FYI, we noticed"));
    }
}
