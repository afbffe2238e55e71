//! What every WebSocket connection of a run sends (`ws://`, `wss://`),
//! built once per run from the plan: the upgrade request around its key
//! (RFC 6455 §4.1, with the user's `--header` values, the subprotocols
//! offered and `permessage-deflate` when asked) and the message.
//! exchange/ws_session.rs writes a fresh key into it per connection. A
//! text message with `{{...}}` is compiled once here and rendered per
//! message by the slot (drive/ws_slot.rs), with the built-in names
//! (`{{seq}}`, `{{conn}}`, `{{iter}}`, `{{uuid}}`, `{{rand_int 1 9}}`…).

use stampede_plan::{Header, WebSocketSpec};
use stampede_websocket::MessageKind;
use stampede_workload::{Extractor, ResponseView, Scope, Sequence, Template, VarStore};

/// What every connection of a run sends: the upgrade request around its
/// key, and the message. Built once per run.
#[derive(Debug)]
pub(crate) struct WsConfig {
    /// The upgrade request up to the key's value.
    pub(crate) head_start: Vec<u8>,
    /// After the key's value: the version, the user's headers, the blank line.
    pub(crate) head_end: Vec<u8>,
    /// Every message's payload.
    pub(crate) message: Vec<u8>,
    /// Text or binary.
    pub(crate) kind: MessageKind,
    /// A text message with slots, rendered per message; `None`: `message`
    /// is sent as it is (no slot, or a binary message).
    pub(crate) template: Option<Template>,
    /// `{{seq}}`, shared by every worker of the run.
    pub(crate) sequence: Sequence,
    /// Subprotocols offered (`--ws-subprotocol`): the server's choice must
    /// be one of them.
    pub(crate) subprotocols: Vec<String>,
    /// `permessage-deflate` offered (`--ws-deflate`).
    pub(crate) deflate: bool,
    /// `--ws-rate`: the time between two messages due on one connection.
    pub(crate) pace: Option<std::time::Duration>,
    /// `--ws-match-id`: the id a reply is paired with its message by.
    pub(crate) match_id: Option<MatchId>,
}

/// `--ws-match-id SOURCE`: a reply is paired with the message in flight
/// that carried the same id, each found by the same extractor (a JSON path,
/// a regex: stampede-workload's, as `--extract` reads an HTTP body).
#[derive(Debug, Clone)]
pub(crate) struct MatchId {
    extractor: Extractor,
    /// What the user wrote, for the samples of a message without an id.
    pub(crate) source: String,
}

impl MatchId {
    /// `source` parsed (the binary refused a bad one before the run).
    pub(crate) fn parse(source: &str) -> Option<MatchId> {
        let extractor = Extractor::parse("ws-match-id", source, 0).ok()?;
        Some(MatchId {
            extractor,
            source: source.to_string(),
        })
    }

    /// The id in `payload`, if it has one.
    pub(crate) fn find(&self, payload: &[u8]) -> Option<Box<[u8]>> {
        let view = ResponseView::new(101, &[], payload, std::time::Duration::ZERO);
        let mut store = VarStore::new(1);
        self.extractor.extract(&view, &mut store).ok()?;
        store.get(0).map(Box::from)
    }
}

/// Headers the upgrade sets itself: the user's of the same name are not sent.
const OWN_HEADERS: [&str; 4] = [
    "upgrade",
    "connection",
    "sec-websocket-key",
    "sec-websocket-version",
];

impl WsConfig {
    /// The upgrade of `path_and_query` at `authority` (the Host header,
    /// unless `headers` has one), with `headers` after the upgrade's own.
    pub(crate) fn new(
        path_and_query: &str,
        authority: &str,
        headers: &[Header],
        spec: &WebSocketSpec,
    ) -> WsConfig {
        let given = |name: &str| headers.iter().any(|h| h.name.eq_ignore_ascii_case(name));
        let mut head_start = format!("GET {path_and_query} HTTP/1.1\r\n");
        if !given("host") {
            head_start.push_str(&format!("Host: {authority}\r\n"));
        }
        if !given("user-agent") {
            head_start.push_str(concat!(
                "User-Agent: stampede/",
                env!("CARGO_PKG_VERSION"),
                "\r\n"
            ));
        }
        head_start.push_str("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ");
        let mut head_end = String::from("\r\nSec-WebSocket-Version: 13\r\n");
        let mut own_headers = OWN_HEADERS.to_vec();
        if !spec.subprotocols.is_empty() {
            head_end.push_str(&format!(
                "Sec-WebSocket-Protocol: {}\r\n",
                spec.subprotocols.join(", ")
            ));
            own_headers.push("sec-websocket-protocol");
        }
        if spec.deflate {
            // No parameter: the server may not then limit the client's
            // window (RFC 7692 §7.1.2.2), which flate2 could not honour.
            head_end.push_str("Sec-WebSocket-Extensions: permessage-deflate\r\n");
            own_headers.push("sec-websocket-extensions");
        }
        for header in headers {
            let own = own_headers
                .iter()
                .any(|o| header.name.eq_ignore_ascii_case(o));
            if !own {
                head_end.push_str(&format!("{}: {}\r\n", header.name, header.value));
            }
        }
        head_end.push_str("\r\n");
        WsConfig {
            head_start: head_start.into_bytes(),
            head_end: head_end.into_bytes(),
            message: spec.message.clone(),
            // The binary checked the template (one line at start); a
            // binary message's bytes are never read as one.
            template: (!spec.binary)
                .then(|| Template::compile("--ws-message", &spec.message, &Scope::new()).ok())
                .flatten()
                .filter(|t| !t.is_static()),
            sequence: Sequence::new(0, 1),
            subprotocols: spec.subprotocols.clone(),
            deflate: spec.deflate,
            pace: spec.pace,
            match_id: spec.match_id.as_deref().and_then(MatchId::parse),
            kind: if spec.binary {
                MessageKind::Binary
            } else {
                MessageKind::Text
            },
        }
    }
}
