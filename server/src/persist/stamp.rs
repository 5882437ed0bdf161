//! UTC timestamps in file names (`20261129T231500Z`) and the wall clock.
//!
//! The names of moved-aside and history files carry the time in this compact, sortable form.
//! This module owns only the formatting and parsing; it must not touch the file system.

use std::time::{SystemTime, UNIX_EPOCH};

const MS_PER_DAY: i64 = 86_400_000;

/// Milliseconds since the Unix epoch, now (0 if the clock is before 1970).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Formats `ms` since the epoch as `YYYYMMDDTHHMMSSZ` in UTC, to the second.
pub fn utc_stamp(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    let days = ms.div_euclid(MS_PER_DAY);
    let secs_of_day = ms.rem_euclid(MS_PER_DAY) / 1000;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        secs_of_day / 3600,
        secs_of_day / 60 % 60,
        secs_of_day % 60
    )
}

/// Parses a stamp made by [`utc_stamp`] back to ms since the epoch; `None` if it is not one.
pub fn parse_utc_stamp(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(range)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (h, mi, se) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 59 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    let ms = days * MS_PER_DAY + (h * 3600 + mi * 60 + se) * 1000;
    u64::try_from(ms).ok()
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The day count since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_format_and_parse_back() {
        let cases: &[(u64, &str)] = &[
            (0, "19700101T000000Z"),
            (951_782_400_000, "20000229T000000Z"),
            (1_795_994_100_999, "20261129T231500Z"),
            (4_102_444_799_000, "20991231T235959Z"),
        ];
        for &(ms, text) in cases {
            assert_eq!(utc_stamp(ms), text);
            assert_eq!(parse_utc_stamp(text), Some(ms - ms % 1000), "{text}");
        }
        for bad in
            ["", "2026-11-29T23:15:00Z", "20261329T000000Z", "2026112xT000000Z", "20261129T000000"]
        {
            assert_eq!(parse_utc_stamp(bad), None, "{bad}");
        }
    }
}
