//! Test routes for sessions and checks: `POST /login` hands out
//! a token (in the JSON body and as a `sid` cookie), `GET /me` answers 200
//! only with that token (`Authorization: Bearer …`) or cookie and 401
//! otherwise, `/json` echoes the request body as `application/json`, and
//! `/redirect/{n}` (routes.rs) answers 302 down to `/redirect/0`'s 200.
//! Tokens are derived from the login body, so any worker can verify one
//! without shared state: `tok-` and 16 hex digits.

use crate::reply::Outcome;
use crate::response::{self, Exchange};

/// `/json`: the request body (or `{}`) back as `application/json`.
pub(crate) fn json(body: &[u8], x: &Exchange, out: &mut Vec<u8>) -> Outcome {
    let body = if body.is_empty() { &b"{}"[..] } else { body };
    Outcome::done(200, response::whole(out, x, 200, "application/json", body))
}

fn token_of(body: &[u8]) -> String {
    // FNV-1a: stable across workers and runs, no state to share.
    let hash = body.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// `POST /login`: a token from the body, in the JSON and as a cookie.
pub(crate) fn login(body: &[u8], x: &Exchange, out: &mut Vec<u8>) -> Outcome {
    let token = token_of(body);
    let body = format!("{{\"token\":\"tok-{token}\",\"ok\":true}}");
    let cookie = format!("Set-Cookie: sid=s-{token}; Path=/\r\n");
    response::head(
        out,
        x,
        200,
        Some("application/json"),
        response::Len::Known(body.len()),
        cookie.as_bytes(),
    );
    if x.head_only {
        return Outcome::done(200, 0);
    }
    out.extend_from_slice(body.as_bytes());
    Outcome::done(200, body.len())
}

/// The first value of header `name` in a raw head (ASCII case-insensitive).
fn header<'a>(raw_head: &'a [u8], name: &str) -> Option<&'a [u8]> {
    raw_head.split(|&b| b == b'\n').skip(1).find_map(|line| {
        let colon = line.iter().position(|&b| b == b':')?;
        let (field, value) = line.split_at(colon);
        field
            .eq_ignore_ascii_case(name.as_bytes())
            .then(|| value[1..].trim_ascii())
    })
}

/// `GET /me`: 200 with the token of a login (bearer or cookie), 401 without.
pub(crate) fn me(raw_head: &[u8], x: &Exchange, out: &mut Vec<u8>) -> Outcome {
    let bearer = header(raw_head, "authorization")
        .and_then(|v| v.strip_prefix(b"Bearer tok-"))
        .filter(|t| t.len() == 16);
    let cookie = header(raw_head, "cookie").and_then(|v| {
        v.split(|&b| b == b';')
            .map(<[u8]>::trim_ascii)
            .find_map(|c| c.strip_prefix(b"sid=s-"))
            .filter(|t| t.len() == 16)
    });
    match bearer.or(cookie) {
        Some(token) => {
            let body = format!(
                "{{\"ok\":true,\"token\":\"{}\"}}",
                String::from_utf8_lossy(token)
            );
            Outcome::done(
                200,
                response::whole(out, x, 200, "application/json", body.as_bytes()),
            )
        }
        None => Outcome::done(
            401,
            response::whole(
                out,
                x,
                401,
                "application/json",
                b"{\"ok\":false,\"error\":\"no token\"}",
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_stable_and_headers_found() {
        assert_eq!(token_of(b"ann"), token_of(b"ann"));
        assert_ne!(token_of(b"ann"), token_of(b"bob"));
        let head = b"GET /me HTTP/1.1\r\nHost: x\r\nauthorization: Bearer tok-1\r\n\r\n";
        assert_eq!(header(head, "Authorization"), Some(&b"Bearer tok-1"[..]));
        assert_eq!(header(head, "cookie"), None);
    }
}
