//! One HTTP/2 connection opened: connected by the run's connector, the
//! `h2` crate's handshake done with stampede's windows, and counted. The
//! run's own connections (h2_client.rs `open`) and a redirect's side
//! connections to another origin (h2_side.rs) both open so.

use crate::net::outcome_class::classify_h2;
use crate::net::transport::Connector;
use crate::worker::context::ConnectionContext;
use bytes::Bytes;
use h2::client::SendRequest;
use stampede_metrics::ErrorKind;
use std::time::Duration;

/// Flow-control windows this client announces. h2load announces 2^30 − 1 for
/// both; with the 64 KiB default the connection window is topped up by a
/// WINDOW_UPDATE about every 32 KiB received (every ~60 small responses).
/// The stream window stays moderate: a slow reader never has more than this
/// buffered per stream.
const STREAM_WINDOW: u32 = 16 << 20;
const CONNECTION_WINDOW: u32 = (1 << 30) - 1;

/// Opens a connection with `connector` and does the HTTP/2 handshake,
/// counting it (a reconnect when `reconnect`): the run's own connections
/// (h2_client.rs `open`) and a redirect's to another origin (h2_side.rs). Ok: its
/// sender and its connect time; Err: the failure's class and its reason
/// when there is one to sample.
pub(crate) async fn handshake(
    ctx: &ConnectionContext,
    connector: &Connector,
    reconnect: bool,
) -> Result<(SendRequest<Bytes>, Duration), (ErrorKind, Option<String>)> {
    let opened = ctx
        .connect_counted(connector, connector.connect_timeout)
        .await;
    let (stream, times) = match opened {
        Ok(opened) => opened,
        Err(failure) => return Err((failure.kind, failure.reason)),
    };
    ctx.state.connection_opened(reconnect, times.connect);
    let handshake = h2::client::Builder::new()
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .handshake(stream);
    match handshake.await {
        Ok((sender, connection)) => {
            tokio::task::spawn_local(async move {
                let _ = connection.await;
            });
            Ok((sender, times.connect))
        }
        Err(e) => {
            ctx.state.connection_closed();
            Err((classify_h2(&e), Some(format!("HTTP/2 handshake: {e}"))))
        }
    }
}
