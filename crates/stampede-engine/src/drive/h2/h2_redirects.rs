//! Redirects over HTTP/2 (`--redirects N`): the engine's one rulebook
//! (redirects/redirect.rs, `Hops`) decides each hop, and the hop's request
//! (written as for HTTP/1.1) is read back into HTTP/2's form
//! (plan/h2_request.rs) and sent as a new stream on the same connection.
//! Over HTTP/2 a hop to another origin is not followed: the rule has no
//! way to other origins (run/engine.rs), so the 3xx is the answer, counted
//! offsite, as through a proxy. The whole chain is one request.

use crate::drive::h2::h2_conn_end::SendError;
use crate::drive::h2::h2_exchange::{send, Answer};
use crate::plan::h2_request::{from_rendered, H2Request};
use crate::redirects::redirect::{Follow, Hops};
use crate::worker::context::ConnectionContext;
use bytes::Bytes;
use h2::client::SendRequest;
use stampede_metrics::ErrorKind;

/// How a request and its hops ended.
pub(crate) enum Chain {
    /// The last response: not a redirect, or one not followed.
    Answer(Answer),
    /// The chain failed: one hop too many, or a hop that cannot be sent.
    Refused(ErrorKind),
}

/// Sends `request` (request `target` of the run) and, with `--redirects`,
/// the hops its answers lead to, each on a new stream of `sender`.
pub(crate) async fn send_following(
    ctx: &ConnectionContext,
    sender: &mut SendRequest<Bytes>,
    request: &H2Request,
    target: usize,
) -> Result<Chain, SendError> {
    let Some(rule) = ctx.redirect_of(target) else {
        return send(sender, request, ctx.decode, false)
            .await
            .map(Chain::Answer);
    };
    // Only a run that follows redirects gets here: no cost per request
    // otherwise, and the hop buffers only once a request hops.
    let mut hops = Hops::default();
    let mut hop: Option<H2Request> = None;
    loop {
        let answer = send(sender, hop.as_ref().unwrap_or(request), ctx.decode, true).await?;
        let original = ctx.request_of(target).0;
        let location = answer.location.as_ref().map(http::HeaderValue::as_bytes);
        let follow = hops.follow(
            rule,
            answer.status,
            location,
            original,
            &*ctx.state,
            &ctx.origins,
        );
        match follow {
            Follow::No | Follow::Offsite => return Ok(Chain::Answer(answer)),
            Follow::Limit => return Ok(Chain::Refused(ErrorKind::RedirectLimit)),
            Follow::Unreachable => return Ok(Chain::Refused(ErrorKind::Other)),
            Follow::Hop => match from_rendered(hops.request().unwrap_or(original), request) {
                Ok(next) => hop = Some(next),
                Err(why) => {
                    ctx.state.sample_error(ErrorKind::Other, || why);
                    return Ok(Chain::Refused(ErrorKind::Other));
                }
            },
        }
    }
}
