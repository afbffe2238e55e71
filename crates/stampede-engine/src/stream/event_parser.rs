//! The `text/event-stream` format, parsed as a browser's `EventSource`
//! does (WHATWG HTML, "Server-sent events", §9.2.6 "Interpreting an event
//! stream"), sans I/O and incrementally: bytes may split anywhere, a CRLF
//! included. Lines end with CR, LF or CRLF; a leading BOM is dropped; a
//! line starting with `:` is a comment; `data`, `id`, `event` and `retry`
//! are the fields; a blank line dispatches the event when its data buffer
//! is not empty. An event cut short by the end of the stream is not
//! dispatched. Only what a load test counts is kept: that data came, the
//! last event ID and the reconnection time, not the data itself.

/// Bytes of one line kept to read its field name and value; the rest of a
/// longer line (a big `data`) is only scanned for its end.
const LINE_KEPT: usize = 1024;

/// An incremental event-stream parser.
#[derive(Debug, Clone, Default)]
pub(crate) struct EventParser {
    /// The start of the line being read (at most [`LINE_KEPT`] bytes).
    line: Vec<u8>,
    /// The line was longer than what is kept.
    long_line: bool,
    /// The last byte was a CR: an LF right after it ends no other line.
    after_cr: bool,
    /// Bytes of the stream seen so far, up to 3 (for the BOM).
    start: u8,
    /// The event being read has a `data` field (its data buffer is not empty).
    has_data: bool,
    /// The last event ID buffer (`id` field of the event being read).
    id_buffer: Vec<u8>,
    /// The last event ID string: the buffer as of the last blank line.
    last_id: Vec<u8>,
    /// The reconnection time asked by `retry`, in ms.
    retry_ms: Option<u64>,
}

const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

impl EventParser {
    /// A new stream: everything forgotten but the last event ID, which a
    /// reconnection sends back (`Last-Event-ID`).
    pub(crate) fn restart(&mut self) {
        self.line.clear();
        self.long_line = false;
        self.after_cr = false;
        self.start = 0;
        self.has_data = false;
        self.id_buffer.clone_from(&self.last_id);
    }

    /// The last event ID, as the stream set it (empty: none);
    /// `--sse-reconnect` sends it as `Last-Event-ID`.
    pub(crate) fn last_event_id(&self) -> &[u8] {
        &self.last_id
    }

    /// The reconnection time the stream asked for (`retry`), in ms;
    /// `--sse-reconnect` waits it out.
    pub(crate) fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Reads the next bytes of the stream; returns the events dispatched.
    pub(crate) fn feed(&mut self, mut input: &[u8]) -> u64 {
        // The BOM, only at the very start of the stream, split or not.
        while self.start < 3 && !input.is_empty() {
            let at = self.start as usize;
            if input[0] != BOM[at] {
                // Not a BOM after all: what was taken for its start is data.
                self.start = 3;
                let taken = &BOM[..at];
                let mut events = 0;
                for &b in taken {
                    events += self.bytes(&[b]);
                }
                return events + self.bytes(input);
            }
            self.start += 1;
            input = &input[1..];
        }
        self.bytes(input)
    }

    fn bytes(&mut self, mut input: &[u8]) -> u64 {
        let mut events = 0;
        if input.is_empty() {
            return 0;
        }
        if std::mem::replace(&mut self.after_cr, false) && input[0] == b'\n' {
            input = &input[1..];
        }
        while let Some(end) = input.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.keep(&input[..end]);
            events += self.line_ended();
            let cr = input[end] == b'\r';
            input = &input[end + 1..];
            if cr {
                match input.first() {
                    Some(b'\n') => input = &input[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.keep(input);
        events
    }

    fn keep(&mut self, part: &[u8]) {
        let room = LINE_KEPT - self.line.len();
        if part.len() > room {
            self.long_line = true;
        }
        self.line.extend_from_slice(&part[..part.len().min(room)]);
    }

    /// A whole line was read: its field is processed; 1 when it dispatched.
    fn line_ended(&mut self) -> u64 {
        let line = std::mem::take(&mut self.line);
        let long = std::mem::replace(&mut self.long_line, false);
        let mut dispatched = 0;
        if line.is_empty() && !long {
            // Dispatch: the ID is the stream's from now on, data or not.
            self.last_id.clone_from(&self.id_buffer);
            if std::mem::replace(&mut self.has_data, false) {
                dispatched = 1;
            }
        } else if line.first() != Some(&b':') {
            let (name, value) = match line.iter().position(|&b| b == b':') {
                Some(colon) => {
                    let value = &line[colon + 1..];
                    (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (&line[..], &[][..]),
            };
            match name {
                b"data" => self.has_data = true,
                b"id" if !value.contains(&0) && !long => {
                    self.id_buffer.clear();
                    self.id_buffer.extend_from_slice(value);
                }
                b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                    self.retry_ms = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
                }
                // `event` names the type: nothing to count. Others are ignored.
                _ => {}
            }
        }
        self.line = line;
        self.line.clear();
        dispatched
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` cut at every `piece` bytes; returns the events.
    fn events_in_pieces(input: &[u8], piece: usize) -> (u64, EventParser) {
        let mut p = EventParser::default();
        let n = input.chunks(piece).map(|part| p.feed(part)).sum();
        (n, p)
    }

    #[test]
    fn events_split_anywhere_count_the_same() {
        let stream = b"\xEF\xBB\xBFid: 1\r\ndata: a\r\n\r\n: a comment\r\n\r\ndata: b\rdata: c\r\rid: 3\nevent: x\ndata\n\nretry: 2500\n";
        for piece in 1..=stream.len() {
            let (n, p) = events_in_pieces(stream, piece);
            assert_eq!(n, 3, "piece {piece}");
            assert_eq!(p.last_event_id(), b"3", "piece {piece}");
            assert_eq!(p.retry_ms(), Some(2500), "piece {piece}");
        }
    }

    #[test]
    fn crlf_split_across_reads_ends_one_line() {
        let mut p = EventParser::default();
        assert_eq!(p.feed(b"data: x\r"), 0);
        // The LF of the CRLF: not a second, blank line.
        assert_eq!(p.feed(b"\n"), 0);
        assert_eq!(p.feed(b"\r"), 1);
        assert_eq!(p.feed(b"\n"), 0);
    }

    #[test]
    fn comments_and_fields_without_data_dispatch_nothing() {
        let (n, p) = events_in_pieces(b": hello\n\nid: 7\n\nevent: ping\n\n", 5);
        assert_eq!(n, 0);
        // The ID is set even though nothing was dispatched.
        assert_eq!(p.last_event_id(), b"7");
    }

    #[test]
    fn multi_line_data_is_one_event() {
        let (n, _) = events_in_pieces(b"data: one\ndata: two\ndata: three\n\n", 4);
        assert_eq!(n, 1);
        let (n, _) = events_in_pieces(b"data:\n\n", 1);
        assert_eq!(n, 1, "an empty data field still dispatches");
    }

    #[test]
    fn bom_only_at_the_start_and_only_a_whole_one() {
        let (n, _) = events_in_pieces(b"\xEF\xBB\xBFdata: 1\n\n", 1);
        assert_eq!(n, 1);
        // Not a BOM: "\xEF" starts a field name that is not "data".
        let (n, _) = events_in_pieces(b"\xEFdata: 1\n\ndata: 2\n\n", 1);
        assert_eq!(n, 1);
        // A BOM later in the stream is not dropped.
        let (n, _) = events_in_pieces(b"data: 1\n\n\xEF\xBB\xBFdata: 2\n\n", 3);
        assert_eq!(n, 1);
    }

    #[test]
    fn an_event_cut_short_is_not_dispatched_and_ids_survive_a_restart() {
        let mut p = EventParser::default();
        assert_eq!(p.feed(b"id: 9\ndata: 1\n\nid: 10\ndata: half"), 1);
        p.restart();
        // The cut event's ID never became the stream's.
        assert_eq!(p.last_event_id(), b"9");
        assert_eq!(p.feed(b"\n\n"), 0, "the cut event's data was dropped");
        assert_eq!(p.last_event_id(), b"9");
    }

    #[test]
    fn long_lines_keep_their_field() {
        let mut stream = b"data: ".to_vec();
        stream.extend(std::iter::repeat_n(b'x', 10_000));
        stream.extend_from_slice(b"\n\n");
        let (n, _) = events_in_pieces(&stream, 333);
        assert_eq!(n, 1);
    }
}
