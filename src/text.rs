//! Text searching shared by the pure stages that read mail bodies
//! (`classify`, `commands`): their patterns built small, with bounded caches
//! ([`regex()`]), case-insensitive needles over bytes, the signature
//! cut; cutting text to a width for what the bot shows; and [`clean`],
//! which every edge that shows text taken from mail (the bot's mail, the
//! web pages, the CLI's human output) applies. No domain knowledge lives
//! here. Pure.

/// The lazy DFA's cache of one pattern in one thread, at most: the
/// regex crate's default is 2 MiB, and the classifier's hundred-odd
/// patterns in three threads grew those caches to most of an import's
/// memory. A pattern that outgrows it is searched more slowly (the cache
/// is cleared, or another engine runs), never differently. Below 64 KiB
/// the classifier gets no smaller and no faster.
const DFA_CACHE: usize = 64 << 10;

/// `Regex::new` for the pure stages' patterns, with the smaller DFA cache
/// (`DFA_CACHE`) and small classes ([`small_classes`]).
pub fn regex(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(&small_classes(pattern)).dfa_size_limit(DFA_CACHE).build()
}

/// What `\w` means in [`regex()`]'s patterns: an ASCII word character or
/// any non-ASCII character (in mail, nearly always a letter of a name:
/// "Zoë" stays one word).
const WORD: &str = r"[:word:]\x{80}-\x{10FFFF}";
/// What `\s` means: ASCII white space or the no-break space mail clients
/// put between words.
const SPACE: &str = r"[:space:]\x{A0}";
/// What `\d` means: an ASCII digit.
const DIGIT: &str = "[:digit:]";

/// `pattern` with its Perl classes and word boundaries made small: `\w`
/// `\s` `\d` (and `\W` `\S` `\D`) become `WORD`, `SPACE` and `DIGIT`
/// (or their negations), and `\b` `\B` ASCII word boundaries. Unicode's
/// `\w` compiles to hundreds of automaton states, and a pattern holds one
/// copy per `\w`, which every thread's search cache then sizes itself to;
/// a Unicode `\b` makes the fast engine give up on any non-ASCII mail.
/// With these the classifier's patterns take a fraction of their memory,
/// and it reads the corpus and the cgroups list exactly as before.
pub fn small_classes(pattern: &str) -> String {
    let pattern = word_out_of_classes(pattern);
    let mut out = String::with_capacity(pattern.len() + 32);
    let mut chars = pattern.chars().peekable();
    // How deep in bracket classes (`[a[:word:]]` nests).
    let mut class = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    out.push(c);
                    break;
                };
                let set = match e.to_ascii_lowercase() {
                    'w' => Some(WORD),
                    's' => Some(SPACE),
                    'd' => Some(DIGIT),
                    _ => None,
                };
                match (set, e.is_ascii_lowercase(), class > 0) {
                    (Some(set), true, true) => out.push_str(set),
                    // The classes are closed under case folding, so `(?-i)`
                    // changes nothing they match; it spares `(?i)` patterns
                    // folding `WORD`'s million non-ASCII characters one by
                    // one when they are compiled.
                    (Some(set), true, false) => out.push_str(&format!("(?-i:[{set}])")),
                    (Some(set), false, false) => out.push_str(&format!("(?-i:[^{set}])")),
                    _ if class == 0 && (e == 'b' || e == 'B') && chars.peek() != Some(&'{') => {
                        out.push_str(&format!("(?-u:\\{e})"))
                    }
                    _ => {
                        out.push(c);
                        out.push(e);
                    }
                }
            }
            '[' => {
                out.push(c);
                if chars.peek() == Some(&':') && class > 0 {
                    // A POSIX class inside a bracket class: copied whole.
                    for p in chars.by_ref() {
                        out.push(p);
                        if p == ']' {
                            break;
                        }
                    }
                    continue;
                }
                class += 1;
                // `]` or `^]` first in a class is a literal.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if class > 0 => {
                class -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// `pattern` with `\w` taken out of plain bracket classes: `[\w.-]`
/// becomes `(?:\w|[.-])`, which matches the same. Inside a class `\w`
/// cannot be kept out of a `(?i)` pattern's case folding, which walks
/// `WORD`'s non-ASCII range one character at a time when the pattern is
/// compiled; on its own [`small_classes`] compiles it with `(?-i)`.
/// Negated classes, classes with nested classes and classes with set
/// operations (`&&`, `--`, `~~`) stay as they are.
fn word_out_of_classes(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains("\\w") {
        return pattern.into();
    }
    let b = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len() + 16);
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'[' => {
                // The class's body, if it is a plain one: no negation, no
                // literal `]` first, no nested class.
                let mut j = i + 1;
                let plain = !matches!(b.get(j), Some(b'^' | b']'));
                while j < b.len() && b[j] != b']' && b[j] != b'[' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if !plain || b.get(j) != Some(&b']') {
                    // Not a plain class: copied as it is, up to its end.
                    i = skip_class(b, i);
                    continue;
                }
                let body = &pattern[i + 1..j];
                let rest = body.replace("\\w", "");
                if rest.len() == body.len() || ["&&", "--", "~~"].iter().any(|op| body.contains(op)) {
                    i = j + 1;
                    continue;
                }
                out.push_str(&pattern[copied..i]);
                match rest.as_str() {
                    "" => out.push_str("(?:\\w)"),
                    r => {
                        let caret = if r.starts_with('^') { "\\" } else { "" };
                        out.push_str(&format!("(?:\\w|[{caret}{r}])"));
                    }
                }
                i = j + 1;
                copied = i;
            }
            _ => i += 1,
        }
    }
    if copied == 0 {
        return pattern.into();
    }
    out.push_str(&pattern[copied..]);
    out.into()
}

/// The index just past the bracket class that starts at `b[start]`
/// (nested classes and escapes included), or the end of `b`.
fn skip_class(b: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' => {
                depth += 1;
                // `]` first in a class (or after `^`) is a literal.
                if b.get(i + 1) == Some(&b'^') {
                    i += 1;
                }
                if b.get(i + 1) == Some(&b']') {
                    i += 1;
                }
            }
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Whether a case-insensitive pattern that needs one of `words` (ASCII,
/// lower-case) somewhere could match `text`: a gate in front of costlier
/// patterns. Under `(?i)` "k" also matches the Kelvin sign and "s" the
/// long s, so a text with either passes whatever it says.
pub fn may_contain_ci(text: &str, words: &[&str]) -> bool {
    words.iter().any(|w| contains_ci(text.as_bytes(), w.as_bytes())) || has_folding_letters(text)
}

/// Whether `text` has a Kelvin sign or a long s, which `(?i)` takes for
/// "k" and "s": a word gate in front of a case-insensitive pattern lets
/// such a text through. Two vectorised searches, on non-ASCII text only.
pub fn has_folding_letters(text: &str) -> bool {
    !text.is_ascii()
        && (memchr::memmem::find(text.as_bytes(), "\u{212A}".as_bytes()).is_some()
            || memchr::memmem::find(text.as_bytes(), "\u{17F}".as_bytes()).is_some())
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
        // The first byte either way, found by a vectorised search.
        match memchr::memchr2(first, upper, &hay[i..=hay.len() - needle.len()]) {
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

/// The text before a `-- ` signature line.
pub fn strip_signature(text: &str) -> &str {
    match text.find("\n-- \n") {
        Some(i) => &text[..i + 1],
        None => text,
    }
}

/// `s` in at most `width` characters, `...` marking a cut.
pub fn cut(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(3)).collect();
    out.push_str("...");
    out
}

/// Whether `c` must not reach a reader: C0 controls but tab and newline,
/// DEL, C1 controls, and the bidi overrides and isolates that make text
/// read other than it is (U+202A-U+202E, U+2066-U+2069).
fn is_unsafe(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` without control characters (except tab and newline) and bidi
/// overrides: text taken from mail, safe to write to a terminal, a page
/// or a mail. Borrowed when there is nothing to remove, as is usual.
pub fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    // Every character `is_unsafe` names is an ASCII control or DEL, or
    // starts with byte 0xC2 (C1) or 0xE2 (the bidi controls) in UTF-8: a
    // byte scan rules them out for most text (a whole page) without
    // decoding it.
    let maybe = |b: &u8| matches!(b, 0..=0x08 | 0x0b..=0x1f | 0x7f | 0xc2 | 0xe2);
    if s.as_bytes().iter().any(maybe) && s.chars().any(is_unsafe) {
        std::borrow::Cow::Owned(s.chars().filter(|&c| !is_unsafe(c)).collect())
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The Levenshtein distance of two strings, by characters: how many
/// letters to insert, delete or change to make one the other (a typo of
/// a command, of the robot's name).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {

    /// Either case of the first byte, a match at either end, a needle
    /// longer than the rest of the text, a non-letter first byte.
    #[test]
    fn case_insensitive_search() {
        assert!(contains_ci(b"Tested-By: x", b"tested-by"));
        assert!(contains_ci(b"the robot said PERF REGRESSION", b"perf regression"));
        assert!(contains_ci(b"xxtTESTED", b"tested"));
        assert!(contains_ci(b"a [PATCH v2] b", b"[patch v2]"));
        assert!(contains_ci(b"anything", b""));
        assert!(!contains_ci(b"test", b"tested"));
        assert!(!contains_ci(b"t e s t e d", b"tested"));
        assert!(!contains_ci(b"tested-bx", b"tested-by"));
        assert!(!contains_ci(b"", b"a"));
        // Short and long texts alike.
        for pad in [0, 40] {
            let hay = |s: &str| format!("{}{s}", "_".repeat(pad)).into_bytes();
            assert!(contains_ci(&hay("Oliver.Sang@LKP.intel.com"), b"lkp"));
            assert!(contains_ci(&hay("x@oe-KBUILD-all"), b"oe-kbuild"));
            assert!(!contains_ci(&hay("lk p@example.org"), b"lkp"));
            assert!(contains_ci(&hay("lkp"), b"lkp"));
        }
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "robot"), 5);
        assert_eq!(edit_distance("rboot", "robot"), 2);
        assert_eq!(edit_distance("résolve", "resolve"), 1);
    }

    use super::*;

    #[test]
    fn patterns_get_small_classes() {
        let w = WORD;
        let sp = SPACE;
        let rows = [
            (r"\bapplied\s+to\b", format!(r"(?-u:\b)applied(?-i:[{sp}])+to(?-u:\b)")),
            (r"[\w.-]+@\S+", format!(r"(?:(?-i:[{w}])|[.-])+@(?-i:[^{sp}])+")),
            (r"[^\s\[]\d{2}\W", format!(r"[^{sp}\[](?-i:[[:digit:]]){{2}}(?-i:[^{w}])")),
            (r"[]\w][^]\d]", format!(r"[]{w}][^][:digit:]]")),
            (r"[[:alpha:]\w]\[\w\]", format!(r"[[:alpha:]{w}]\[(?-i:[{w}])\]")),
            (r"\b{start}x\.\\w", r"\b{start}x\.\\w".to_string()),
            (r"(?i)[a-z][\w.-]*\[[\w]+", format!(r"(?i)[a-z](?:(?-i:[{w}])|[.-])*\[(?:(?-i:[{w}]))+")),
            (r"[\w^][^\w][[:alpha:]\w]", format!(r"(?:(?-i:[{w}])|[\^])[^{w}][[:alpha:]{w}]")),
            (r"[\w--_][\w&&a]", format!(r"[{w}--_][{w}&&a]")),
        ];
        for (given, want) in rows {
            assert_eq!(small_classes(given), want, "{given}");
            regex(given).unwrap_or_else(|e| panic!("{given}: {e}"));
        }
        let word = regex(r"(?i)\bfix(?:ed)?\s+\w+\b").unwrap();
        assert!(word.is_match("Fixed  it"));
        assert!(word.is_match("Fixed\u{a0}it"));
        assert!(!word.is_match("prefixed it"));
        // Names keep their letters; digits are ASCII.
        assert!(regex(r"^[\w .-]+$").unwrap().is_match("Dr. Zoë"));
        assert!(regex(r"^\w+$").unwrap().is_match("Müller"));
        assert!(!regex(r"^\d+$").unwrap().is_match("١٢"));
    }

    #[test]
    fn clean_keeps_text_and_drops_what_controls_a_reader() {
        assert!(matches!(clean("a title\twith tabs\nand lines, ±5% über"), std::borrow::Cow::Borrowed(_)));
        let rows = [
            ("\x1b[31mred\x1b[0m\x07", "[31mred[0m"),
            ("nul\0 del\x7f cr\r ff\x0c vt\x0b", "nul del cr ff vt"),
            ("c1 \u{85}\u{9b}31m csi", "c1 31m csi"),
            ("access \u{202e}nimda\u{202c} \u{2066}x\u{2069}", "access nimda x"),
            ("tab\tnewline\n", "tab\tnewline\n"),
        ];
        for (input, want) in rows {
            assert_eq!(clean(input), want, "{input:?}");
        }
        // Everything below U+00A0 but tab, newline and printable ASCII goes.
        for c in (0u32..0xa0).filter_map(char::from_u32) {
            let kept = clean(&c.to_string()).len() == c.len_utf8();
            assert_eq!(kept, c == '\t' || c == '\n' || (' '..='~').contains(&c), "{c:?}");
        }
        // The byte scan before the check lets none of them through, amid
        // other text or alone.
        for c in (0u32..0x3000).filter_map(char::from_u32) {
            let s = format!("ab {c} cd");
            assert_eq!(clean(&s).contains(c), !is_unsafe(c), "{c:?}");
        }
    }

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
    fn a_gate_passes_what_a_case_insensitive_pattern_could_match() {
        let words = &["repro", "see"];
        assert!(may_contain_ci("We could not REPRODUCE it.", words));
        assert!(may_contain_ci("I don't See it", words));
        assert!(!may_contain_ci("Looks fine to me, thanks.", words));
        // `(?i)see` matches the long s: the gate must let it through.
        let long_s = "I don't \u{17F}ee it";
        assert!(regex("(?i)see").unwrap().is_match(long_s));
        assert!(may_contain_ci(long_s, words));
        assert!(may_contain_ci("Zoë can't \u{212A}eep up", &["keep"]));
        assert!(!may_contain_ci("Zoë agrees", words));
    }

    #[test]
    fn signatures_are_cut_at_the_dash_dash_line() {
        assert_eq!(strip_signature("body\n-- \nsig\n"), "body\n");
        assert_eq!(strip_signature("no signature\n"), "no signature\n");
    }
}
