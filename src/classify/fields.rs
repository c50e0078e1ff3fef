//! Header fields every robot template shares (`url:`, `base:`, `patch
//! link:`, `config:`, `compiler:`, the `Reported-by:`/`Closes:`/`Link:`
//! tags), read the same way for perf, dmesg and build reports.

use regex::Regex;
use std::sync::LazyLock;

use serde::Serialize;

pub(super) static URL: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*url:\s+(\S+)").expect("static regex"));
static BASE: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*base:\s+(\S+)(?:[ \t]+(\S+))?").expect("static regex"));
pub(super) static PATCH_LINK: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*patch\s+link:\s+(\S+)").expect("static regex"));
pub(super) static PATCH_SUBJECT: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*patch\s+subject:\s+(.+?)\s*$").expect("static regex"));
pub(super) static CONFIG: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*config:\s+(\S+)").expect("static regex"));
pub(super) static COMPILER: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^\s*compiler:\s+(.+?)\s*$").expect("static regex"));
static REPORTED_BY: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^[\s|]*Reported-by:\s*(.+?)\s*$").expect("static regex"));
static CLOSES: LazyLock<Regex> =
    LazyLock::new(|| crate::text::regex(r"(?m)^[\s|]*Closes:\s*(\S+)").expect("static regex"));
static LINK: LazyLock<Regex> = LazyLock::new(|| crate::text::regex(r"(?m)^[\s|]*Link:\s*(\S+)").expect("static regex"));

/// The first capture group of `re` in `text`, trimmed, if not empty.
pub(super) fn cap1(re: &Regex, text: &str) -> Option<String> {
    re.captures(text).and_then(|c| c.get(1)).map(|m| m.as_str().trim().to_string()).filter(|s| !s.is_empty())
}

/// `base: https://git.kernel.org/.../mm.git mm-everything`, `base: next-20260130`.
pub(super) fn base(header: &str) -> Option<String> {
    BASE.captures(header).map(|c| {
        let a = c.get(1).map_or("", |m| m.as_str());
        c.get(2).map_or_else(|| a.to_string(), |b| format!("{a} {}", b.as_str()))
    })
}

/// The tags the robot asks a fix to carry.
/// The `Reported-by:`/`Closes:`/`Link:` tags a report asks a fix to carry.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Tags {
    pub reported_by: Option<String>,
    pub closes: Option<String>,
    pub link: Option<String>,
}

pub(super) fn tags(header: &str) -> Tags {
    Tags { reported_by: cap1(&REPORTED_BY, header), closes: cap1(&CLOSES, header), link: cap1(&LINK, header) }
}
