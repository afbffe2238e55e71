//! A workload's HTTP/2 exchange (h2_workload.rs): a request sent and its
//! response kept as the checks read it (status, header fields, the body
//! decoded up to `--capture-max`), and with `--redirects` (or a step's
//! `follow_redirects`) the hops it leads to, each sent the same way by
//! the one redirect chain (h2_redirects.rs `follow`).

use crate::drive::h2::h2_conn_end::{sent, SendError};
use crate::drive::h2::h2_exchange::exchange;
use crate::drive::h2::h2_hop::{HopExchange, HopReply};
use crate::drive::h2::h2_redirects::follow;
use crate::drive::h2::h2_side::SideLink;
use crate::http1::DecodedCount;
use crate::plan::h2_request::H2Request;
use crate::worker::context::ConnectionContext;
use bytes::Bytes;
use h2::client::SendRequest;
use stampede_metrics::ErrorKind;
use std::time::Instant;

/// A response as the checks see it.
pub(crate) struct Kept {
    pub status: u16,
    pub first_byte: Instant,
    /// Header fields, as the `h2` crate hands them (lowercase names).
    pub headers: http::HeaderMap,
    /// The body, decoded, up to `--capture-max`, when a check or extractor
    /// reads it.
    pub body: Vec<u8>,
    pub body_bytes: u64,
    /// With a body check or `--decode`: its decoded length and whether it
    /// came encoded, or why it did not decode.
    pub decoded: Option<Result<(u64, bool), crate::http1::DecodeError>>,
}

/// Sends `request` (request `target` of the run) and reads its response,
/// keeping what the checks read (`limit`); with `--redirects` (or a step's
/// `follow_redirects`) and the request's HTTP/1.1 bytes (`original`), the
/// hops its answers lead to, by the one rulebook (h2_redirects.rs
/// `follow`): the checks judge the last. Ok(Err): the chain failed (the
/// limit, another origin that failed).
pub(crate) async fn send_following(
    ctx: &ConnectionContext,
    (sender, side): (&mut SendRequest<Bytes>, &mut SideLink),
    request: &H2Request,
    target: usize,
    original: Option<&[u8]>,
    limit: usize,
) -> Result<Result<Kept, ErrorKind>, SendError> {
    let keeping = Keeping {
        limit,
        decode: ctx.decode,
    };
    match ctx.redirect_of(target).zip(original) {
        None => keeping.send(sender, request).await.map(Ok),
        Some((rule, original)) => {
            follow(ctx, rule, &keeping, (sender, side), request, original).await
        }
    }
}

/// A workload's exchange: header fields and up to `limit` bytes of the
/// decoded body kept ([`send_keeping`]).
struct Keeping {
    limit: usize,
    decode: bool,
}

impl HopExchange for Keeping {
    type Reply = Kept;

    async fn send(
        &self,
        sender: &mut SendRequest<Bytes>,
        request: &H2Request,
    ) -> Result<Kept, SendError> {
        send_keeping(sender, request, self.limit, self.decode).await
    }
}

impl HopReply for Kept {
    fn status(&self) -> u16 {
        self.status
    }

    fn location(&self) -> Option<&[u8]> {
        let location = self.headers.get(http::header::LOCATION)?;
        Some(location.as_bytes())
    }
}

/// Sends one request and reads its whole response, keeping its header
/// fields and up to `limit` bytes of its decoded body. The body is decoded
/// when something reads it (`limit > 0`) or with `count_decoded` (`--decode`).
async fn send_keeping(
    sender: &mut SendRequest<Bytes>,
    request: &H2Request,
    limit: usize,
    count_decoded: bool,
) -> Result<Kept, SendError> {
    let (response, first_byte) = exchange(sender, request).await?;
    let (parts, mut body) = response.into_parts();
    let mut kept = Vec::new();
    let mut keep = |out: &[u8]| {
        let room = limit.saturating_sub(kept.len());
        kept.extend_from_slice(&out[..out.len().min(room)]);
    };
    let mut decoding = (limit > 0 || count_decoded).then(|| DecodedCount::new(&parts.headers));
    let mut length = 0u64;
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(sent)?;
        length += chunk.len() as u64;
        if let Some(decoding) = &mut decoding {
            // The whole body is decoded (not only what is kept), so a body
            // cut short or corrupt past the kept part fails here too.
            decoding.data_into(&chunk, &mut keep);
        }
        let _ = body.flow_control().release_capacity(chunk.len());
        if body.is_end_stream() {
            break;
        }
    }
    let decoded = decoding.map(|d| d.end_into(&mut keep));
    Ok(Kept {
        status: parts.status.as_u16(),
        first_byte,
        headers: parts.headers,
        body: kept,
        body_bytes: length,
        decoded,
    })
}
