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
use crate::drive::h2::h2_hop::{HopExchange, HopReply};
use crate::drive::h2::h2_side::SideLink;
use crate::drive::h2::h2_watch::H2Watch;
use crate::plan::h2_request::{from_rendered, H2Request};
use crate::redirects::redirect::{Follow, Hops, RedirectRule};
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

/// A fixed request's exchange: the whole response read, its body counted
/// (decoded with `--decode`, watched with `--sse`), a 3xx's `Location` kept.
pub(crate) struct Whole<'a> {
    pub decode: bool,
    /// `--sse`: the stream's watch, lent to each hop's exchange in turn.
    pub watch: std::cell::Cell<Option<&'a mut H2Watch>>,
}

impl HopExchange for Whole<'_> {
    type Reply = Answer;

    async fn send(
        &self,
        sender: &mut SendRequest<Bytes>,
        request: &H2Request,
    ) -> Result<Answer, SendError> {
        let mut watch = self.watch.take();
        let answer = send(sender, request, self.decode, true, watch.as_deref_mut()).await;
        self.watch.set(watch);
        answer
    }
}

impl HopReply for Answer {
    fn status(&self) -> u16 {
        self.status
    }

    fn location(&self) -> Option<&[u8]> {
        self.location.as_ref().map(http::HeaderValue::as_bytes)
    }
}

/// Sends `request` (request `target` of the run) and, with `--redirects`,
/// the hops its answers lead to, each on a new stream of `sender`, or of
/// `side` for a hop to another origin. Err: a failure on `sender` (a hop's
/// on `side` ends the chain as [`Chain::Refused`], the run's connection
/// unharmed). `watch`: each response's body fed to it (`--sse`).
pub(crate) async fn send_following(
    ctx: &ConnectionContext,
    sender: &mut SendRequest<Bytes>,
    side: &mut SideLink,
    request: &H2Request,
    target: usize,
    watch: Option<&mut H2Watch>,
) -> Result<Chain, SendError> {
    let Some(rule) = ctx.redirect_of(target) else {
        return send(sender, request, ctx.decode, false, watch)
            .await
            .map(Chain::Answer);
    };
    let original = ctx.request_of(target).0;
    let exchange = Whole {
        decode: ctx.decode,
        watch: std::cell::Cell::new(watch),
    };
    let chain = follow(ctx, rule, &exchange, (sender, side), request, original);
    Ok(match chain.await? {
        Ok(answer) => Chain::Answer(answer),
        Err(kind) => Chain::Refused(kind),
    })
}

/// Sends `request` by `exchange` and the hops its answers lead to by
/// `rule` (the one rulebook, redirect.rs): a hop home on a new stream of
/// the run's connection, a hop to another origin on the side connection
/// (h2_side.rs). `original`: the request's HTTP/1.1 bytes, from which the
/// rulebook writes each hop. Ok(Ok): the last response (not a redirect, or
/// one not followed); Ok(Err): the chain failed (the limit, an origin that
/// cannot be reached or failed); Err: a failure on the run's connection.
pub(crate) async fn follow<E: HopExchange>(
    ctx: &ConnectionContext,
    rule: &RedirectRule,
    exchange: &E,
    (sender, side): (&mut SendRequest<Bytes>, &mut SideLink),
    request: &H2Request,
    original: &[u8],
) -> Result<Result<E::Reply, ErrorKind>, SendError> {
    // Only a run that follows redirects gets here: no cost per request
    // otherwise, and the hop buffers only once a request hops.
    let mut hops = Hops::default();
    let mut hop: Option<H2Request> = None;
    loop {
        let next = hop.as_ref().unwrap_or(request);
        let reply = match hops.origin() {
            None => exchange.send(sender, next).await?,
            Some(origin) => match side.send(ctx, origin, exchange, next).await {
                Ok(reply) => reply,
                Err(kind) => return Ok(Err(kind)),
            },
        };
        let state = &*ctx.state;
        let (status, location) = (reply.status(), reply.location());
        match hops.follow(rule, status, location, original, state, &ctx.origins) {
            Follow::No | Follow::Offsite => return Ok(Ok(reply)),
            Follow::Limit => return Ok(Err(ErrorKind::RedirectLimit)),
            Follow::Unreachable => return Ok(Err(ErrorKind::Other)),
            Follow::Hop => match from_rendered(hops.request().unwrap_or(original), request) {
                Ok(next) => hop = Some(next),
                Err(why) => {
                    ctx.state.sample_error(ErrorKind::Other, || why);
                    return Ok(Err(ErrorKind::Other));
                }
            },
        }
    }
}
