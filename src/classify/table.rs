//! LKP comparison tables, read as a stream of tokens.
//!
//! ```text
//! 8285917d6f383aef 01b9da291c4969354807b52956f        <- column ids
//! ---------------- ---------------------------        <- the rule
//!          %stddev     %change         %stddev
//!              \          |                \
//!   38288993           -67.7%   12355813 ±  3%  stress-ng.switch.ops_per_sec
//! ```
//!
//! Reading tokens rather than lines is what lets one parser cope with real
//! archives: tables flattened onto one line, `±` mangled into `Ä`, `?`, `�`
//! or `&plusmn;`, trailing blanks, and rows split by quoting. A row is
//! `VALUE [STDDEV] (CHANGE VALUE [STDDEV])* METRIC`; a `fail:runs` row is
//! `F:R (REPRO% F:R)* SIGNATURE`.

use serde::Serialize;

use super::num::{Num, parse_number};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    pub value: Num,
    pub stddev_pct: Option<Num>,
    /// Change from the first column: percent, or absolute (points) for
    /// metrics that are themselves percentages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Change {
    pub value: Num,
    /// `"%"` for a relative change, `"abs"` for an absolute one.
    pub unit: ChangeUnit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ChangeUnit {
    #[serde(rename = "%")]
    Percent,
    #[serde(rename = "abs")]
    Absolute,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub metric: String,
    pub cells: Vec<Cell>,
}

/// One `fail:runs` cell: `3:3`, or `:6` for no failures in six runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailCell {
    pub fails: u32,
    pub runs: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproduction_pct: Option<Num>,
}

impl FailCell {
    pub fn rate(&self) -> Option<f64> {
        (self.runs > 0).then(|| f64::from(self.fails) / f64::from(self.runs))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailRow {
    pub signature: String,
    pub cells: Vec<FailCell>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Table {
    /// Column ids as printed above the rule (truncated SHAs or tags).
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    pub fail_rows: Vec<FailRow>,
    /// Byte offset of the column-id line in the text it was read from;
    /// lets callers find the prose and `commit:` block before it.
    #[serde(skip)]
    pub offset: usize,
    /// Byte offset just past the last row.
    #[serde(skip)]
    pub end: usize,
}

impl Table {
    pub fn row(&self, metric: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.metric == metric)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Tok<'a> {
    text: &'a str,
    start: usize,
    /// Blank lines before this token (0 on the same line, 1 after one
    /// line break, 2 after an empty line).
    breaks: u8,
}

fn tokenize(text: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut breaks = 0u8;
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push(Tok { text: &text[s..i], start: s, breaks });
                breaks = 0;
            }
            if c == '\n' {
                breaks = breaks.saturating_add(1);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(Tok { text: &text[s..], start: s, breaks });
    }
    out
}

/// Glyphs that stand for `±` in real archives.
const PLUSMINUS: &[&str] = &["±", "Ä", "?", "�", "&plusmn;", "+-", "Â±", "\u{b1}", "&#177;", "+/-"];

fn strip_plusminus(t: &str) -> Option<&str> {
    if let Some(rest) = PLUSMINUS.iter().find_map(|m| t.strip_prefix(m)) {
        return Some(rest);
    }
    // Any other short run of non-ASCII glyphs before a percentage, as a
    // `±` that went through one charset too many becomes (`ï¿½`, `Â±`).
    let glyphs = t.chars().take_while(|c| !c.is_ascii()).count();
    if (1..=4).contains(&glyphs) {
        let cut = t.char_indices().nth(glyphs).map_or(t.len(), |(i, _)| i);
        let rest = &t[cut..];
        if rest.is_empty() || percent(rest).is_some() {
            return Some(rest);
        }
    }
    None
}

fn percent(t: &str) -> Option<Num> {
    let n = t.strip_suffix('%')?;
    parse_number(n)
}

fn is_rule(t: &str) -> bool {
    t.len() >= 8 && t.bytes().all(|b| b == b'-')
}

fn is_value(t: &str) -> Option<Num> {
    if t.ends_with('%') {
        return None;
    }
    parse_number(t)
}

fn is_change(t: &str) -> Option<Change> {
    if let Some(v) = percent(t) {
        return Some(Change { value: v, unit: ChangeUnit::Percent });
    }
    if t.starts_with(['+', '-']) {
        return parse_number(t).map(|v| Change { value: v, unit: ChangeUnit::Absolute });
    }
    None
}

fn is_fail_runs(t: &str) -> Option<(u32, u32)> {
    let (f, r) = t.split_once(':')?;
    let runs = r.parse().ok()?;
    let fails = if f.is_empty() { 0 } else { f.parse().ok()? };
    Some((fails, runs))
}

/// A metric or signature name: anything that is not itself a number,
/// marker or table glyph.
fn is_name(t: &str) -> bool {
    !t.is_empty()
        && parse_number(t).is_none()
        && percent(t).is_none()
        && strip_plusminus(t).is_none()
        && !matches!(t, "|" | "\\" | "..." | "%stddev" | "%change" | "fail:runs" | "%reproduction")
        && !is_rule(t)
        && t.chars().any(|c| c.is_alphabetic())
}

/// Reads a stddev after a value: `± 3%`, `±125%`, `Ä  5%`.
fn stddev_at(toks: &[Tok<'_>], i: usize) -> Option<(Num, usize)> {
    let t = toks.get(i)?;
    let rest = strip_plusminus(t.text)?;
    if rest.is_empty() {
        let n = toks.get(i + 1).filter(|n| n.breaks == 0)?;
        return percent(n.text).map(|p| (p, 2));
    }
    percent(rest).map(|p| (p, 1))
}

fn value_cell_at(toks: &[Tok<'_>], i: usize) -> Option<(Num, Option<Num>, usize)> {
    let v = is_value(toks.get(i)?.text)?;
    match stddev_at(toks, i + 1) {
        Some((s, n)) => Some((v, Some(s), 1 + n)),
        None => Some((v, None, 1)),
    }
}

fn value_row_at(toks: &[Tok<'_>], i: usize, ncols: usize) -> Option<(Row, usize)> {
    let mut j = i;
    let mut cells = Vec::with_capacity(ncols);
    let (v, s, n) = value_cell_at(toks, j)?;
    cells.push(Cell { value: v, stddev_pct: s, change: None });
    j += n;
    for _ in 1..ncols {
        let change = is_change(toks.get(j)?.text)?;
        let (v, s, n) = value_cell_at(toks, j + 1)?;
        cells.push(Cell { value: v, stddev_pct: s, change: Some(change) });
        j += 1 + n;
    }
    let name = toks.get(j)?;
    if !is_name(name.text) {
        return None;
    }
    Some((Row { metric: name.text.to_string(), cells }, j + 1 - i))
}

fn fail_row_at(toks: &[Tok<'_>], i: usize, ncols: usize) -> Option<(FailRow, usize)> {
    let mut j = i;
    let mut cells = Vec::with_capacity(ncols);
    let (f, r) = is_fail_runs(toks.get(j)?.text)?;
    cells.push(FailCell { fails: f, runs: r, reproduction_pct: None });
    j += 1;
    for _ in 1..ncols {
        let repro = percent(toks.get(j)?.text)?;
        let (f, r) = is_fail_runs(toks.get(j + 1)?.text)?;
        cells.push(FailCell { fails: f, runs: r, reproduction_pct: Some(repro) });
        j += 2;
    }
    let name = toks.get(j)?;
    if !is_name(name.text) {
        return None;
    }
    Some((FailRow { signature: name.text.to_string(), cells }, j + 1 - i))
}

/// Tokens that may sit between rows and are skipped.
fn is_filler(t: &str) -> bool {
    matches!(t, "|" | "\\" | "..." | "%stddev" | "%change" | "fail:runs" | "%reproduction")
}

/// Finds every comparison table in `text`, in order.
pub fn find_tables(text: &str) -> Vec<Table> {
    let toks = tokenize(text);
    let mut tables = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if !is_rule(toks[i].text) {
            i += 1;
            continue;
        }
        // The rule: k dash tokens in a row.
        let rule_start = i;
        while i < toks.len() && is_rule(toks[i].text) {
            i += 1;
        }
        let ncols = i - rule_start;
        if ncols < 2 || rule_start < ncols {
            continue;
        }
        let header = &toks[rule_start - ncols..rule_start];
        // Column ids sit on one line, right above the rule.
        if header.iter().skip(1).any(|t| t.breaks > 0)
            || header.iter().any(|t| t.text.len() > 60 || t.text.starts_with(['|', '+', '=']))
        {
            continue;
        }
        let mut table = Table {
            columns: header.iter().map(|t| t.text.to_string()).collect(),
            offset: header[0].start,
            ..Table::default()
        };
        let mut blank_run = false;
        while i < toks.len() {
            let t = &toks[i];
            if t.breaks >= 2 && (!table.rows.is_empty() || !table.fail_rows.is_empty()) {
                // A blank line ends the table unless a row follows at once.
                if blank_run {
                    break;
                }
                blank_run = true;
            }
            if is_filler(t.text) {
                i += 1;
                continue;
            }
            if let Some((row, n)) = value_row_at(&toks, i, ncols) {
                table.end = toks[i + n - 1].start + toks[i + n - 1].text.len();
                table.rows.push(row);
                i += n;
                blank_run = false;
                continue;
            }
            if let Some((row, n)) = fail_row_at(&toks, i, ncols) {
                table.end = toks[i + n - 1].start + toks[i + n - 1].text.len();
                table.fail_rows.push(row);
                i += n;
                blank_run = false;
                continue;
            }
            break;
        }
        if !table.rows.is_empty() || !table.fail_rows.is_empty() {
            tables.push(table);
        }
    }
    tables
}

/// A `+---+` box table as used for dmesg signatures and the "also has
/// significant impact" list: each `| a | b | c |` line as its cells.
pub fn box_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with('|') && l.len() > 1)
        .map(|l| {
            let inner = l.trim_start_matches('|').trim_end_matches('|');
            inner.split('|').map(|c| c.trim().to_string()).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CURRENT: &str = "\
8285917d6f383aef 01b9da291c4969354807b52956f 
---------------- --------------------------- 
         %stddev     %change         %stddev
             \\          |                \\  
      5849          +210.2%      18145 ±  3%  stress-ng.switch.nanosecs_per_context_switch_mq_method
  38288993           -67.7%   12355813 ±  3%  stress-ng.switch.ops_per_sec
     22.48            -4.4       18.08        mpstat.cpu.all.idle%
      0.02 ±141%      +0.1        0.09        perf-profile.self.cycles-pp.folio_lruvec_lock_irqsave

Disclaimer:
";

    #[test]
    fn reads_a_two_column_table() {
        let t = find_tables(CURRENT);
        assert_eq!(t.len(), 1);
        let t = &t[0];
        assert_eq!(t.columns, vec!["8285917d6f383aef", "01b9da291c4969354807b52956f"]);
        assert_eq!(t.rows.len(), 4);
        let r = t.row("stress-ng.switch.ops_per_sec").unwrap();
        assert_eq!(r.cells[0].value.0, 38288993.0);
        assert_eq!(r.cells[0].stddev_pct, None);
        assert_eq!(r.cells[1].value.0, 12355813.0);
        assert_eq!(r.cells[1].stddev_pct.map(|n| n.0), Some(3.0));
        assert_eq!(r.cells[1].change, Some(Change { value: Num(-67.7), unit: ChangeUnit::Percent }));
        let idle = t.row("mpstat.cpu.all.idle%").unwrap();
        assert_eq!(idle.cells[1].change.unwrap().unit, ChangeUnit::Absolute);
        assert_eq!(
            t.row("perf-profile.self.cycles-pp.folio_lruvec_lock_irqsave").unwrap().cells[0].stddev_pct,
            Some(Num(141.0))
        );
    }

    #[test]
    fn reads_mangled_plusminus_and_flattened_rows() {
        let flat = "ebe75e4751063dce 7e12beb8ca2ac98b2ec42e0ea4b ---------------- --------------------------- \
                    %stddev %change %stddev \\ | \\ 57522 -3.3% 55603 vm-scalability.median 5513665 -3.4% 5328506 \
                    vm-scalability.throughput 203067 Ä 3% -8.6% 185675 ? 2% vm-scalability.time.x 1.0 &plusmn;5% +1% 2.0 m.y";
        let t = find_tables(flat);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].rows.len(), 4);
        assert_eq!(t[0].rows[2].cells[0].stddev_pct, Some(Num(3.0)));
        assert_eq!(t[0].rows[2].cells[1].stddev_pct, Some(Num(2.0)));
        assert_eq!(t[0].rows[3].cells[0].stddev_pct, Some(Num(5.0)));
        // A `±` decoded twice: UTF-8 read as Latin-1, or a replacement char.
        let t = find_tables("a b\n-------- --------\n 1 \u{ef}\u{bf}\u{bd}  3% -1% 2 \u{fffd}4% m.x\n");
        assert_eq!(t[0].rows[0].cells[0].stddev_pct, Some(Num(3.0)));
        assert_eq!(t[0].rows[0].cells[1].stddev_pct, Some(Num(4.0)));
    }

    #[test]
    fn reads_three_columns_and_fail_runs() {
        let text = "\
d7b64041164ca177 304a68b9c63bbfc1f6e159d68e8 e5a7d5f824ad7409f85e2665d11
---------------- --------------------------- ---------------------------
       fail:runs  %reproduction    fail:runs  %reproduction    fail:runs
           |             |             |             |             |
           :6           50%           3:3          100%           3:3     dmesg.WARNING:at_fs/iomap
         %stddev     %change         %stddev     %change         %stddev
             \\          |                \\          |                \\
    371814 ±  3%     -29.1%     263582 ±  3%      -0.1%     371286 ±  2%  vm-scalability.median
";
        let t = find_tables(text);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].columns.len(), 3);
        assert_eq!(t[0].fail_rows[0].cells[0], FailCell { fails: 0, runs: 6, reproduction_pct: None });
        assert_eq!(t[0].fail_rows[0].cells[2].fails, 3);
        assert_eq!(t[0].rows[0].cells[2].value.0, 371286.0);
        assert_eq!(t[0].rows[0].cells[2].change.unwrap().value.0, -0.1);
    }

    #[test]
    fn scientific_values_and_garbage_do_not_panic() {
        let t = find_tables("a b\n-------- --------\n 2.296e+09 -67.7% 7.408e+08 ± 3% stress-ng.switch.ops\n");
        assert_eq!(t[0].rows[0].cells[0].value.0, 2.296e9);
        assert!(find_tables("-------- --------").is_empty());
        assert!(find_tables("x\n--------\n").is_empty());
    }

    #[test]
    fn box_table_cells() {
        let rows = box_rows("+---+\n| BUG:x | 0 | 12 |\n| a |\n");
        assert_eq!(rows[0], vec!["BUG:x", "0", "12"]);
    }
}
