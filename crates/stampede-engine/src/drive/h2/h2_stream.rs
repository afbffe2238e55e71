//! `--sse` over HTTP/2 (the `h2` crate, on tokio): one request is one
//! stream whose DATA frames feed its watch (h2_watch.rs). With
//! `--sse-reconnect` a stream the server ends goes on as a browser's
//! `EventSource` does (WHATWG HTML, "Server-sent events", §9.2.3
//! "reestablish the connection"; the rules are stream/resume.rs's): after
//! the stream's reconnection time, the request again with
//! `Last-Event-ID`, on a new HTTP/2 stream of the same connection. The
//! whole of it runs under the request's one timer, which `--sse-for` sets:
//! when it fires, the stream ends as a success with its last status.

use crate::drive::h2::h2_conn_end::SendError;
use crate::drive::h2::h2_redirects::{send_following, Chain};
use crate::drive::h2::h2_side::SideLink;
use crate::drive::h2::h2_watch::H2Watch;
use crate::plan::h2_request::H2Request;
use crate::stream::{reconnection_delay, set_last_event_id};
use crate::worker::context::ConnectionContext;
use bytes::Bytes;
use h2::client::SendRequest;

/// Sends `request` (request `target` of the run) as `send_following`
/// does, its body fed to `watch` (`--sse`), and with `--sse-reconnect`
/// asks again while the server ends a 200 `text/event-stream` answer,
/// until the caller's timer (`--sse-for`) ends it. An answer that is not
/// a 200 event stream ends it (a 204 is a server's "no more", §9.2.3:
/// "fail the connection"), as does a failure. Without `watch`, only
/// `send_following`.
pub(crate) async fn send_stream(
    ctx: &ConnectionContext,
    sender: &mut SendRequest<Bytes>,
    side: &mut SideLink,
    request: &H2Request,
    target: usize,
    watch: Option<&mut H2Watch>,
) -> Result<Chain, SendError> {
    let Some(watch) = watch else {
        return send_following(ctx, sender, side, request, target, None).await;
    };
    let mut chain = send_following(ctx, sender, side, request, target, Some(watch)).await?;
    if !ctx.stream.reconnect {
        return Ok(chain);
    }
    let mut again: Option<H2Request> = None;
    loop {
        let Chain::Answer(answer) = &chain else {
            return Ok(chain);
        };
        if answer.status != 200 || !watch.watch.is_event_stream() {
            return Ok(chain);
        }
        // The caller's timer ends the wait when `--sse-for` is over first.
        tokio::time::sleep(reconnection_delay(watch.watch.retry_ms())).await;
        watch.watch.reconnected();
        let next = again.get_or_insert_with(|| request.clone());
        set_last_event_id(&mut next.headers, watch.watch.last_event_id());
        chain = send_following(ctx, sender, side, next, target, Some(&mut *watch)).await?;
    }
}
