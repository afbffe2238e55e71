//! `--sse-reconnect`: what a browser's `EventSource` does when the server
//! ends an event stream (WHATWG HTML, "Server-sent events", §9.2.3
//! "Processing model", "reestablish the connection"): it waits the
//! stream's reconnection time, then sends the request again with
//! `Last-Event-ID` set to the last event ID it saw, when it saw one.
//! This file holds the two rules; the tokio HTTP/1.1 slot
//! (drive/sse_reconnect.rs) and HTTP/2's streams (drive/h2/h2_stream.rs)
//! drive them.

use std::time::Duration;

/// The reconnection time before a stream sets one with `retry:`. The
/// standard leaves it to the user agent ("an implementation-defined
/// value, probably in the region of a few seconds", §9.2.2); Chromium
/// waits 3 s (Firefox 5 s): the more common browser's is taken.
pub(crate) const DEFAULT_RECONNECTION_TIME: Duration = Duration::from_millis(3000);

/// The wait before a reconnection: the stream's `retry:` value (ms), else
/// the default.
pub(crate) fn reconnection_delay(retry_ms: Option<u64>) -> Duration {
    retry_ms.map_or(DEFAULT_RECONNECTION_TIME, Duration::from_millis)
}

/// Writes `request` into `out` with `Last-Event-ID: id` among its headers
/// (a `Last-Event-ID` it had is dropped: the stream's ID is the one to
/// send); an empty `id` adds none, as the standard says ("if the last
/// event ID string is not the empty string"). The ID has no CR, LF or NUL
/// (the parser never takes one that has). A request with no head end is
/// copied as it is.
pub(crate) fn with_last_event_id(request: &[u8], id: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") else {
        out.extend_from_slice(request);
        return;
    };
    let name = b"last-event-id:";
    // The request line and the headers, each with its CRLF.
    let head = &request[..end + 2];
    for line in head.split_inclusive(|&b| b == b'\n') {
        let ours = line
            .get(..name.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(name));
        if !ours {
            out.extend_from_slice(line);
        }
    }
    if !id.is_empty() {
        out.extend_from_slice(b"Last-Event-ID: ");
        out.extend_from_slice(id);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(&request[end + 2..]);
}

/// The same rule for a request whose headers are a map (HTTP/2): the
/// user's `Last-Event-ID` replaced by the stream's, none when it is empty.
pub(crate) fn set_last_event_id(headers: &mut http::HeaderMap, id: &[u8]) {
    let name = http::header::HeaderName::from_static("last-event-id");
    headers.remove(&name);
    // The parser never keeps an ID with CR, LF or NUL: it is a valid value.
    if let (false, Ok(value)) = (id.is_empty(), http::HeaderValue::from_bytes(id)) {
        headers.insert(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_event_id_goes_among_the_headers_once() {
        let mut out = Vec::new();
        let get = b"GET /sse/9/1 HTTP/1.1\r\nHost: a\r\n\r\n";
        with_last_event_id(get, b"41", &mut out);
        assert_eq!(
            out,
            b"GET /sse/9/1 HTTP/1.1\r\nHost: a\r\nLast-Event-ID: 41\r\n\r\n"
        );
        // The user's own is replaced; a body stays after the head.
        let post = b"POST / HTTP/1.1\r\nlast-event-id: 1\r\nHost: a\r\n\r\nbody\r\n\r\n";
        with_last_event_id(post, b"7", &mut out);
        assert_eq!(
            out,
            b"POST / HTTP/1.1\r\nHost: a\r\nLast-Event-ID: 7\r\n\r\nbody\r\n\r\n"
        );
        // No ID seen: none sent.
        with_last_event_id(get, b"", &mut out);
        assert_eq!(out, get);
    }

    #[test]
    fn the_last_event_id_replaces_the_users_in_a_header_map() {
        let mut headers = http::HeaderMap::new();
        headers.insert("Last-Event-ID", http::HeaderValue::from_static("1"));
        set_last_event_id(&mut headers, b"41");
        assert_eq!(headers.get_all("last-event-id").iter().count(), 1);
        assert_eq!(headers["last-event-id"], "41");
        set_last_event_id(&mut headers, b"");
        assert!(
            headers.get("last-event-id").is_none(),
            "no ID seen: none sent"
        );
    }

    #[test]
    fn the_delay_is_the_streams_retry_else_three_seconds() {
        assert_eq!(reconnection_delay(Some(250)), Duration::from_millis(250));
        assert_eq!(reconnection_delay(Some(0)), Duration::ZERO);
        assert_eq!(reconnection_delay(None), Duration::from_secs(3));
    }
}
