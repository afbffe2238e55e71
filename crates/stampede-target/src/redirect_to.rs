//! `/redirect-to?url=URL` (httpbin's route): a 302 whose
//! `Location` is `URL`, percent-decoded (`+` is a space, as in any form
//! query), so a test can send a client anywhere, relative or absolute,
//! same origin or another. `&status_code=301|302|303|307|308` picks the
//! status. A missing `url`, a status that is not a redirect, or a URL that
//! would break the header (a control character, not UTF-8) is a 400.

use crate::reply::Outcome;
use crate::response::{self, Exchange, Len};
use percent_encoding::percent_decode_str;

/// The statuses `status_code` may ask for.
const REDIRECTS: [u16; 5] = [301, 302, 303, 307, 308];

/// The response to `/redirect-to` with the request target `target` (path and query).
pub(crate) fn redirect_to(target: &str, x: &Exchange, out: &mut Vec<u8>) -> Outcome {
    match location_of(target) {
        Ok((location, status)) => {
            let header = format!("Location: {location}\r\n");
            response::head(
                out,
                x,
                status,
                Some("text/plain"),
                Len::Known(0),
                header.as_bytes(),
            );
            Outcome::done(status, 0)
        }
        Err(why) => Outcome::done(
            400,
            response::whole(out, x, 400, "text/plain", why.as_bytes()),
        ),
    }
}

/// The decoded `url` and the status of the redirect, or why there is none.
fn location_of(target: &str) -> Result<(String, u16), &'static str> {
    let query = target.split_once('?').map_or("", |(_, q)| q);
    let query = query.split('#').next().unwrap_or(query);
    let mut url = None;
    let mut status = 302;
    for pair in query.split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "url" => url = Some(decode(value)?),
            "status_code" => {
                status = decode(value)?
                    .parse()
                    .ok()
                    .filter(|s| REDIRECTS.contains(s))
                    .ok_or("status_code must be 301, 302, 303, 307 or 308\n")?
            }
            _ => {}
        }
    }
    let url = url
        .filter(|u| !u.is_empty())
        .ok_or("redirect-to needs ?url=URL\n")?;
    Ok((url, status))
}

/// Percent-decodes a query value, refusing what cannot go in a header.
fn decode(value: &str) -> Result<String, &'static str> {
    let spaced = value.replace('+', " ");
    let decoded = percent_decode_str(&spaced)
        .decode_utf8()
        .map_err(|_| "url is not UTF-8 once decoded\n")?;
    if decoded.chars().any(char::is_control) {
        return Err("url may not hold control characters\n");
    }
    Ok(decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_decoded_and_the_status_chosen() {
        assert_eq!(
            location_of("/redirect-to?url=%2Fredirect%2F1"),
            Ok(("/redirect/1".into(), 302))
        );
        assert_eq!(
            location_of("/redirect-to?x=1&url=http%3A%2F%2Fa.test%2Fb%3Fc%3Dd&status_code=307"),
            Ok(("http://a.test/b?c=d".into(), 307))
        );
        assert_eq!(
            location_of("/redirect-to?url=/a+b"),
            Ok(("/a b".into(), 302))
        );
    }

    #[test]
    fn what_cannot_be_a_location_is_refused() {
        for bad in [
            "/redirect-to",
            "/redirect-to?url=",
            "/redirect-to?url=%0d%0aSet-Cookie:x",
            "/redirect-to?url=%ff",
            "/redirect-to?url=/a&status_code=200",
        ] {
            assert!(location_of(bad).is_err(), "{bad}");
        }
    }
}
