//! Robot subject lines, every era:
//!
//! ```text
//! [lkp-robot] [mm/cma] 2b0f904a5a: fio.read_bw_MBps -16.1% regression      (2017-2018)
//! [LKP] [lkp-robot] [mm] e27be240df: will-it-scale.per_process_ops -27.2% regression
//! [xfs] 490d451fa5: aim7.jobs-per-min -6.3% regression                      (2019-2023)
//! [linus:master] [mm] 01b9da291c: stress-ng.switch.ops_per_sec 67.7% regression   (late 2024-, unsigned)
//! [linux-next:master] [block] ec7f31b2a2: BUG:unable_to_handle_page_fault_for_address
//! [pm:bleeding-edge 51/55] drivers/powercap/intel_rapl.c:1148:2: note: ...  (build)
//! [cgroup:for-5.6] BUILD SUCCESS 3bc0bb36fa30e95ca829e9cf480e1ef7f7638333     (build summary)
//! ```

use regex::Regex;
use std::sync::LazyLock;

use super::num::{Num, parse_number};
use crate::model::Direction;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubjectFacts {
    /// Bracketed tags before the commit, reply prefixes removed.
    pub tags: Vec<String>,
    /// From a `[tree:branch]` tag.
    pub tree: Option<String>,
    pub branch: Option<String>,
    /// `51/55` in `[pm:bleeding-edge 51/55]`.
    pub series_pos: Option<String>,
    pub short_sha: Option<String>,
    /// What follows `sha: `: a metric with its change, or a signature.
    pub what: Option<String>,
    pub metric: Option<String>,
    pub change_pct: Option<Num>,
    /// True when the change carries an explicit `+` or `-`.
    pub signed: bool,
    pub direction: Option<Direction>,
    pub build_status: Option<String>,
    pub head_sha: Option<String>,
}

static REPLY: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)^\s*((re|aw|fwd?)\s*:\s*|\[(lkp|lkp-robot)\]\s*)+").expect("static regex")
});
static TAG: LazyLock<Regex> = LazyLock::new(|| crate::text::regex(r"^\[([^\[\]]*)\]\s*").expect("static regex"));
static SHA_WHAT: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"^([0-9a-f]{7,40})?\s*:\s+(.+)$").expect("static regex"));
static PERF: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"(?i)^(\S+)\s+([+-]?)(\d+(?:\.\d+)?)%\s+(regression|improvement)\b").expect("static regex")
});
static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"^BUILD\s+(SUCCESS|REGRESSION)((?:\s+WITH\s+[A-Z ]+?)?)(?:\s+([0-9a-f]{7,40}))?\s*$")
        .expect("static regex")
});
static TREE_TAG: LazyLock<Regex> = LazyLock::new(|| {
    crate::text::regex(r"^([A-Za-z0-9][\w.+-]*):([\w./+-]+)(?:\s+(\d+/\d+))?$").expect("static regex")
});

/// Removes `Re:`, `Fwd:`, `[LKP]` and `[lkp-robot]` prefixes, repeatedly.
pub fn strip_reply_prefixes(subject: &str) -> &str {
    let mut s = subject.trim();
    while let Some(m) = REPLY.find(s) {
        if m.end() == 0 {
            break;
        }
        s = s[m.end()..].trim_start();
        // `[LKP] Re: [lkp-robot] Re: ...` needs several rounds; a list tag
        // such as `[LTP]` in front of a reply is dropped too.
        if let Some(c) = TAG.captures(s) {
            let inner = c.get(1).map_or("", |m| m.as_str());
            if inner.eq_ignore_ascii_case("LTP") || inner.eq_ignore_ascii_case("kbuild-all") {
                s = s[c.get(0).map_or(0, |m| m.end())..].trim_start();
            }
        }
    }
    s
}

/// Drops every leading reply prefix (`Re:`, `Fwd:`, `[LKP]`,
/// `[lkp-robot]`) and bracketed tag (`[linus:master]`, `[mm]`,
/// `[PATCH v5 2/3]`, list tags), however they are interleaved.
pub fn strip_tags(subject: &str) -> &str {
    let mut s = strip_reply_prefixes(subject);
    loop {
        let before = s.len();
        if let Some(rest) = s.strip_prefix('[')
            && let Some(end) = rest.find(']')
        {
            s = rest[end + 1..].trim_start();
        }
        s = strip_reply_prefixes(s);
        if s.len() == before {
            return s;
        }
    }
}

pub fn parse(subject: &str) -> SubjectFacts {
    let mut f = SubjectFacts::default();
    let mut s = strip_reply_prefixes(subject);
    while let Some(c) = TAG.captures(s) {
        let inner = c.get(1).map_or("", |m| m.as_str()).trim().to_string();
        s = &s[c.get(0).map_or(0, |m| m.end())..];
        if f.tree.is_none()
            && !inner.to_ascii_uppercase().contains("PATCH")
            && let Some(t) = TREE_TAG.captures(&inner)
        {
            f.tree = t.get(1).map(|m| m.as_str().to_string());
            f.branch = t.get(2).map(|m| m.as_str().to_string());
            f.series_pos = t.get(3).map(|m| m.as_str().to_string());
        }
        f.tags.push(inner);
        // A reply prefix may follow a tag: `[LKP] Re: [mm/mremap] ...`.
        s = strip_reply_prefixes(s);
    }
    let s = s.trim();
    if let Some(c) = SUMMARY.captures(s) {
        let with = c.get(2).map_or("", |m| m.as_str()).trim();
        let status = c.get(1).map_or("", |m| m.as_str());
        f.build_status = Some(if with.is_empty() { status.to_string() } else { format!("{status} {with}") });
        f.head_sha = c.get(3).map(|m| m.as_str().to_string());
        return f;
    }
    if let Some(c) = SHA_WHAT.captures(s) {
        f.short_sha = c.get(1).map(|m| m.as_str().to_string());
        let what = c.get(2).map_or("", |m| m.as_str()).trim().to_string();
        if let Some(p) = PERF.captures(&what) {
            f.metric = p.get(1).map(|m| m.as_str().to_string());
            let sign = p.get(2).map_or("", |m| m.as_str());
            f.signed = !sign.is_empty();
            f.change_pct =
                p.get(3).and_then(|m| parse_number(m.as_str())).map(|n| if sign == "-" { Num(-n.0) } else { n });
            f.direction = p.get(4).and_then(|m| Direction::parse(m.as_str()));
        }
        f.what = Some(what);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eras() {
        let f = parse("Re: [lkp-robot] [mm/cma] 2b0f904a5a: fio.read_bw_MBps -16.1% regression");
        assert_eq!(f.short_sha.as_deref(), Some("2b0f904a5a"));
        assert_eq!(f.metric.as_deref(), Some("fio.read_bw_MBps"));
        assert_eq!(f.change_pct, Some(Num(-16.1)));
        assert!(f.signed);
        assert_eq!(f.tree, None);

        let f = parse("[linus:master] [mm]  01b9da291c: stress-ng.switch.ops_per_sec 67.7% regression");
        assert_eq!((f.tree.as_deref(), f.branch.as_deref()), (Some("linus"), Some("master")));
        assert_eq!(f.change_pct, Some(Num(67.7)));
        assert!(!f.signed);
        assert_eq!(f.direction, Some(Direction::Regression));

        let f = parse("[LKP] Re: [mm/mremap] ecf8443e51: vm-scalability.throughput -29.4% regression");
        assert_eq!(f.short_sha.as_deref(), Some("ecf8443e51"));
        assert_eq!(f.tags, vec!["mm/mremap"]);

        let f = parse("[linux-next:master] [block] ec7f31b2a2: BUG:unable_to_handle_page_fault_for_address");
        assert_eq!(f.what.as_deref(), Some("BUG:unable_to_handle_page_fault_for_address"));
        assert_eq!(f.metric, None);
    }

    #[test]
    fn build_subjects() {
        let f = parse(
            "[rafael-pm:bleeding-edge] BUILD SUCCESS WITH UNVERIFIED WARNING 3cf2b08de92fc53cbd5632a8d47194932da78534",
        );
        assert_eq!(f.build_status.as_deref(), Some("SUCCESS WITH UNVERIFIED WARNING"));
        assert_eq!(f.tree.as_deref(), Some("rafael-pm"));
        let f = parse("[pm:bleeding-edge 51/55] drivers//powercap/intel_rapl.c:1148:2: note: in expansion");
        assert_eq!(f.series_pos.as_deref(), Some("51/55"));
        assert_eq!(f.branch.as_deref(), Some("bleeding-edge"));
        assert_eq!(f.short_sha, None);
    }
}
