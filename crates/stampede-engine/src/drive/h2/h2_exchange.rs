//! One HTTP/2 request and the head of its response: the one way both HTTP/2
//! paths send (fixed requests in h2_client.rs, a workload's in
//! h2_workload.rs), so a change to how a stream is opened is made once.

use crate::drive::h2::h2_conn_end::{sent, unsent, SendError};
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
