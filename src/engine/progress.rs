//! How far a long import has come, said in words: messages, rate and,
//! when the total is known, the time left. `ingest` shows it in its
//! progress bar on a terminal and logs it otherwise; `run` logs it while a
//! pass over a source takes long (the first pass over a large inbox).

use std::time::{Duration, Instant};

use super::Progress;

/// How often a progress line is logged.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// Rate and time left of a run over `total` units (of
/// [`Progress::offset`]: bytes of an mbox, commits of a public-inbox).
pub struct Meter {
    started: Instant,
    last_log: Instant,
    /// What the run is over, for the log lines.
    what: String,
    total: Option<u64>,
}

impl Meter {
    pub fn new(what: impl Into<String>, total: Option<u64>) -> Meter {
        let now = Instant::now();
        Meter { started: now, last_log: now, what: what.into(), total: total.filter(|&t| t > 0) }
    }

    /// Messages a second since the start.
    pub fn rate(&self, p: &Progress) -> f64 {
        let secs = self.started.elapsed().as_secs_f64();
        if secs > 0.0 { p.messages as f64 / secs } else { 0.0 }
    }

    /// The time left, when the total is known and work has been done.
    pub fn eta(&self, p: &Progress) -> Option<Duration> {
        let (total, done) = (self.total?, p.offset?);
        if done == 0 || done > total {
            return None;
        }
        let per_unit = self.started.elapsed().as_secs_f64() / done as f64;
        Some(Duration::from_secs_f64(per_unit * (total - done) as f64))
    }

    /// "12,345 messages, 6,100/s, about 3m12s left".
    pub fn describe(&self, p: &Progress) -> String {
        let mut s = format!("{} messages, {}/s", thousands(p.messages), thousands(self.rate(p) as u64));
        if let Some(eta) = self.eta(p) {
            s.push_str(&format!(", about {} left", duration(eta)));
        }
        s
    }

    /// Logs a progress line if [`LOG_EVERY`] has passed since the last.
    pub fn log(&mut self, p: &Progress) {
        if self.last_log.elapsed() < LOG_EVERY {
            return;
        }
        self.last_log = Instant::now();
        let eta = self.eta(p).map(|d| d.as_secs());
        tracing::info!(
            target: "lkpbot::progress",
            source = %self.what,
            messages = p.messages,
            rate = self.rate(p).round(),
            eta_seconds = eta,
            "{}",
            self.describe(p)
        );
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_durations_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_027_780), "1,027,780");
        assert_eq!(duration(Duration::from_secs(59)), "59s");
        assert_eq!(duration(Duration::from_secs(192)), "3m12s");
        assert_eq!(duration(Duration::from_secs(7260)), "2h01m");
    }

    #[test]
    fn no_eta_without_a_total() {
        let m = Meter::new("x", None);
        assert_eq!(m.eta(&Progress { messages: 5, offset: Some(5) }), None);
        let m = Meter::new("x", Some(0));
        assert_eq!(m.eta(&Progress { messages: 5, offset: Some(5) }), None);
        let m = Meter::new("x", Some(10));
        assert!(m.eta(&Progress { messages: 5, offset: Some(5) }).is_some());
        assert_eq!(m.eta(&Progress { messages: 5, offset: None }), None);
    }
}
