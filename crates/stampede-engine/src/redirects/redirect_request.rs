//! The request of a redirect's hop (redirect.rs), made from the request
//! that was redirected: the request line naming the new path, the method
//! and body kept or dropped, the `Host` header for another origin. Works on
//! whole HTTP/1.x requests as the engine sends them.

/// The hop's request from the request that was redirected (`original`, a
/// whole HTTP/1.x request): its request line names `path`, and unless
/// `keep_method` it is a GET without a body (Content-Length,
/// Transfer-Encoding and Content-Type dropped); `host`: the `Host` header's
/// new value (a hop to another origin). Other headers are kept.
pub(crate) fn hop_request(
    original: &[u8],
    path: &[u8],
    keep_method: bool,
    host: Option<&[u8]>,
    out: &mut Vec<u8>,
) {
    out.clear();
    let head_end = find(original, b"\r\n\r\n").map_or(original.len(), |at| at + 4);
    let (head, body) = original.split_at(head_end);
    let line_end = find(head, b"\r\n").unwrap_or(head.len());
    let line = &head[..line_end];
    let mut words = line.splitn(3, |&b| b == b' ');
    let method = words.next().unwrap_or(b"GET");
    let _target = words.next();
    let version = words.next().unwrap_or(b"HTTP/1.1");
    // A HEAD stays a HEAD (it has no body to drop).
    let keep_method = keep_method || method == b"HEAD";
    out.extend_from_slice(if keep_method { method } else { b"GET" });
    out.push(b' ');
    out.extend_from_slice(path);
    out.push(b' ');
    out.extend_from_slice(version);
    let mut at = line_end;
    while at + 2 <= head.len() {
        let end = find(&head[at + 2..], b"\r\n").map_or(head.len(), |i| at + 2 + i);
        let field = &head[at + 2..end];
        if field.is_empty() {
            break;
        }
        let dropped = !keep_method
            && [
                &b"content-length:"[..],
                b"transfer-encoding:",
                b"content-type:",
            ]
            .iter()
            .any(|name| starts_with_name(field, name));
        match host {
            Some(host) if starts_with_name(field, b"host:") => {
                out.extend_from_slice(b"\r\nHost: ");
                out.extend_from_slice(host);
            }
            _ if !dropped => {
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(field);
            }
            _ => {}
        }
        at = end;
    }
    out.extend_from_slice(b"\r\n\r\n");
    if keep_method {
        out.extend_from_slice(body);
    }
}

/// The request target of a whole request's request line.
pub(crate) fn request_path(request: &[u8]) -> &[u8] {
    let line_end = find(request, b"\r\n").unwrap_or(request.len());
    request[..line_end]
        .split(|&b| b == b' ')
        .nth(1)
        .unwrap_or(b"/")
}

/// The value of header `name` (lowercase) in a whole request's head.
pub(crate) fn header_value<'a>(request: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let head_end = find(request, b"\r\n\r\n").unwrap_or(request.len());
    request[..head_end]
        .split(|&b| b == b'\n')
        .skip(1)
        .map(<[u8]>::trim_ascii)
        .find(|field| {
            field.len() > name.len() && field[name.len()] == b':' && starts_with_name(field, name)
        })
        .map(|field| field[name.len() + 1..].trim_ascii())
}

/// True when header `field` starts with `name` (any case).
fn starts_with_name(field: &[u8], name: &[u8]) -> bool {
    field.len() >= name.len() && field[..name.len()].eq_ignore_ascii_case(name)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_post_becomes_a_get_unless_307_or_308() {
        let post = b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-A: 1\r\n\r\n{}";
        let mut out = Vec::new();
        hop_request(post, b"/home", false, None, &mut out);
        assert_eq!(out, b"GET /home HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\r\n");
        hop_request(post, b"/again", true, None, &mut out);
        assert_eq!(
            out,
            b"POST /again HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-A: 1\r\n\r\n{}"
        );
        assert_eq!(request_path(post), b"/login");
    }

    #[test]
    fn another_origin_gets_its_host_header() {
        let get = b"GET /a HTTP/1.1\r\nhost: 127.0.0.1:1\r\nX-A: 1\r\n\r\n";
        let mut out = Vec::new();
        hop_request(get, b"/b", false, Some(b"other.test:2"), &mut out);
        assert_eq!(
            out,
            b"GET /b HTTP/1.1\r\nHost: other.test:2\r\nX-A: 1\r\n\r\n"
        );
        assert_eq!(header_value(get, b"host"), Some(&b"127.0.0.1:1"[..]));
        assert_eq!(header_value(get, b"x-b"), None);
    }
}
