//! TLS for the reactors, without I/O: one rustls client session per
//! connection. The slot hands it the ciphertext it received and gets the
//! plaintext back chunk by chunk (straight from rustls' buffer, no copy),
//! and queues the request's plaintext to get the ciphertext it must send.
//! Every session of a worker is built from the connector's one
//! `ClientConfig`, so its session cache (resumption) is shared.

use crate::exchange::ledger::Ledger;
use crate::http1::ResponseProgress;
use crate::net::transport::TlsClient;
use rustls::ClientConnection;
use stampede_metrics::ErrorKind;
use std::io::{self, BufRead, Write};
use std::time::Instant;

/// One connection's TLS session and the ciphertext it has yet to send.
#[derive(Debug)]
pub(super) struct TlsSession {
    connection: ClientConnection,
    /// Ciphertext produced by the session; `out[sent..]` is not out yet.
    out: Vec<u8>,
    sent: usize,
    negotiated: crate::net::transport::HandshakeReport,
}

/// What received ciphertext left the session in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Received {
    /// The stream goes on.
    Open,
    /// The server sent close_notify: nothing more will come.
    Closed,
}

impl TlsSession {
    /// A new session for `client`, its ClientHello ready to send.
    pub(super) fn new(client: &TlsClient) -> Result<TlsSession, rustls::Error> {
        let mut connection =
            ClientConnection::new(client.config.clone(), client.server_name.clone())?;
        // A request is queued whole (it is in memory already); the default
        // limit would make a large body's write stop short.
        connection.set_buffer_limit(None);
        let mut session = TlsSession {
            connection,
            out: Vec::new(),
            sent: 0,
            negotiated: client.negotiated.clone(),
        };
        session.produce();
        Ok(session)
    }

    pub(super) fn is_handshaking(&self) -> bool {
        self.connection.is_handshaking()
    }

    /// The protocol the server chose in ALPN, once the handshake is over.
    pub(super) fn alpn_protocol(&self) -> Option<&[u8]> {
        self.connection.alpn_protocol()
    }

    /// Feeds ciphertext the server sent; each plaintext chunk it decrypts
    /// goes to `plain`, in order.
    pub(super) fn receive(
        &mut self,
        mut ciphertext: &[u8],
        mut plain: impl FnMut(&[u8]),
    ) -> Result<Received, rustls::Error> {
        while !ciphertext.is_empty() {
            match self.connection.read_tls(&mut ciphertext) {
                // close_notify came: rustls takes nothing after it.
                Ok(0) => return Ok(Received::Closed),
                Ok(_) => {}
                // Only a full plaintext buffer refuses bytes, and it is
                // drained after every record batch below.
                Err(error) => return Err(rustls::Error::General(error.to_string())),
            }
            let state = self.connection.process_new_packets()?;
            self.negotiated.note(&self.connection);
            self.drain_plaintext(&mut plain);
            if state.peer_has_closed() {
                return Ok(Received::Closed);
            }
        }
        // The session may owe the server a reply (its handshake messages).
        self.produce();
        Ok(Received::Open)
    }

    /// Hands every decrypted chunk to `plain`.
    fn drain_plaintext(&mut self, plain: &mut impl FnMut(&[u8])) {
        let mut reader = self.connection.reader();
        loop {
            let taken = match reader.fill_buf() {
                Ok([]) | Err(_) => return,
                Ok(chunk) => {
                    plain(chunk);
                    chunk.len()
                }
            };
            reader.consume(taken);
        }
    }

    /// Queues plaintext to send (sent once the handshake is over).
    pub(super) fn write_plain(&mut self, plaintext: &[u8]) -> io::Result<()> {
        self.connection.writer().write_all(plaintext)?;
        self.produce();
        Ok(())
    }

    /// The ciphertext not sent yet.
    pub(super) fn unsent(&self) -> &[u8] {
        &self.out[self.sent..]
    }

    /// `n` bytes of [`TlsSession::unsent`] went out.
    pub(super) fn advance(&mut self, n: usize) {
        self.sent = (self.sent + n).min(self.out.len());
        if self.sent == self.out.len() {
            self.out.clear();
            self.sent = 0;
        }
    }

    /// Moves the ciphertext not sent yet into `into` (emptied first), for a
    /// send that needs its buffer to stay put until it completes; the
    /// session starts a new buffer.
    pub(super) fn take_unsent(&mut self, into: &mut Vec<u8>) {
        into.clear();
        if self.sent == 0 {
            std::mem::swap(&mut self.out, into);
        } else {
            into.extend_from_slice(&self.out[self.sent..]);
            self.out.clear();
            self.sent = 0;
        }
    }

    /// Moves what the session has to send into `out`.
    fn produce(&mut self) {
        while self.connection.wants_write() {
            // Writing into a Vec cannot fail.
            if self.connection.write_tls(&mut self.out).is_err() {
                return;
            }
        }
    }
}

/// Decrypts `ciphertext` and parses its plaintext as the awaited response;
/// what comes after the response completes is kept, as unsolicited.
pub(super) fn decrypt_response(
    tls: &mut TlsSession,
    ledger: &mut Ledger,
    ciphertext: &[u8],
    now: Instant,
) -> Result<(Result<ResponseProgress, ErrorKind>, Received), rustls::Error> {
    let mut progress = Ok(ResponseProgress::Partial);
    let received = tls.receive(ciphertext, |plain| {
        if matches!(progress, Ok(ResponseProgress::Partial)) {
            progress = ledger.received(plain, now);
        } else {
            ledger.keep_early(plain);
        }
    })?;
    Ok((progress, received))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
    use rustls::{HandshakeKind, RootCertStore, ServerConfig, ServerConnection};
    use std::io::Read;
    use std::sync::Arc;

    fn configs() -> (TlsClient, Arc<ServerConfig>) {
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let cert = CertificateDer::from(certified.cert.der().to_vec());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            certified.signing_key.serialize_der(),
        ));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut server = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.clone()], key)
            .unwrap();
        server.send_tls13_tickets = 2;
        let mut roots = RootCertStore::empty();
        roots.add(cert).unwrap();
        let client = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let client = TlsClient {
            config: Arc::new(client),
            server_name: ServerName::try_from("localhost").unwrap(),
            negotiated: Default::default(),
        };
        (client, Arc::new(server))
    }

    /// Moves the client's ciphertext to the server and the server's back
    /// until neither has anything to say; returns the client's plaintext.
    fn exchange(client: &mut TlsSession, server: &mut ServerConnection) -> Vec<u8> {
        let mut plaintext = Vec::new();
        loop {
            let to_server = client.unsent().to_vec();
            client.advance(to_server.len());
            if !to_server.is_empty() {
                server.read_tls(&mut &to_server[..]).unwrap();
                server.process_new_packets().unwrap();
            }
            let mut to_client = Vec::new();
            while server.wants_write() {
                server.write_tls(&mut to_client).unwrap();
            }
            if !to_client.is_empty() {
                client
                    .receive(&to_client, |chunk| plaintext.extend_from_slice(chunk))
                    .unwrap();
            }
            if to_server.is_empty() && to_client.is_empty() {
                return plaintext;
            }
        }
    }

    #[test]
    fn a_request_goes_out_and_its_answer_comes_back_and_the_next_session_resumes() {
        let (client, server_config) = configs();
        for round in 0..2 {
            let mut session = TlsSession::new(&client).unwrap();
            let mut server = ServerConnection::new(server_config.clone()).unwrap();
            assert!(session.is_handshaking());
            exchange(&mut session, &mut server);
            assert!(!session.is_handshaking());
            let expected = if round == 0 {
                HandshakeKind::Full
            } else {
                HandshakeKind::Resumed
            };
            assert_eq!(session.connection.handshake_kind(), Some(expected));
            session.write_plain(b"GET / HTTP/1.1\r\n\r\n").unwrap();
            exchange(&mut session, &mut server);
            let mut request = [0u8; 18];
            server.reader().read_exact(&mut request).unwrap();
            assert_eq!(&request, b"GET / HTTP/1.1\r\n\r\n");
            server.writer().write_all(b"HTTP/1.1 200 OK").unwrap();
            assert_eq!(exchange(&mut session, &mut server), b"HTTP/1.1 200 OK");
            server.send_close_notify();
            let mut close = Vec::new();
            server.write_tls(&mut close).unwrap();
            assert_eq!(session.receive(&close, |_| {}).unwrap(), Received::Closed);
        }
    }

    #[test]
    fn a_certificate_it_does_not_trust_fails_the_handshake() {
        let (_, server_config) = configs();
        let (stranger, _) = configs();
        let mut session = TlsSession::new(&stranger).unwrap();
        let mut server = ServerConnection::new(server_config).unwrap();
        let hello = session.unsent().to_vec();
        server.read_tls(&mut &hello[..]).unwrap();
        server.process_new_packets().unwrap();
        let mut answer = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut answer).unwrap();
        }
        let error = session.receive(&answer, |_| {}).unwrap_err();
        assert!(error.to_string().contains("certificate"), "{error}");
    }
}
