//! WebSocket runs (`ws://` and `wss://` URLs, `--ws-message`,
//! `--ws-binary`, `--ws-subprotocol`, `--ws-deflate`): each connection upgrades once, then sends messages and
//! reads their replies; `-n` counts messages. What the plan says of them,
//! and which HTTP options make no sense with them.

use crate::{Plan, PlanError};

/// What a WebSocket run sends; `None` in the plan for HTTP runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSocketSpec {
    /// The payload of every message (`--ws-message TEXT|@FILE`).
    pub message: Vec<u8>,
    /// Send binary messages instead of text (`--ws-binary`).
    pub binary: bool,
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, in order of
    /// preference (`--ws-subprotocol`, repeatable); the server's choice
    /// must be one of them (RFC 6455 §4.1).
    pub subprotocols: Vec<String>,
    /// Offer `permessage-deflate` (RFC 7692) and compress messages when
    /// the server agrees (`--ws-deflate`).
    pub deflate: bool,
    /// The time between two messages due on one connection of the closed
    /// model (`--ws-rate`: a second over the rate): each connection's
    /// messages are due at its own instants, their latency counted from
    /// them. `None`: each connection sends its next message as soon as the
    /// last is answered.
    pub pace: Option<std::time::Duration>,
    /// Replies are paired with the message carrying the same id, found by
    /// this extractor (`--ws-match-id 'json($.id)'`), not by order.
    pub match_id: Option<String>,
    /// The messages are a scenario's steps (send, check, extract, think,
    /// close): several steps to the same URL, each a mix entry.
    pub scenario: bool,
}

impl Default for WebSocketSpec {
    fn default() -> Self {
        WebSocketSpec {
            message: b"hello".to_vec(),
            binary: false,
            subprotocols: Vec::new(),
            deflate: false,
            pace: None,
            match_id: None,
            scenario: false,
        }
    }
}

/// The options a WebSocket run refuses, each with the flag to drop.
pub(crate) fn check(plan: &Plan) -> Result<(), PlanError> {
    let Some(ws) = &plan.transport.websocket else {
        return Ok(());
    };
    let refuse = |what: &str| {
        Err(PlanError::Invalid(format!(
            "a ws:// URL upgrades one HTTP/1.1 GET to WebSocket: drop {what}"
        )))
    };
    if plan.request.method == "HEAD" {
        return refuse("--head (the upgrade is a GET)");
    }
    if plan.request.method != "GET" {
        return refuse("-m (the upgrade is a GET)");
    }
    if !plan.request.body.is_empty() {
        return refuse("-b/-D (the payload is --ws-message)");
    }
    if plan.transport.http2 {
        return refuse("--http2");
    }
    if plan.transport.http3 {
        return refuse("--http3");
    }
    if plan.transport.pipeline > 1 {
        return refuse("--pipeline");
    }
    if plan.transport.stream.watch {
        return refuse("--sse");
    }
    if plan.transport.redirects > 0 {
        return refuse("--redirects");
    }
    if plan.transport.proxy.is_some() {
        return refuse("--proxy");
    }
    if !plan.mix.is_empty() && !ws.scenario {
        return refuse("--targets");
    }
    if ws.scenario
        && matches!(
            plan.transport.io,
            crate::IoBackend::Epoll | crate::IoBackend::Uring
        )
    {
        return Err(PlanError::Invalid(
            "WebSocket scenario steps run on tokio for now: drop --io (auto picks tokio) or give --io tokio".to_string(),
        ));
    }
    if plan.request.http10 {
        return refuse("--http1.0");
    }
    if !plan.keepalive {
        return refuse("--no-keepalive");
    }
    let lifetime = &plan.transport.lifetime;
    if lifetime.max_requests.is_some() || lifetime.max_age.is_some() {
        return refuse("--conn-max-requests and --conn-max-age (a connection carries messages until the run ends it)");
    }
    if plan.transport.compression.accept_encoding.is_some() {
        return refuse("--compressed and --decode (messages are compressed with --ws-deflate)");
    }
    for (i, name) in ws.subprotocols.iter().enumerate() {
        if !crate::header::is_token(name) {
            return Err(PlanError::Invalid(format!(
                "--ws-subprotocol {name:?} is not a token (RFC 6455 §4.1: letters, digits and !#$%&'*+-.^_`|~)"
            )));
        }
        if ws.subprotocols[..i].contains(name) {
            return Err(PlanError::Invalid(format!(
                "--ws-subprotocol {name:?} is given twice (RFC 6455 §4.1: unique)"
            )));
        }
    }
    if let Some(pace) = ws.pace {
        if pace.is_zero() {
            return Err(PlanError::Invalid(
                "--ws-rate is too high: over a message per nanosecond".to_string(),
            ));
        }
        if matches!(plan.model, crate::LoadModel::Rate { .. }) {
            return Err(PlanError::Invalid(
                "--ws-rate paces each connection of -c; -r is a rate in total: give one of them"
                    .to_string(),
            ));
        }
        if ws.scenario {
            // A step's think time would make the next message late for its
            // instant, and its latency would count the pause.
            return Err(PlanError::Invalid(
                "--ws-rate paces --ws-message; a scenario's steps are paced by their think times: give one of them"
                    .to_string(),
            ));
        }
    }
    if !ws.binary && std::str::from_utf8(&ws.message).is_err() {
        return Err(PlanError::Invalid(
            "--ws-message is not UTF-8: a text message must be; add --ws-binary".to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{Plan, Target, WebSocketSpec};

    fn plan(spec: WebSocketSpec) -> Plan {
        let mut plan = Plan::minimal(Target::parse("http://127.0.0.1:1/ws").unwrap());
        plan.transport.websocket = Some(spec);
        plan
    }

    fn refusal(mut plan: Plan) -> String {
        plan.validate().unwrap_err().to_string()
    }

    #[test]
    fn auto_and_epoll_drive_ws_and_wss_on_epoll_io_uring_drives_both() {
        for io in [crate::IoBackend::Auto, crate::IoBackend::Epoll] {
            let mut epoll = plan(WebSocketSpec::default());
            epoll.transport.io = io;
            assert!(epoll.validate().is_ok());
            assert_eq!(epoll.event_loop(), crate::EventLoop::Epoll, "{io:?}");
            let mut wss = Plan::minimal(Target::parse("https://127.0.0.1:1/ws").unwrap());
            wss.transport.websocket = Some(WebSocketSpec::default());
            wss.transport.io = io;
            assert!(wss.validate().is_ok());
            assert_eq!(wss.event_loop(), crate::EventLoop::Epoll, "{io:?}");
        }
        let mut tokio = plan(WebSocketSpec::default());
        tokio.transport.io = crate::IoBackend::Tokio;
        assert_eq!(tokio.event_loop(), crate::EventLoop::Tokio);
        let mut uring = plan(WebSocketSpec::default());
        uring.transport.io = crate::IoBackend::Uring;
        assert!(uring.validate().is_ok());
        assert_eq!(uring.event_loop(), crate::EventLoop::Uring);
        let mut wss = Plan::minimal(Target::parse("https://127.0.0.1:1/ws").unwrap());
        wss.transport.websocket = Some(WebSocketSpec::default());
        wss.transport.io = crate::IoBackend::Uring;
        assert!(wss.validate().is_ok());
        assert_eq!(wss.event_loop(), crate::EventLoop::Uring);
    }

    #[test]
    fn scenario_steps_run_on_tokio_under_auto_and_are_refused_on_the_reactors() {
        let steps = WebSocketSpec {
            scenario: true,
            ..WebSocketSpec::default()
        };
        let mut auto = plan(steps.clone());
        auto.transport.io = crate::IoBackend::Auto;
        assert!(auto.validate().is_ok());
        assert_eq!(auto.event_loop(), crate::EventLoop::Tokio);
        for io in [crate::IoBackend::Epoll, crate::IoBackend::Uring] {
            let mut reactor = plan(steps.clone());
            reactor.transport.io = io;
            assert!(refusal(reactor).contains("run on tokio"), "{io:?}");
        }
        let paced = WebSocketSpec {
            pace: Some(std::time::Duration::from_millis(100)),
            ..steps
        };
        assert!(refusal(plan(paced)).contains("think times"));
    }

    #[test]
    fn what_a_websocket_run_cannot_carry_is_refused_in_one_line() {
        let mut ok = plan(WebSocketSpec::default());
        assert!(ok.validate().is_ok());
        assert_eq!(ok.event_loop(), crate::EventLoop::Epoll);
        let mut post = plan(WebSocketSpec::default());
        post.request.method = "POST".into();
        assert!(refusal(post).contains("drop -m"));
        let mut h2 = plan(WebSocketSpec::default());
        h2.transport.http2 = true;
        assert!(refusal(h2).contains("drop --http2"));
        let mut closing = plan(WebSocketSpec::default());
        closing.keepalive = false;
        assert!(refusal(closing).contains("drop --no-keepalive"));
        let mut head = plan(WebSocketSpec::default());
        head.request.method = "HEAD".into();
        assert!(refusal(head).contains("drop --head"));
        let mut h3 = plan(WebSocketSpec::default());
        h3.transport.http3 = true;
        assert!(refusal(h3).contains("drop --http3"));
        let mut retired = plan(WebSocketSpec::default());
        retired.transport.lifetime.max_requests = Some(3);
        assert!(refusal(retired).contains("drop --conn-max-requests"));
        let mut aged = plan(WebSocketSpec::default());
        aged.transport.lifetime.max_age = Some(std::time::Duration::from_millis(300));
        assert!(refusal(aged).contains("drop --conn-max-requests and --conn-max-age"));
        let mut decoded = plan(WebSocketSpec::default());
        decoded.transport.compression.accept_encoding = Some("gzip".into());
        assert!(refusal(decoded).contains("--ws-deflate"));
        let bytes = WebSocketSpec {
            message: vec![0xff, 0xfe],
            ..WebSocketSpec::default()
        };
        assert!(refusal(plan(bytes.clone())).contains("add --ws-binary"));
        let mut binary = plan(WebSocketSpec {
            binary: true,
            ..bytes
        });
        assert!(binary.validate().is_ok());
        for (names, says) in [
            (vec!["a b"], "is not a token"),
            (vec!["chat", "chat"], "given twice"),
            (vec![""], "is not a token"),
        ] {
            let spec = WebSocketSpec {
                subprotocols: names.into_iter().map(String::from).collect(),
                ..WebSocketSpec::default()
            };
            assert!(refusal(plan(spec)).contains(says));
        }
    }
}
