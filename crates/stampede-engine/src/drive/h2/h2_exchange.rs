//! One HTTP/2 request and the head of its response: the one way both HTTP/2
//! paths send (fixed requests in h2_client.rs, a workload's in
//! h2_workload.rs), so a change to how a stream is opened is made once; and
//! [`send`], that request with its whole response read, for fixed requests.

use crate::drive::h2::h2_conn_end::{sent, unsent, SendError};
use crate::drive::h2::h2_watch::H2Watch;
use crate::http1::DecodedCount;
use crate::plan::h2_request::H2Request;
use bytes::Bytes;
use h2::client::SendRequest;
use std::future::poll_fn;
use std::time::Instant;

/// Sends `request` on a stream of `sender` (waiting while the server's
/// stream limit holds it back) and waits for the response's head: the one
/// way both HTTP/2 paths send.
pub(crate) async fn exchange(
    sender: &mut SendRequest<Bytes>,
    request: &H2Request,
) -> Result<(http::Response<h2::RecvStream>, Instant), SendError> {
    // Waits while the server's stream limit holds back an earlier request of
    // this stream's sender.
    poll_fn(|cx| sender.poll_ready(cx)).await.map_err(unsent)?;
    let mut builder = http::Request::builder()
        .method(request.method.clone())
        .uri(request.uri.clone());
    if let Some(headers) = builder.headers_mut() {
        *headers = request.headers.clone();
    }
    let message = builder.body(()).expect("parts were validated in prepare");
    let no_body = request.body.is_empty();
    let (response, mut body_stream) = sender.send_request(message, no_body).map_err(unsent)?;
    if !no_body {
        body_stream
            .send_data(request.body.clone(), true)
            .map_err(sent)?;
    }
    let response = response.await.map_err(sent)?;
    let first_byte = Instant::now();
    Ok((response, first_byte))
}

/// A response read whole: its status, when its head arrived, its body's
/// length, with `--decode` its decoded length (or why it did not decode),
/// and its `Location` when asked for.
pub(crate) struct Answer {
    pub status: u16,
    pub first_byte: Instant,
    pub body: u64,
    pub decoded: Option<Decoded>,
    pub location: Option<http::HeaderValue>,
}

/// A body's decoded length and whether it came encoded, or why it did not decode.
pub(crate) type Decoded = Result<(u64, bool), crate::http1::DecodeError>;

/// Sends one request and reads its whole response; `decode`: count its
/// decoded length (`--decode`); `location`: keep a 3xx's `Location`
/// (`--redirects`); `watch`: feed its body to the stream's watch (`--sse`,
/// h2_watch.rs).
pub(crate) async fn send(
    sender: &mut SendRequest<Bytes>,
    request: &H2Request,
    decode: bool,
    location: bool,
    watch: Option<&mut H2Watch>,
) -> Result<Answer, SendError> {
    let (response, first_byte) = exchange(sender, request).await?;
    let status = response.status().as_u16();
    let location = (location && (300..400).contains(&status))
        .then(|| response.headers().get(http::header::LOCATION).cloned())
        .flatten();
    // What reads the body besides its length; a plain run has none, so
    // each DATA frame pays one test for both.
    let mut tap = (decode || watch.is_some()).then(|| BodyTap {
        count: decode.then(|| DecodedCount::new(response.headers())),
        watch: watch.map(|w| w.head(status, first_byte, response.headers())),
    });
    let mut body = response.into_body();
    let mut length = 0u64;
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(sent)?;
        length += chunk.len() as u64;
        if let Some(tap) = &mut tap {
            tap.data(&chunk);
        }
        // Return the flow-control window so the server keeps sending.
        let _ = body.flow_control().release_capacity(chunk.len());
        if body.is_end_stream() {
            // The frame carried END_STREAM: no need to poll for the end.
            break;
        }
    }
    Ok(Answer {
        status,
        first_byte,
        body: length,
        decoded: tap.and_then(|t| t.count).map(DecodedCount::end),
        location,
    })
}

/// What reads a body besides its length: `--decode`'s count, `--sse`'s watch.
struct BodyTap<'a> {
    count: Option<DecodedCount>,
    watch: Option<&'a mut H2Watch>,
}

impl BodyTap<'_> {
    fn data(&mut self, chunk: &[u8]) {
        if let Some(count) = &mut self.count {
            count.data(chunk);
        }
        if let Some(watch) = &mut self.watch {
            watch.data(chunk);
        }
    }
}
