//! Numbers as the robot prints them: `38288993`, `2.296e+09`, `-67.7`.

use serde::{Serialize, Serializer};

/// A finite number that serialises as an integer when it is one, so
/// `38288993` stays `38288993` in JSON and `3` does not become `3.0`.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Num(pub f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.fract() == 0.0 && v.abs() < 9.0e15 {
            #[allow(clippy::cast_possible_truncation)]
            s.serialize_i64(v as i64)
        } else {
            s.serialize_f64(v)
        }
    }
}

/// Parses a decimal or scientific number with an optional sign; rejects
/// NaN, infinities, hex and anything with letters other than one `e`.
pub fn parse_number(t: &str) -> Option<Num> {
    let b = t.as_bytes();
    if b.is_empty() || b.len() > 32 {
        return None;
    }
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let first = body.bytes().next()?;
    if !first.is_ascii_digit() && first != b'.' {
        return None;
    }
    if !body.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-')) {
        return None;
    }
    let v: f64 = t.parse().ok()?;
    v.is_finite().then_some(Num(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_number("38288993"), Some(Num(38288993.0)));
        assert_eq!(parse_number("2.296e+09"), Some(Num(2.296e9)));
        assert_eq!(parse_number("-67.7"), Some(Num(-67.7)));
        assert_eq!(parse_number("+0.1"), Some(Num(0.1)));
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number("NaN"), None);
        assert_eq!(parse_number("0x10"), None);
        assert_eq!(parse_number("e5"), None);
        assert_eq!(parse_number(""), None);
    }

    #[test]
    fn serialises_integers_without_fraction() {
        assert_eq!(serde_json::to_string(&Num(3.0)).unwrap(), "3");
        assert_eq!(serde_json::to_string(&Num(-67.7)).unwrap(), "-67.7");
    }
}
