//! What a redirect chain over HTTP/2 asks of the exchange that sends its
//! hops ([`HopExchange`]) and of the replies it reads ([`HopReply`]): a
//! leaf, so that the chain (h2_redirects.rs) and the side connections it
//! sends hops on (h2_side.rs) share it without importing each other.

use crate::drive::h2::h2_conn_end::SendError;
use crate::plan::h2_request::H2Request;
use bytes::Bytes;
use h2::client::SendRequest;

/// One way of sending a request and reading its response: fixed requests
/// read the body's length ((h2_redirects.rs `Whole`)), a workload's keep what its checks
/// read (h2_workload.rs). A chain's every hop is sent so.
pub(crate) trait HopExchange {
    /// What a response read so gives.
    type Reply: HopReply;
    /// Sends `request` on a stream of `sender` and reads its response.
    async fn send(
        &self,
        sender: &mut SendRequest<Bytes>,
        request: &H2Request,
    ) -> Result<Self::Reply, SendError>;
}

/// What the rulebook reads of a response: its status and `Location`.
pub(crate) trait HopReply {
    fn status(&self) -> u16;
    fn location(&self) -> Option<&[u8]>;
}
