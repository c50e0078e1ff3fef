//! A case's headline metric across the base commit, the bad commit and
//! every fix column its retests tried, and its drawing as inline SVG
//! (server-side: no script, no fonts or files fetched).
//!
//! The base and bad values are the report's own (its headline, or for a
//! dmesg report the failure rate of its signature); a report that states
//! neither lends them from its first retest's table. A fix column counts
//! when it measured the same metric.

use serde_json::Value;

use crate::case::CaseRecord;
use crate::model::MessageId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Base,
    Bad,
    Fix,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Base => "base",
            Role::Bad => "bad",
            Role::Fix => "fix",
        }
    }
}

/// One measured commit.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub role: Role,
    /// The commit as printed (abbreviated SHA or tag), when known.
    pub commit: Option<String>,
    pub subject: Option<String>,
    pub value: f64,
    pub stddev_pct: Option<f64>,
    /// The base value this one is compared with: the report's base for
    /// the bad commit, the base column of its own retest for a fix.
    pub against: Option<f64>,
    /// For a fix: its verdict and the retest result that measured it.
    pub verdict: Option<String>,
    pub message_id: Option<MessageId>,
}

impl Point {
    /// The change from the base it is compared with, in percent.
    pub fn change_pct(&self) -> Option<f64> {
        let base = self.against.filter(|b| *b != 0.0)?;
        (self.role != Role::Base).then(|| (self.value - base) / base.abs() * 100.0)
    }

    /// Half the error bar, in the value's unit.
    fn spread(&self) -> f64 {
        self.stddev_pct.map_or(0.0, |s| (self.value * s / 100.0).abs())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub metric: String,
    /// Values are failures per run (0 to 1), drawn as percentages.
    pub fail_rate: bool,
    /// Some retest measured against a base other than the report's (another
    /// machine or parameters): the values are not comparable, so each is
    /// drawn as its change from its own base, in percent.
    pub relative: bool,
    pub points: Vec<Point>,
}

impl Chart {
    pub fn base(&self) -> Option<&Point> {
        self.points.iter().find(|p| p.role == Role::Base)
    }

    pub fn bad(&self) -> Option<&Point> {
        self.points.iter().find(|p| p.role == Role::Bad)
    }

    /// A value as the chart prints it.
    pub fn show(&self, v: f64) -> String {
        if self.fail_rate { format!("{}%", number(v * 100.0)) } else { number(v) }
    }
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

fn text(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

/// A retest column (`base`, `bad`, `fix`) as a point.
fn column(col: &Value, role: Role) -> Option<Point> {
    Some(Point {
        role,
        commit: text(&col["short"]),
        subject: text(&col["subject"]),
        value: num(&col["value"])?,
        stddev_pct: num(&col["stddev_pct"]),
        against: None,
        verdict: None,
        message_id: None,
    })
}

/// The report's own base and bad values, with the metric they measure.
fn from_report(c: &CaseRecord) -> Option<(String, bool, Point, Point)> {
    let facts = c.report_facts.as_ref()?;
    let columns = facts["table"]["columns"].as_array();
    let base_commit = columns.and_then(|c| c.first()).and_then(text);
    let bad_commit = c.view.facts.commit.as_deref().map(|s| s.get(..10).unwrap_or(s).to_string());
    let point = |role, value, stddev_pct, commit| Point {
        role,
        commit,
        subject: None,
        value,
        stddev_pct,
        against: None,
        verdict: None,
        message_id: None,
    };
    let h = &facts["headline"];
    if let (Some(metric), Some(base), Some(new)) = (text(&h["metric"]), num(&h["base"]), num(&h["new"])) {
        let bad = Point {
            subject: c.view.facts.commit_subject.clone(),
            ..point(Role::Bad, new, num(&h["new_stddev_pct"]), bad_commit)
        };
        return Some((metric, false, point(Role::Base, base, num(&h["base_stddev_pct"]), base_commit), bad));
    }
    // A dmesg report: how often its signature failed on each side.
    let signature = c.view.facts.signature.as_deref()?;
    let row = facts["table"]["fail_rows"].as_array()?.iter().find(|r| r["signature"].as_str() == Some(signature))?;
    let rate = |cell: &Value| {
        let runs = num(&cell["runs"])?;
        (runs > 0.0).then(|| num(&cell["fails"]).unwrap_or(0.0) / runs)
    };
    let cells = row["cells"].as_array()?;
    let (base, bad) = (rate(cells.first()?)?, rate(cells.get(1)?)?);
    let bad = Point { subject: c.view.facts.commit_subject.clone(), ..point(Role::Bad, bad, None, bad_commit) };
    Some((signature.to_string(), true, point(Role::Base, base, None, base_commit), bad))
}

/// Whether two measurements of a base are the same run's, near enough.
fn same_base(a: f64, b: f64) -> bool {
    (a - b).abs() <= a.abs().max(b.abs()) * 0.02
}

/// The chart of a case, when at least two commits were measured.
pub fn chart(c: &CaseRecord) -> Option<Chart> {
    let first = c.retests.first();
    let (metric, fail_rate, mut points) = match from_report(c) {
        Some((metric, fail_rate, base, bad)) => (metric, fail_rate, vec![base, bad]),
        None => {
            let r = &first?.facts;
            let points = [column(&r["base"], Role::Base), column(&r["bad"], Role::Bad)].into_iter().flatten().collect();
            (first?.metric.clone(), r["values"].as_str() == Some("fail-rate"), points)
        }
    };
    let base = points.iter().find(|p| p.role == Role::Base).map(|p| p.value);
    for p in &mut points {
        p.against = base;
    }
    let mut relative = false;
    for r in &c.retests {
        let same = if fail_rate { r.facts["values"].as_str() == Some("fail-rate") } else { r.metric == metric };
        if !same {
            continue;
        }
        if let Some(p) = column(&r.facts["fix"], Role::Fix) {
            let own = num(&r.facts["base"]["value"]);
            relative |= matches!((own, base), (Some(o), Some(b)) if !same_base(o, b));
            points.push(Point {
                against: own.or(base),
                verdict: r.verdict.map(|v| v.as_str().to_string()),
                message_id: Some(r.message_id.clone()),
                ..p
            });
        }
    }
    if relative {
        points.retain(|p| p.role == Role::Base || p.change_pct().is_some());
    }
    (points.len() >= 2).then_some(Chart { metric, fail_rate, relative, points })
}

/// `38288993` -> `38,288,993`; `0.2345` -> `0.2345`; at most 4 decimals.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let decimals = match v.abs() {
        a if a >= 1000.0 => 0,
        a if a >= 100.0 => 1,
        a if a >= 1.0 => 2,
        _ => 4,
    };
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = s.split_once('.').map_or((s.as_str(), ""), |(i, f)| (i, f));
    let mut grouped = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    let frac = frac.trim_end_matches('0');
    let sign = if v < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') { "-" } else { "" };
    if frac.is_empty() { format!("{sign}{grouped}") } else { format!("{sign}{grouped}.{frac}") }
}

/// `38288993` -> `38.3M`, for axis ticks.
fn compact(v: f64) -> String {
    let a = v.abs();
    let (d, suffix) = match a {
        a if a >= 1e9 => (1e9, "G"),
        a if a >= 1e6 => (1e6, "M"),
        a if a >= 1e4 => (1e3, "k"),
        _ => (1.0, ""),
    };
    format!("{}{suffix}", number(((v / d) * 100.0).round() / 100.0))
}

/// A commit as the axis shows it: a SHA's first 10 digits, a tag cut.
fn short(id: &str) -> String {
    if id.len() > 10 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        id[..10].to_string()
    } else {
        crate::text::cut(id, 14)
    }
}

/// XML text: `&`, `<`, `>` and quotes escaped.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Tick values: about five round numbers covering `lo..=hi`.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| span / s <= 6.0).unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 12 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

const W: f64 = 720.0;
const H: f64 = 340.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 62.0;

fn color(p: &Point) -> &'static str {
    match (p.role, p.verdict.as_deref()) {
        (Role::Base, _) => "#1f6fb2",
        (Role::Bad, _) => "#c62828",
        (Role::Fix, Some("recovered")) => "#2e7d32",
        (Role::Fix, Some("partly-recovered")) => "#ef6c00",
        (Role::Fix, Some("not-recovered")) => "#8e24aa",
        (Role::Fix, _) => "#546e7a",
    }
}

impl Chart {
    /// Where a point is drawn and half its error bar: the value (failure
    /// rates in percent), or in a relative chart its change from its base.
    fn plotted(&self, p: &Point) -> (f64, f64) {
        if self.relative {
            let base = p.against.filter(|b| *b != 0.0).unwrap_or(p.value);
            ((p.value - base) / base.abs() * 100.0, p.spread() / base.abs() * 100.0)
        } else if self.fail_rate {
            (p.value * 100.0, p.spread() * 100.0)
        } else {
            (p.value, p.spread())
        }
    }

    /// What the y axis shows.
    pub fn unit(&self) -> &'static str {
        match (self.relative, self.fail_rate) {
            (true, _) => "change from each run's base, %",
            (false, true) => "% of runs failing",
            (false, false) => "",
        }
    }
}

/// The chart as an `<svg>` element: each commit a dot with its %stddev
/// as an error bar, dashed lines at the base and bad levels, the value
/// and change from base over each dot while there is room for it.
pub fn svg(c: &Chart) -> String {
    let vals: Vec<(f64, f64)> = c.points.iter().map(|p| c.plotted(p)).collect();
    let f = Frame::new(c, &vals);
    let mut s = heading(c);
    grid(c, &f, &mut s);
    levels(c, &f, &mut s);
    // Labels need room: values over the dots up to ~100 px a commit,
    // commits under the axis up to ~70 px; the table has them all.
    let (value_labels, commit_labels) = (f.step >= 100.0, f.step >= 70.0);
    let mut fixes = 0;
    for (i, (p, (v, spread))) in c.points.iter().zip(&vals).enumerate() {
        let (px, py) = (f.x(i), f.y(*v));
        let col = color(p);
        if *spread > 0.0 {
            error_bar(px, f.y(v + spread), f.y(v - spread), col, &mut s);
        }
        let label = match p.role {
            Role::Fix => {
                fixes += 1;
                if f.step >= 48.0 { format!("fix {fixes}") } else { fixes.to_string() }
            }
            r => r.as_str().to_string(),
        };
        let change = p.change_pct().map_or(String::new(), |d| format!(" ({d:+.1}%)"));
        let mut tip = format!("{label}: {}{change}", c.show(p.value));
        if let Some(sd) = p.stddev_pct {
            tip.push_str(&format!(" ±{}%", number(sd)));
        }
        s.push_str(&format!(
            "<circle class=\"point point-{}\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"5.5\" fill=\"{col}\"><title>{}</title></circle>",
            p.role.as_str(),
            esc(&tip)
        ));
        if value_labels {
            s.push_str(&format!(
                "<text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{col}\">{}</text>",
                (f.y(v + spread) - 8.0).max(TOP + 10.0),
                esc(&format!("{}{change}", c.show(p.value)))
            ));
        }
        s.push_str(&format!(
            "<text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>",
            H - BOTTOM + 20.0,
            esc(&label)
        ));
        if commit_labels {
            let commit = p.commit.as_deref().map_or(String::new(), short);
            s.push_str(&format!(
                "<text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\" font-family=\"monospace\">{}</text>",
                H - BOTTOM + 38.0,
                esc(&commit)
            ));
        }
    }
    s.push_str("</svg>");
    s
}

/// Where values and points go: the value range (padded, from zero when
/// zero is near) and the width each point gets.
struct Frame {
    lo: f64,
    hi: f64,
    step: f64,
}

impl Frame {
    fn new(c: &Chart, vals: &[(f64, f64)]) -> Frame {
        let mut lo = vals.iter().map(|(v, s)| v - s).fold(f64::INFINITY, f64::min);
        let mut hi = vals.iter().map(|(v, s)| v + s).fold(f64::NEG_INFINITY, f64::max);
        let pad = ((hi - lo) * 0.12).max(hi.abs().max(lo.abs()) * 0.01).max(1e-9);
        lo -= pad;
        hi += pad;
        // Start at zero when zero is near: the gap then reads true.
        if lo > 0.0 && lo < (hi - lo) * 0.6 {
            lo = 0.0;
        }
        if c.fail_rate && !c.relative {
            lo = lo.max(0.0);
        }
        Frame { lo, hi, step: (W - LEFT - RIGHT) / c.points.len() as f64 }
    }

    fn y(&self, v: f64) -> f64 {
        TOP + (H - TOP - BOTTOM) * (1.0 - (v - self.lo) / (self.hi - self.lo))
    }

    fn x(&self, i: usize) -> f64 {
        LEFT + self.step * (i as f64 + 0.5)
    }
}

/// The `<svg>` element's start: its accessible title and the metric.
fn heading(c: &Chart) -> String {
    let title = match c.unit() {
        "" => c.metric.clone(),
        u => format!("{} ({u})", c.metric),
    };
    format!(
        "<svg class=\"chart\" role=\"img\" aria-labelledby=\"chart-title\" viewBox=\"0 0 {W} {H}\" \
         xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"12\">\
         <title id=\"chart-title\">{}</title>\
         <text x=\"{LEFT}\" y=\"18\" font-weight=\"bold\">{}</text>",
        esc(&format!("{title}: base, bad and fix commits")),
        esc(&crate::text::cut(&title, 90))
    )
}

/// The value grid with its labels, and the axis.
fn grid(c: &Chart, f: &Frame, s: &mut String) {
    let tick_label = |t: f64| match (c.relative, t > 0.0) {
        (true, true) => format!("+{}%", number(t)),
        (true, false) => format!("{}%", number(t)),
        (false, _) => compact(t),
    };
    for t in ticks(f.lo, f.hi) {
        let ty = f.y(t);
        s.push_str(&format!(
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{ty:.1}\" y2=\"{ty:.1}\" stroke=\"#e0e0e0\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#555\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            ty + 4.0,
            esc(&tick_label(t))
        ));
    }
    s.push_str(&format!("<line x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{}\" stroke=\"#888\"/>", H - BOTTOM));
}

/// The base's and the bad commit's levels across the chart.
fn levels(c: &Chart, f: &Frame, s: &mut String) {
    for (p, dash) in [(c.base(), "6 4"), (c.bad(), "2 3")] {
        if let Some(p) = p {
            let ly = f.y(c.plotted(p).0);
            s.push_str(&format!(
                "<line class=\"level-{}\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{ly:.1}\" y2=\"{ly:.1}\" stroke=\"{}\" \
                 stroke-dasharray=\"{dash}\" stroke-opacity=\"0.6\"/>",
                p.role.as_str(),
                W - RIGHT,
                color(p)
            ));
        }
    }
}

/// A point's %stddev as an error bar from `top` to `bottom`.
fn error_bar(px: f64, top: f64, bottom: f64, col: &str, s: &mut String) {
    s.push_str(&format!(
        "<g class=\"error-bar\" stroke=\"{col}\"><line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\"/>\
         <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{top:.1}\" y2=\"{top:.1}\"/>\
         <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{bottom:.1}\" y2=\"{bottom:.1}\"/></g>",
        px - 6.0,
        px + 6.0,
        px - 6.0,
        px + 6.0
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(role: Role, value: f64, sd: Option<f64>) -> Point {
        Point {
            role,
            commit: Some("abc".into()),
            subject: None,
            value,
            stddev_pct: sd,
            against: Some(100.0),
            verdict: None,
            message_id: None,
        }
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(number(38_288_993.0), "38,288,993");
        assert_eq!(number(-1234.4), "-1,234");
        assert_eq!(number(123.45), "123.5");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(-0.00001), "0");
        assert_eq!(number(f64::NAN), "-");
        assert_eq!(compact(38_288_993.0), "38.29M");
        assert_eq!(compact(12_500.0), "12.5k");
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 100.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        let t = ticks(12.3e6, 40.1e6);
        assert!(t.len() >= 3 && t.len() <= 7, "{t:?}");
        assert!(t.iter().all(|v| (v / 5e6).fract() == 0.0), "{t:?}");
        assert!(ticks(5.0, 5.0).len() <= 12);
    }

    #[test]
    fn the_svg_has_a_dot_per_commit_and_error_bars() {
        let c = Chart {
            metric: "will-it-scale.per_thread_ops".into(),
            fail_rate: false,
            relative: false,
            points: vec![
                point(Role::Base, 100.0, Some(2.0)),
                point(Role::Bad, 70.0, None),
                Point { verdict: Some("recovered".into()), ..point(Role::Fix, 99.0, Some(1.0)) },
            ],
        };
        let s = svg(&c);
        assert_eq!(s.matches("<circle").count(), 3);
        assert_eq!(s.matches("class=\"error-bar\"").count(), 2);
        assert!(s.contains("(-30.0%)") && s.contains("(-1.0%)"), "{s}");
        assert!(s.contains(">fix 1<"));
        assert!(s.contains("#2e7d32"), "a recovered fix is green");
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
    }

    #[test]
    fn text_from_mail_is_escaped() {
        let c = Chart {
            metric: "<script>alert(1)</script>".into(),
            fail_rate: true,
            relative: false,
            points: vec![
                Point { commit: Some("\"><img>".into()), against: Some(0.0), ..point(Role::Base, 0.0, None) },
                Point { against: Some(0.0), ..point(Role::Bad, 1.0, None) },
            ],
        };
        let s = svg(&c);
        assert!(!s.contains("<script") && !s.contains("<img"), "{s}");
        assert!(s.contains("&lt;script&gt;"));
        assert!(s.contains("100%"), "fail rates drawn as percentages: {s}");
    }

    fn record(headline: serde_json::Value, retests: &[(f64, f64)]) -> CaseRecord {
        use crate::case::{CaseFacts, CaseId, CaseKind, CaseState, CaseView};
        let id = MessageId::new("r@x").unwrap();
        CaseRecord {
            view: CaseView {
                id: CaseId(1),
                state: CaseState::Reported,
                facts: CaseFacts {
                    commit: Some("abcdef0123".into()),
                    metric: Some("m.ops".into()),
                    ..CaseFacts::new(CaseKind::PerfRegression, "t".into(), id.clone(), 0)
                },
            },
            updated_at: 0,
            verdict: None,
            fix_commit: None,
            fix_message_id: None,
            seen_again_at: None,
            report_facts: Some(serde_json::json!({"headline": headline})),
            messages: Vec::new(),
            events: Vec::new(),
            related: Vec::new(),
            retests: retests
                .iter()
                .enumerate()
                .map(|(i, (base, fix))| crate::case::CaseRetest {
                    message_id: id.clone(),
                    idx: i as i64,
                    fix_commit: format!("f{i}"),
                    metric: "m.ops".into(),
                    verdict: None,
                    facts: serde_json::json!({
                        "fix": {"short": format!("f{i}"), "value": fix, "stddev_pct": 1},
                        "base": {"short": "b", "value": base},
                        "bad": {"short": "x", "value": 1},
                        "values": "metric",
                    }),
                })
                .collect(),
        }
    }

    #[test]
    fn fixes_measured_on_another_base_make_the_chart_relative() {
        let headline = serde_json::json!({"metric": "m.ops", "base": 1000, "new": 800, "new_stddev_pct": 2});
        let same = chart(&record(headline.clone(), &[(1010.0, 990.0)])).unwrap();
        assert!(!same.relative);
        assert_eq!(same.points.len(), 3);
        assert_eq!(same.points[2].change_pct().map(|c| c.round()), Some(-2.0), "against its own base 1010");
        let other = chart(&record(headline, &[(1000.0, 1000.0), (5000.0, 4000.0)])).unwrap();
        assert!(other.relative);
        let drawn: Vec<f64> = other.points.iter().map(|p| other.plotted(p).0.round()).collect();
        assert_eq!(drawn, [0.0, -20.0, 0.0, -20.0]);
        let svg = svg(&other);
        assert!(svg.contains("change from each run"), "{svg}");
        assert!(svg.contains(">-20%<") && svg.contains(">0%<"), "ticks in percent: {svg}");
    }

    #[test]
    fn nothing_to_chart_without_two_values() {
        let headline = serde_json::json!({"metric": "m.ops"});
        assert_eq!(chart(&record(headline, &[])), None);
    }

    #[test]
    fn crowded_charts_drop_the_labels_over_the_dots() {
        let mut points = vec![point(Role::Base, 100.0, None), point(Role::Bad, 80.0, None)];
        points.extend((0..14).map(|i| point(Role::Fix, 80.0 + f64::from(i), None)));
        let s = svg(&Chart { metric: "m".into(), fail_rate: false, relative: false, points });
        assert_eq!(s.matches("<circle").count(), 16);
        assert!(!s.contains("(-20.0%)</text>"), "no value labels when crowded");
        assert!(s.contains(">14<"), "fixes numbered: {s}");
        assert!(s.contains("(-20.0%)</title>"), "the value is in the dot's tooltip");
    }
}
