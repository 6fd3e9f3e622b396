//! RFC 3339 timestamps (`2025-06-02T18:46:59.937Z`, `…+02:00`) as seconds
//! since the Unix epoch, for readers that time an LLM call from the
//! timestamps of its lines. Anything else is `None`: a duration is only
//! given where both ends are read exactly.

/// Seconds since 1970-01-01T00:00:00Z, or `None` when `ts` is not an
/// RFC 3339 date-time.
pub fn seconds(ts: &str) -> Option<f64> {
    parts(ts).map(|(whole, fraction)| whole as f64 + fraction)
}

/// Whole seconds since the epoch and the fraction of the next, apart, so
/// that the difference of two close timestamps keeps its milliseconds.
fn parts(ts: &str) -> Option<(i64, f64)> {
    let b = ts.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| num_of(ts.get(r)?);
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let mut rest = ts.get(19..)?;
    let mut fraction = 0.0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.len() - frac.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        fraction = format!("0.{}", &frac[..digits]).parse().ok()?;
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let (h, m) = (num_of(rest.get(1..3)?)?, num_of(rest.get(4..6)?)?);
            sign * (h * 3600 + m * 60)
        }
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some((secs, fraction))
}

fn num_of(s: &str) -> Option<i64> {
    s.bytes()
        .all(|c| c.is_ascii_digit())
        .then(|| s.parse().ok())
        .flatten()
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (Hinnant's
/// algorithm); the one calendar every reader's timestamps go through.
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds from `start` to `end`, when both are timestamps and `end` is
/// not before `start`.
pub fn between(start: Option<&str>, end: Option<&str>) -> Option<f64> {
    let ((s1, f1), (s2, f2)) = (parts(start?)?, parts(end?)?);
    let d = (s2 - s1) as f64 + (f2 - f1);
    (d >= 0.0).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_read_exactly() {
        assert_eq!(seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(seconds("2000-03-01T00:00:00Z"), Some(951_868_800.0));
        assert_eq!(seconds("2025-06-02T18:46:59.5Z"), Some(1_748_890_019.5));
        assert_eq!(
            seconds("2025-06-02T20:46:59.5+02:00"),
            seconds("2025-06-02T18:46:59.5Z")
        );
        for bad in [
            "",
            "2025-06-02",
            "2025-13-02T00:00:00Z",
            "2025-06-02T18:46:59",
            "x025-06-02T18:46:59Z",
            "2025-06-02T18:46:59.Z",
        ] {
            assert_eq!(seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn durations_need_both_ends_in_order() {
        let (a, b) = ("2025-06-02T18:46:59.250Z", "2025-06-02T18:47:01.750Z");
        assert_eq!(between(Some(a), Some(b)), Some(2.5));
        assert_eq!(between(Some(b), Some(a)), None);
        assert_eq!(between(None, Some(a)), None);
    }
}
