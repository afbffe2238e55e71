//! One WebSocket connection's client side, I/O-free: bytes in, events
//! out; messages in, bytes to write out. It writes the upgrade request
//! (RFC 6455 §4.1: a fresh `Sec-WebSocket-Key`, the user's `--header`
//! values, the subprotocols offered, `permessage-deflate` when asked),
//! checks the answer (`101`, `Upgrade`, `Connection`,
//! `Sec-WebSocket-Accept`, a subprotocol among those offered, no extension
//! but one offered), masks (and, once deflate is agreed, compresses) what
//! it sends with stampede-websocket's
//! encoder, decodes what comes back, answers pings, echoes the server's
//! close, and matches each reply to the oldest message still unanswered
//! (a server answers in order; a message nobody waited for is a push).
//! Its drivers, tokio's (drive/ws_slot.rs) and the epoll reactor's
//! (drive/reactor/epoll/ws.rs), only move the bytes and keep the clocks;
//! drive/ws_conn.rs books what it says, for both.

use crate::plan::ws_plan::{MatchId, WsConfig};
use stampede_metrics::ErrorKind;
use stampede_websocket::{
    accept_key, encode_close, encode_control, encode_message, parse_deflate_answer, Decoder, Event,
    MessageDeflater, MessageInflater, MessageKind, Opcode, Role,
};
use std::collections::VecDeque;
use std::time::Instant;

/// The longest upgrade answer head read before it is refused.
const MAX_UPGRADE_HEAD: usize = 16 * 1024;

/// The longest message read from the server before the connection fails
/// (close code 1009).
const MAX_MESSAGE: usize = 64 << 20;

/// What the server's bytes meant, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WsEvent {
    /// The upgrade was accepted: messages may go.
    Upgraded,
    /// The oldest unanswered message, intended at `intended`, got its reply.
    Reply {
        /// When that message was meant to leave.
        intended: Instant,
    },
    /// A message no sent one was waiting for (the server pushed it).
    Unsolicited,
    /// The server pinged; the pong waits in the outbox.
    PingAnswered,
    /// The server closed, with this code (`None`: no code, 1005); the
    /// answering close waits in the outbox when the server spoke first.
    Closed {
        /// The close frame's code.
        code: Option<u16>,
    },
}

/// Why the connection cannot go on: its error class and a sample reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WsFailure {
    /// The class its unanswered messages are counted under.
    pub kind: ErrorKind,
    /// What was wrong, for the run's error samples.
    pub reason: String,
}

/// What became of `--ws-deflate` on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deflate {
    /// Not asked.
    Off,
    /// Asked and agreed: messages go compressed.
    Agreed,
    /// Asked, and the server answered no extension: messages go as they are.
    Refused,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Upgrading,
    Open,
    /// The client sent its close and waits for the server's.
    Closing,
    Closed,
}

/// One connection's WebSocket state.
#[derive(Debug)]
pub(crate) struct WsSession {
    kind: MessageKind,
    accept: String,
    phase: Phase,
    decoder: Decoder,
    /// Bytes read and not yet consumed.
    inbox: Vec<u8>,
    /// Bytes to write: the upgrade, messages, pongs, closes.
    outbox: Vec<u8>,
    /// When each unanswered message was meant to leave, oldest first.
    pending: VecDeque<Instant>,
    /// Messages given up by the client's close: their replies, which may
    /// still come before the server's close, are read and mean nothing.
    abandoned: usize,
    rng: fastrand::Rng,
    /// Subprotocols offered.
    offered: Vec<String>,
    /// The one the server chose, once upgraded.
    subprotocol: Option<String>,
    /// `permessage-deflate`: asked (`Refused` until agreed), or not.
    deflate: Deflate,
    /// Compresses what is sent once deflate is agreed.
    deflater: Option<MessageDeflater>,
    /// Replies' payloads are kept for the workload's checks and extractors
    /// (`kept`, each reply's span in `kept_at`, for one `received` call).
    keep: bool,
    kept: Vec<u8>,
    kept_at: Vec<(usize, usize)>,
    /// `--ws-match-id`: each unanswered message's id (beside `pending`),
    /// and the ids of those the client's close gave up.
    match_id: Option<MatchId>,
    ids: VecDeque<Box<[u8]>>,
    abandoned_ids: Vec<Box<[u8]>>,
    /// The 101's `Set-Cookie` values, kept when a cookie jar reads them.
    set_cookies: Option<Vec<Vec<u8>>>,
    /// Frame bytes written once upgraded (headers and masks included).
    pub(crate) bytes_sent: u64,
    /// Frame bytes read once upgraded.
    pub(crate) bytes_received: u64,
}

impl WsSession {
    /// A new connection's session: the upgrade request, with a fresh key
    /// drawn from `rng`, waits in the outbox.
    pub(crate) fn new(config: &WsConfig, mut rng: fastrand::Rng) -> WsSession {
        use base64::Engine;
        let mut nonce = [0u8; 16];
        rng.fill(&mut nonce);
        let key = base64::engine::general_purpose::STANDARD.encode(nonce);
        let mut outbox = Vec::with_capacity(config.head_start.len() + 64 + config.head_end.len());
        outbox.extend_from_slice(&config.head_start);
        outbox.extend_from_slice(key.as_bytes());
        outbox.extend_from_slice(&config.head_end);
        WsSession {
            kind: config.kind,
            accept: accept_key(&key),
            phase: Phase::Upgrading,
            decoder: Decoder::new(Role::Client, MAX_MESSAGE),
            inbox: Vec::new(),
            outbox,
            pending: VecDeque::new(),
            abandoned: 0,
            rng,
            offered: config.subprotocols.clone(),
            subprotocol: None,
            deflate: if config.deflate {
                Deflate::Refused
            } else {
                Deflate::Off
            },
            deflater: None,
            keep: config.match_id.is_some(),
            kept: Vec::new(),
            kept_at: Vec::new(),
            match_id: config.match_id.clone(),
            ids: VecDeque::new(),
            abandoned_ids: Vec::new(),
            set_cookies: None,
            bytes_sent: 0,
            bytes_received: 0,
        }
    }

    /// Keeps every reply's payload for [`WsSession::reply`] (a workload
    /// judges replies).
    pub(crate) fn keep_replies(&mut self) {
        self.keep = true;
    }

    /// Keeps the upgrade answer's `Set-Cookie` values for
    /// [`WsSession::take_set_cookies`] (a cookie jar reads them).
    pub(crate) fn collect_cookies(&mut self) {
        self.set_cookies = Some(Vec::new());
    }

    /// The upgrade's `Set-Cookie` values, taken.
    pub(crate) fn take_set_cookies(&mut self) -> Vec<Vec<u8>> {
        self.set_cookies
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The upgrade request, while it waits in the outbox unsent (a cookie
    /// jar writes its `Cookie` header into it).
    pub(crate) fn upgrade_request(&mut self) -> Option<&mut Vec<u8>> {
        (self.phase == Phase::Upgrading).then_some(&mut self.outbox)
    }

    /// The payload of the `n`th reply (`WsEvent::Reply`, counted from 0)
    /// of the last [`WsSession::received`], when replies are kept.
    pub(crate) fn reply(&self, n: usize) -> &[u8] {
        self.kept_at
            .get(n)
            .map_or(&[][..], |&(from, to)| &self.kept[from..to])
    }

    /// Bytes waiting to be written.
    pub(crate) fn outbox(&self) -> &[u8] {
        &self.outbox
    }

    /// The outbox was written out.
    pub(crate) fn written(&mut self) {
        self.outbox.clear();
    }

    /// True once the upgrade was accepted and no close was sent or read.
    pub(crate) fn is_open(&self) -> bool {
        self.phase == Phase::Open
    }

    /// True while the client's close awaits the server's.
    pub(crate) fn is_closing(&self) -> bool {
        self.phase == Phase::Closing
    }

    /// True once both closes were exchanged, or the connection failed.
    pub(crate) fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// The subprotocol the server chose, once upgraded.
    pub(crate) fn subprotocol(&self) -> Option<&str> {
        self.subprotocol.as_deref()
    }

    /// What became of `--ws-deflate`, once upgraded.
    pub(crate) fn deflate(&self) -> Deflate {
        self.deflate
    }

    /// Messages sent and not answered.
    pub(crate) fn unanswered(&self) -> usize {
        self.pending.len()
    }

    /// The unanswered messages' intended instants, oldest first, taken:
    /// the connection ended and they will get no reply.
    pub(crate) fn take_unanswered(&mut self) -> VecDeque<Instant> {
        self.ids.clear();
        std::mem::take(&mut self.pending)
    }

    fn mask(&mut self) -> Option<[u8; 4]> {
        Some(self.rng.u32(..).to_be_bytes())
    }

    /// Frames `message` (masked) into the outbox; its reply is the next
    /// message read after those already awaited, or with `--ws-match-id`
    /// the one carrying its id. False: the message has no id to be paired
    /// by, and nothing is framed.
    pub(crate) fn send_message(&mut self, message: &[u8], intended: Instant) -> bool {
        if let Some(match_id) = &self.match_id {
            let Some(id) = match_id.find(message) else {
                return false;
            };
            self.ids.push_back(id);
        }
        let before = self.outbox.len();
        let mask = self.mask();
        match &mut self.deflater {
            Some(deflater) => deflater.encode_message(&mut self.outbox, self.kind, message, mask),
            None => encode_message(&mut self.outbox, self.kind, message, mask),
        }
        self.bytes_sent += (self.outbox.len() - before) as u64;
        self.pending.push_back(intended);
        true
    }

    /// Starts the closing handshake with `code` (the client is done); the
    /// server's close then ends it. The messages still unanswered are
    /// given up (their drivers leave them unfinished): a reply to one of
    /// them, read before the server's close, is no event.
    pub(crate) fn close(&mut self, code: u16) {
        self.close_with(code, "");
    }

    /// [`WsSession::close`] with a reason (at most 123 bytes of UTF-8,
    /// RFC 6455 §5.5: a longer one is cut at a character's boundary).
    pub(crate) fn close_with(&mut self, code: u16, reason: &str) {
        if self.phase != Phase::Open {
            return;
        }
        self.abandoned += self.pending.len();
        self.pending.clear();
        self.abandoned_ids.extend(self.ids.drain(..));
        let mut cut = reason.len().min(123);
        while !reason.is_char_boundary(cut) {
            cut -= 1;
        }
        let before = self.outbox.len();
        let mask = self.mask();
        encode_close(&mut self.outbox, Some(code), &reason[..cut], mask)
            .expect("a valid code, a short reason");
        self.bytes_sent += (self.outbox.len() - before) as u64;
        self.phase = Phase::Closing;
    }

    /// Reads `bytes` from the server; what they meant is appended to
    /// `events`. After an error the connection is failed: a close with
    /// the error's code may wait in the outbox, and nothing more is read.
    pub(crate) fn received(
        &mut self,
        bytes: &[u8],
        events: &mut Vec<WsEvent>,
    ) -> Result<(), WsFailure> {
        if self.phase == Phase::Closed {
            return Ok(());
        }
        self.inbox.extend_from_slice(bytes);
        self.kept.clear();
        self.kept_at.clear();
        let mut at = 0;
        if self.phase == Phase::Upgrading {
            match self.upgrade_answer()? {
                Some(head) => {
                    at = head;
                    self.phase = Phase::Open;
                    events.push(WsEvent::Upgraded);
                }
                None => return Ok(()),
            }
        }
        let head = at;
        let result = self.frames(&mut at, events);
        self.bytes_received += (at - head) as u64;
        self.inbox.drain(..at);
        result
    }

    /// The length of the upgrade's answer head once it is whole and says
    /// yes; `None` while it is partial.
    fn upgrade_answer(&mut self) -> Result<Option<usize>, WsFailure> {
        let refused = |reason: String| WsFailure {
            kind: ErrorKind::WsUpgradeRefused,
            reason,
        };
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut answer = httparse::Response::new(&mut headers);
        let head = match answer.parse(&self.inbox) {
            Ok(httparse::Status::Complete(head)) => head,
            Ok(httparse::Status::Partial) if self.inbox.len() <= MAX_UPGRADE_HEAD => {
                return Ok(None)
            }
            Ok(httparse::Status::Partial) => {
                return Err(refused(format!(
                    "the upgrade's answer head is over {MAX_UPGRADE_HEAD} bytes"
                )))
            }
            Err(_) if crate::http1::malformed::is_tls_record(&self.inbox) => return Err(refused(
                "the upgrade's answer is not HTTP (the server answered in TLS: use a wss:// URL)"
                    .into(),
            )),
            Err(e) => return Err(refused(format!("the upgrade's answer is not HTTP: {e}"))),
        };
        let code = answer.code.unwrap_or(0);
        if code != 101 {
            let reason = answer.reason.unwrap_or("");
            return Err(refused(format!(
                "the upgrade was answered {code} {reason}, not 101"
            )));
        }
        let value = |name: &str| {
            (answer.headers.iter())
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
        };
        if !value("upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket")) {
            return Err(refused("the 101 answer has no Upgrade: websocket".into()));
        }
        let connection = value("connection").unwrap_or_default();
        if !(connection.split(',')).any(|token| token.trim().eq_ignore_ascii_case("upgrade")) {
            return Err(refused("the 101 answer has no Connection: Upgrade".into()));
        }
        match value("sec-websocket-accept") {
            Some(got) if got == self.accept => {}
            Some(got) => {
                return Err(refused(format!(
                    "Sec-WebSocket-Accept {got:?} is not {:?}",
                    self.accept
                )))
            }
            None => return Err(refused("the 101 answer has no Sec-WebSocket-Accept".into())),
        }
        // Every value of a field that may be repeated, joined (RFC 9110 §5.3).
        let joined = |name: &str| {
            let values: Vec<String> = (answer.headers.iter())
                .filter(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
                .collect();
            (!values.is_empty()).then(|| values.join(", "))
        };
        if let Some(chosen) = joined("sec-websocket-protocol") {
            // RFC 6455 §4.1: a subprotocol the client did not offer fails
            // the connection.
            if !self.offered.contains(&chosen) {
                return Err(refused(format!(
                    "the server chose subprotocol {chosen:?}, which was not offered ({})",
                    if self.offered.is_empty() {
                        "none was".to_string()
                    } else {
                        self.offered.join(", ")
                    }
                )));
            }
            self.subprotocol = Some(chosen);
        }
        if let Some(jar) = &mut self.set_cookies {
            (answer.headers.iter())
                .filter(|h| h.name.eq_ignore_ascii_case("set-cookie"))
                .for_each(|h| jar.push(h.value.to_vec()));
        }
        if let Some(extensions) = joined("sec-websocket-extensions") {
            // RFC 6455 §4.1: an extension the client did not offer fails
            // the connection; RFC 7692 §7.1 says which answers to ours are
            // allowed.
            if self.deflate == Deflate::Off {
                return Err(refused(format!(
                    "the server answered extensions {extensions:?}, none offered"
                )));
            }
            match parse_deflate_answer(&extensions) {
                Ok(Some(params)) => {
                    self.deflate = Deflate::Agreed;
                    self.deflater = Some(MessageDeflater::new(params.client_no_context_takeover));
                    let inflater = MessageInflater::new(params.server_no_context_takeover);
                    self.decoder.inflate_with(inflater);
                }
                Ok(None) => {}
                Err(why) => return Err(refused(why)),
            }
        }
        Ok(Some(head))
    }

    /// Decodes the frames from `*at` on, moving `*at` past what they took.
    fn frames(&mut self, at: &mut usize, events: &mut Vec<WsEvent>) -> Result<(), WsFailure> {
        while self.phase != Phase::Closed {
            let decoded = match self.decoder.decode(&mut self.inbox[*at..]) {
                Ok(decoded) => decoded,
                Err(error) => {
                    let mask = Some(self.rng.u32(..).to_be_bytes());
                    if self.phase == Phase::Open {
                        let code = Some(error.close_code());
                        let _ = encode_close(&mut self.outbox, code, "", mask);
                    }
                    self.phase = Phase::Closed;
                    return Err(WsFailure {
                        kind: ErrorKind::WsProtocol,
                        reason: error.to_string(),
                    });
                }
            };
            *at += decoded.consumed;
            let Some(event) = decoded.event else {
                return Ok(());
            };
            let mask = Some(self.rng.u32(..).to_be_bytes());
            let before = self.outbox.len();
            match event {
                Event::Text(_) | Event::Binary(_) => {
                    let payload = match event {
                        Event::Text(text) => text.as_bytes(),
                        Event::Binary(bytes) => bytes,
                        _ => &[],
                    };
                    let event = match &self.match_id {
                        None => match self.pending.pop_front() {
                            Some(intended) => Some(WsEvent::Reply { intended }),
                            None if self.abandoned > 0 => {
                                self.abandoned -= 1;
                                None
                            }
                            None => Some(WsEvent::Unsolicited),
                        },
                        Some(match_id) => {
                            let id = match_id.find(payload);
                            let awaited = id
                                .as_ref()
                                .and_then(|id| self.ids.iter().position(|i| i == id));
                            let given_up = id
                                .as_ref()
                                .and_then(|id| self.abandoned_ids.iter().position(|i| i == id));
                            match (awaited, given_up) {
                                (Some(at), _) => {
                                    self.ids.remove(at);
                                    self.pending
                                        .remove(at)
                                        .map(|intended| WsEvent::Reply { intended })
                                }
                                (None, Some(at)) => {
                                    self.abandoned_ids.swap_remove(at);
                                    None
                                }
                                (None, None) => Some(WsEvent::Unsolicited),
                            }
                        }
                    };
                    if let (true, Some(WsEvent::Reply { .. })) = (self.keep, event) {
                        let from = self.kept.len();
                        self.kept.extend_from_slice(payload);
                        self.kept_at.push((from, self.kept.len()));
                    }
                    events.extend(event);
                }
                Event::Ping(payload) => {
                    if self.phase == Phase::Open {
                        encode_control(&mut self.outbox, Opcode::Pong, payload, mask)
                            .expect("a ping's payload fits a pong");
                        events.push(WsEvent::PingAnswered);
                    }
                }
                Event::Pong(_) => {}
                Event::Close(frame) => {
                    let code = frame.map(|f| f.code);
                    if self.phase == Phase::Open {
                        // §5.5.1: the answer echoes the code.
                        encode_close(&mut self.outbox, code, "", mask)
                            .expect("a code the server may send, no reason");
                    }
                    self.phase = Phase::Closed;
                    events.push(WsEvent::Closed { code });
                }
            }
            self.bytes_sent += (self.outbox.len() - before) as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "ws_session_tests.rs"]
mod tests;
