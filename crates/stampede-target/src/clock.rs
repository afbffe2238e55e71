//! Wall-clock strings that change once a second: the HTTP `Date` value and the Common
//! Log Format timestamp. Each worker formats them once per second (never per response).

use std::time::{SystemTime, UNIX_EPOCH};

/// Length of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub(crate) const HTTP_DATE_LEN: usize = 29;

/// The formatted strings for one wall-clock second.
pub(crate) struct WallStrings {
    /// IMF-fixdate for the `Date` header.
    pub http: [u8; HTTP_DATE_LEN],
    /// `[10/Oct/2000:13:55:36 +0000]` for the access log.
    pub clf: [u8; 28],
}

impl WallStrings {
    /// Formats the current second.
    pub(crate) fn now() -> Self {
        Self::at(SystemTime::now())
    }

    /// Formats the given instant (truncated to the second).
    pub(crate) fn at(t: SystemTime) -> Self {
        let mut http = [b' '; HTTP_DATE_LEN];
        let s = httpdate::fmt_http_date(t);
        let n = s.len().min(HTTP_DATE_LEN);
        http[..n].copy_from_slice(&s.as_bytes()[..n]);
        WallStrings {
            http,
            clf: clf_date(t),
        }
    }
}

/// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn clf_date(t: SystemTime) -> [u8; 28] {
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    let (hh, mm, ss) = (sod / 3600, (sod / 60) % 60, sod % 60);
    let mut out = *b"[01/Jan/1970:00:00:00 +0000]";
    let two = |v: i64| [b'0' + (v / 10) as u8, b'0' + (v % 10) as u8];
    out[1..3].copy_from_slice(&two(d as i64));
    out[4..7].copy_from_slice(MONTHS[(m - 1) as usize]);
    let y = y.clamp(0, 9999);
    out[8..12].copy_from_slice(&[
        b'0' + (y / 1000) as u8,
        b'0' + (y / 100 % 10) as u8,
        b'0' + (y / 10 % 10) as u8,
        b'0' + (y % 10) as u8,
    ]);
    out[13..15].copy_from_slice(&two(hh));
    out[16..18].copy_from_slice(&two(mm));
    out[19..21].copy_from_slice(&two(ss));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_known_instants() {
        let t = UNIX_EPOCH + Duration::from_secs(971_186_136); // 2000-10-10 13:55:36 UTC
        let w = WallStrings::at(t);
        assert_eq!(&w.clf, b"[10/Oct/2000:13:55:36 +0000]");
        assert_eq!(&w.http, b"Tue, 10 Oct 2000 13:55:36 GMT");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(&WallStrings::at(leap).clf[..12], b"[29/Feb/2000");
    }
}
