//! Redirects over HTTP/2 (`--redirects N`): the engine's one rulebook
//! (redirects/redirect.rs, `Hops`) decides each hop, and the hop's request
//! (written as for HTTP/1.1) is read back into HTTP/2's form
//! (plan/h2_request.rs) and sent as a new stream: on the same connection
//! when it goes to the run's origin, on the stream's side connection
//! (h2_side.rs) when it goes to another, as HTTP/1.1's slot does. What is
//! followed, counted offsite or refused is the rulebook's, as on HTTP/1.1
//! (through a proxy or a Unix socket another origin is offsite). The
//! whole chain is one request.

use crate::drive::h2::h2_conn_end::SendError;
use crate::drive::h2::h2_exchange::{send, Answer};
use crate::drive::h2::h2_side::SideLink;
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
/// the hops its answers lead to, each on a new stream of `sender`, or of
/// `side` for a hop to another origin. Err: a failure on `sender` (a hop's
/// on `side` ends the chain as [`Chain::Refused`], the run's connection
/// unharmed).
pub(crate) async fn send_following(
    ctx: &ConnectionContext,
    sender: &mut SendRequest<Bytes>,
    side: &mut SideLink,
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
        let next = hop.as_ref().unwrap_or(request);
        let answer = match hops.origin() {
            None => send(sender, next, ctx.decode, true).await?,
            Some(origin) => match side.send(ctx, origin, next, ctx.decode).await {
                Ok(answer) => answer,
                Err(kind) => return Ok(Chain::Refused(kind)),
            },
        };
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
