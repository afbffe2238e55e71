//! A virtual user's cookie jar (`--cookie-jar`): `Set-Cookie`
//! of each response kept by name (a `Max-Age=0` or empty value deletes it),
//! and every later request of the user carries them in one `Cookie` header
//! (merged into the request's own `Cookie` header when it has one). Paths,
//! domains and expiry dates are not tracked: a load test talks to one origin.

/// Cookies by name, in the order first set.
#[derive(Debug, Default, Clone)]
pub(crate) struct CookieJar {
    cookies: Vec<(Vec<u8>, Vec<u8>)>,
}

impl CookieJar {
    /// Takes in one `Set-Cookie` header value.
    pub(crate) fn absorb(&mut self, set_cookie: &[u8]) {
        let mut parts = set_cookie.split(|&b| b == b';');
        let Some(pair) = parts.next() else { return };
        let Some(eq) = pair.iter().position(|&b| b == b'=') else {
            return;
        };
        let name = pair[..eq].trim_ascii();
        let value = pair[eq + 1..].trim_ascii();
        if name.is_empty() {
            return;
        }
        let expired = parts.any(|attribute| {
            let attribute = attribute.trim_ascii();
            attribute.len() > 8
                && attribute[..8].eq_ignore_ascii_case(b"max-age=")
                && attribute[8..]
                    .trim_ascii()
                    .first()
                    .is_some_and(|&b| b == b'0' || b == b'-')
        });
        let known = self.cookies.iter().position(|(n, _)| n == name);
        match (known, expired || value.is_empty()) {
            (Some(at), true) => {
                self.cookies.remove(at);
            }
            (Some(at), false) => {
                let kept = &mut self.cookies[at].1;
                kept.clear();
                kept.extend_from_slice(value);
            }
            (None, true) => {}
            (None, false) => self.cookies.push((name.to_vec(), value.to_vec())),
        }
    }

    /// Writes the jar into `request` (a whole HTTP/1.x request): appended
    /// to its `Cookie` header, or as a new header before the blank line.
    pub(crate) fn apply(&self, request: &mut Vec<u8>) {
        if self.cookies.is_empty() {
            return;
        }
        let Some(head_end) = find(request, b"\r\n\r\n") else {
            return;
        };
        let mut text = Vec::new();
        for (name, value) in &self.cookies {
            if !text.is_empty() {
                text.extend_from_slice(b"; ");
            }
            text.extend_from_slice(name);
            text.push(b'=');
            text.extend_from_slice(value);
        }
        match cookie_line_end(&request[..head_end + 2]) {
            Some(line_end) => {
                let mut insert = b"; ".to_vec();
                insert.extend_from_slice(&text);
                request.splice(line_end..line_end, insert);
            }
            None => {
                let mut insert = b"Cookie: ".to_vec();
                insert.extend_from_slice(&text);
                insert.extend_from_slice(b"\r\n");
                request.splice(head_end + 2..head_end + 2, insert);
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Where the request head's `Cookie` line ends (at its CR), if it has one.
fn cookie_line_end(head: &[u8]) -> Option<usize> {
    let mut at = find(head, b"\r\n")? + 2;
    while at < head.len() {
        let end = at + find(&head[at..], b"\r\n")?;
        let line = &head[at..end];
        if line.len() > 7 && line[..7].eq_ignore_ascii_case(b"cookie:") {
            return Some(end);
        }
        at = end + 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_replaces_and_deletes_by_name() {
        let mut jar = CookieJar::default();
        jar.absorb(b"sid=s-1; Path=/; HttpOnly");
        jar.absorb(b"theme=dark");
        jar.absorb(b"sid=s-2");
        let mut request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
        jar.apply(&mut request);
        assert_eq!(
            request,
            b"GET / HTTP/1.1\r\nHost: x\r\nCookie: sid=s-2; theme=dark\r\n\r\n"
        );
        jar.absorb(b"theme=gone; Max-Age=0");
        let mut request = b"POST / HTTP/1.1\r\ncookie: a=1\r\n\r\nbody".to_vec();
        jar.apply(&mut request);
        assert_eq!(
            request,
            b"POST / HTTP/1.1\r\ncookie: a=1; sid=s-2\r\n\r\nbody"
        );
    }

    #[test]
    fn an_empty_jar_changes_nothing() {
        let jar = CookieJar::default();
        let mut request = b"GET / HTTP/1.1\r\n\r\n".to_vec();
        jar.apply(&mut request);
        assert_eq!(request, b"GET / HTTP/1.1\r\n\r\n");
    }
}
