//! Reading a `retry-after` header: delay-seconds (an integer, or a decimal as some servers
//! send, finite and not negative) or an HTTP date in the IMF-fixdate form
//! (`Sun, 06 Nov 1994 08:49:37 GMT`; a date in the past means now). Anything else — `inf`,
//! `NaN`, `-1`, the obsolete RFC 850 and asctime date forms — reads as absent, so the usual
//! backoff applies. A value is clamped to [`RETRY_AFTER_CEILING`], so no value can overflow;
//! whether to wait that long is the transport's call ([`crate::transport::MAX_RETRY_AFTER`]).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The longest delay a `retry-after` value reads as; longer values read as this.
pub const RETRY_AFTER_CEILING: Duration = Duration::from_hours(24);

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const SECONDS_PER_DAY: i64 = 86_400;

/// The delay a `retry-after` value asks for, read at `now`; `None` when it is not a value the
/// header allows.
pub(crate) fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let delay = match value.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds >= 0.0 => {
            let seconds = seconds.min(RETRY_AFTER_CEILING.as_secs_f64());
            Duration::try_from_secs_f64(seconds).ok()?
        }
        Ok(_) => return None,
        Err(_) => until(http_date(value)?, now),
    };
    Some(delay.min(RETRY_AFTER_CEILING))
}

/// From `now` until `at` (seconds since the epoch); zero when `at` is past.
fn until(at: i64, now: SystemTime) -> Duration {
    let now = now.duration_since(UNIX_EPOCH).map_or(0, |elapsed| {
        i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
    });
    u64::try_from(at.saturating_sub(now)).map_or(Duration::ZERO, Duration::from_secs)
}

/// An IMF-fixdate as seconds since the epoch.
fn http_date(value: &str) -> Option<i64> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    if !weekday.ends_with(',') || day.len() != 2 || year.len() != 4 {
        return None;
    }
    let day: i64 = day.parse().ok().filter(|day| (1..=31).contains(day))?;
    let month = MONTHS.iter().position(|name| name == month)?;
    let month = i64::try_from(month).ok()? + 1;
    let year: i64 = year.parse().ok()?;
    let mut clock = time.split(':').map(|part| {
        (part.len() == 2)
            .then(|| part.parse::<i64>().ok())
            .flatten()
    });
    let (Some(Some(hour)), Some(Some(minute)), Some(Some(second)), None) =
        (clock.next(), clock.next(), clock.next(), clock.next())
    else {
        return None;
    };
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn seconds_integer_or_decimal() {
        let now = at(0);
        assert_eq!(parse("0", now), Some(Duration::ZERO));
        assert_eq!(parse(" 7 ", now), Some(Duration::from_secs(7)));
        assert_eq!(parse("1.5", now), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn values_the_header_does_not_allow_read_as_absent() {
        let now = at(0);
        for value in [
            "inf",
            "-inf",
            "NaN",
            "-1",
            "-0.5",
            "",
            "soon",
            "1e",
            "Sun, 06 Nov 1994",
        ] {
            assert_eq!(parse(value, now), None, "{value:?}");
        }
    }

    #[test]
    fn huge_values_are_clamped() {
        let now = at(0);
        assert_eq!(parse("1e308", now), Some(RETRY_AFTER_CEILING));
        assert_eq!(
            parse("18446744073709551616", now),
            Some(RETRY_AFTER_CEILING)
        );
        assert_eq!(
            parse("Fri, 31 Dec 9999 23:59:59 GMT", now),
            Some(RETRY_AFTER_CEILING)
        );
    }

    #[test]
    fn http_dates_count_from_now() {
        // 1994-11-06T08:49:37Z is 784111777 s after the epoch.
        let date = "Sun, 06 Nov 1994 08:49:37 GMT";
        assert_eq!(http_date(date), Some(784_111_777));
        assert_eq!(parse(date, at(784_111_770)), Some(Duration::from_secs(7)));
        assert_eq!(parse(date, at(784_111_800)), Some(Duration::ZERO), "past");
        assert_eq!(http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            http_date("Tue, 29 Feb 2000 12:00:00 GMT"),
            Some(951_825_600)
        );
        assert_eq!(http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None, "RFC 850");
        assert_eq!(http_date("Sun Nov  6 08:49:37 1994"), None, "asctime");
        assert_eq!(http_date("Sun, 06 Nov 1994 25:49:37 GMT"), None);
    }
}
