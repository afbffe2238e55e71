//! Command-line options for the way to the target (`run` and everything
//! built on it): Unix socket, TLS, proxy, pipelining.

use stampede_plan::{
    ClientCert, CompressionSpec, Header, IoBackend, ProxySpec, ResolveOverride, TlsSpec,
    TlsVersion, TransportSpec,
};
use std::path::PathBuf;

#[derive(Debug, Clone, Default, clap::Args)]
pub struct TransportArgs {
    /// Connect to this Unix domain socket instead of the URL's host and port
    /// (the URL still gives the path and Host header)
    #[arg(long, value_name = "PATH")]
    pub unix_socket: Option<PathBuf>,
    /// https: accept any server certificate (self-signed test servers)
    #[arg(long)]
    pub insecure: bool,
    /// https: trust the CA certificate(s) in this PEM file instead of the system roots
    #[arg(long, value_name = "PEM")]
    pub cacert: Option<PathBuf>,
    /// https: the server name to send (SNI) and verify [default: the URL's host]
    #[arg(long, value_name = "NAME")]
    pub sni: Option<String>,
    /// https: a full TLS handshake on every new connection (no session resumption)
    #[arg(long)]
    pub no_tls_resume: bool,
    /// https: present this client certificate chain (PEM; needs --key) for mTLS
    #[arg(long, value_name = "PEM")]
    pub cert: Option<PathBuf>,
    /// https: the private key (PEM: PKCS#8, RSA or EC) of --cert
    #[arg(long, value_name = "PEM")]
    pub key: Option<PathBuf>,
    /// https: lowest TLS version to offer (1.2 or 1.3) [default: 1.2]
    #[arg(long, value_name = "1.2|1.3", value_parser = parse_tls_version)]
    pub tls_min: Option<TlsVersion>,
    /// https: highest TLS version to offer (1.2 or 1.3) [default: 1.3]
    #[arg(long, value_name = "1.2|1.3", value_parser = parse_tls_version)]
    pub tls_max: Option<TlsVersion>,
    /// https: cipher suites to offer, comma-separated rustls names, e.g.
    /// TLS13_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub ciphers: Vec<String>,
    /// https: key exchange groups to offer, comma-separated (X25519, secp256r1, secp384r1)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub tls_groups: Vec<String>,
    /// Send requests through this HTTP proxy (HOST:PORT): absolute-form requests
    /// for http://, a CONNECT tunnel for https://
    #[arg(short = 'X', long, value_name = "HOST:PORT")]
    pub proxy: Option<String>,
    /// HTTP/1.1 pipelining: send N requests at once on each connection, then
    /// read their N responses (latency is measured per request)
    #[arg(long, value_name = "N", default_value_t = 1, allow_negative_numbers = true, value_parser = crate::flags::count_arg::count_usize)]
    pub pipeline: usize,
    /// Follow up to N redirects per request (301/302/303 as a GET, 307/308
    /// as sent), to any http or https origin (another one on its own
    /// connection); each hop counted, not a request of its own
    #[arg(long, value_name = "N", default_value_t = 0, allow_negative_numbers = true, value_parser = crate::flags::count_arg::count_u32)]
    pub redirects: u32,
    /// Speak HTTP/2: ALPN h2 over https, prior knowledge (h2c) over http
    #[arg(long, group = "multiplexed")]
    pub http2: bool,
    /// Speak HTTP/3 over QUIC (UDP to the URL's port; https only): one QUIC
    /// endpoint per worker thread, -c connections × --streams requests each
    #[arg(long, group = "multiplexed")]
    pub http3: bool,
    /// HTTP/3: send a resumed connection's first requests as 0-RTT data
    /// (counted apart in the breakdown: 0-RTT data can be replayed)
    #[arg(long = "0rtt", requires = "http3")]
    pub zero_rtt: bool,
    /// HTTP/2 and HTTP/3: streams in flight on each connection (-c connections × N streams)
    #[arg(long, value_name = "N", default_value_t = 1, requires = "multiplexed", allow_negative_numbers = true, value_parser = crate::flags::count_arg::count_usize)]
    pub streams: usize,
    /// Connect to ADDRESS for HOST:PORT instead of asking DNS (curl's --resolve;
    /// repeatable), e.g. example.test:8443:127.0.0.1
    /// (several addresses: HOST:PORT:ADDR,ADDR,... with --dns)
    #[arg(long, value_name = "HOST:PORT:ADDRESS")]
    pub resolve: Vec<String>,
    #[command(flatten)]
    pub connection: crate::flags::connection_args::ConnectionArgs,
    /// Event loop for HTTP/1.1: uring (a hand-driven reactor over io_uring,
    /// about one syscall per request), epoll (the same over epoll), tokio
    /// (supports everything), or auto: uring where the kernel offers it, else
    /// epoll, for HTTP/1.1 runs (plain or TLS, -c or -r, with --pipeline); tokio
    /// for HTTP/2, HTTP/3 and TLS through a proxy (-X). Default from STAMPEDE_IO
    #[arg(long, value_name = "auto|epoll|uring|tokio", value_parser = parse_io, env = "STAMPEDE_IO")]
    pub io: Option<IoBackend>,
    /// Ask for compressed responses (curl's --compressed): send Accept-Encoding:
    /// gzip, br, zstd (or the codings given: --compressed=gzip,br). Bodies are
    /// counted as they come over the wire and not decoded
    #[arg(long, value_name = "CODINGS", num_args = 0..=1, require_equals = true,
          default_missing_value = DEFAULT_ACCEPT_ENCODING, value_parser = parse_codings)]
    pub compressed: Option<String>,
    /// Also decode every encoded body (gzip, deflate, br, zstd) and report the
    /// decoded bytes; implies --compressed. Costs client CPU per response
    #[arg(long)]
    pub decode: bool,
    /// Watch each response as a stream (server-sent events; a chunked body's
    /// chunks): time to the first event, gaps between events, events/s. One
    /// request is one stream, ended by the server or --sse-for; -n counts
    /// streams. Over HTTP/1.1 and HTTP/2 (--http2), not HTTP/3
    #[arg(long)]
    pub sse: bool,
    /// End each stream after DUR, as a success (it replaces --timeout)
    #[arg(long, value_name = "DUR", value_parser = stampede_plan::parse_duration, requires = "sse")]
    pub sse_for: Option<std::time::Duration>,
    /// When the server ends an event stream before --sse-for is over, or a
    /// network error cuts it (HTTP/1.1), connect again as a browser does:
    /// wait its retry: time (3 s if it sent none), send Last-Event-ID with
    /// the last id: seen; one stream, reconnects and errors counted. Needs
    /// --sse-for; runs on the tokio event loop.
    /// e.g. --sse --sse-for 30s --sse-reconnect
    #[arg(long, requires = "sse_for")]
    pub sse_reconnect: bool,
    /// What each WebSocket message carries (a ws:// or wss:// URL): the
    /// text, or @FILE for a file's bytes; a text message is a template
    /// ({{seq}}, {{conn}}, {{iter}}, {{uuid}}…) [default: hello]
    #[arg(long, value_name = "TEXT|@FILE")]
    pub ws_message: Option<String>,
    /// Send the WebSocket messages as binary frames, not text
    #[arg(long)]
    pub ws_binary: bool,
    /// Offer this WebSocket subprotocol (Sec-WebSocket-Protocol; repeatable,
    /// in order of preference); a server that picks one not offered fails
    /// the connection (ws_upgrade_refused), e.g. --ws-subprotocol graphql-ws
    #[arg(long, value_name = "NAME")]
    pub ws_subprotocol: Vec<String>,
    /// Offer permessage-deflate (RFC 7692): messages go compressed both ways
    /// when the server agrees; if it does not, they go as they are and the
    /// result's websocket.deflate_refused counts it, e.g. --ws-deflate
    #[arg(long)]
    pub ws_deflate: bool,
    /// Send this many WebSocket messages per second on each connection (the
    /// -c connections each paced, one message in flight; latency from each
    /// message's intended send), where -r is a rate in total, e.g. --ws-rate 10
    #[arg(long, value_name = "PER_S", allow_negative_numbers = true)]
    pub ws_rate: Option<f64>,
    /// Pair each WebSocket reply with the message that carried the same id,
    /// not by order: the id is found in both by this extractor (a JSON path
    /// or a regex, as --extract reads a body); a reply with no such id in
    /// flight counts as pushed, e.g. --ws-match-id 'json($.id)'
    #[arg(long, value_name = "SOURCE")]
    pub ws_match_id: Option<String>,
}

/// A fixed WebSocket message (`message`) in which `--ws-match-id SOURCE`
/// finds no id is refused before the run, not failed once per message.
pub fn refuse_without_id(source: &str, message: &[u8]) -> anyhow::Result<()> {
    let extractor = stampede_workload::Extractor::parse("id", source, 0)
        .map_err(|e| anyhow::anyhow!("--ws-match-id {source}: {}", e.reason))?;
    let view = stampede_workload::ResponseView::new(101, &[], message, Default::default());
    let mut store = stampede_workload::VarStore::new(1);
    if extractor.extract(&view, &mut store).is_err() {
        anyhow::bail!(
            "--ws-match-id {source} finds no id in the message {:?}: each message must carry its own",
            String::from_utf8_lossy(message)
        );
    }
    Ok(())
}

/// What `--compressed` asks for without a list.
pub const DEFAULT_ACCEPT_ENCODING: &str = "gzip, br, zstd";

impl TransportArgs {
    /// The WebSocket part of the plan for a `ws://` or `wss://` URL; for
    /// another URL, `--ws-message` and `--ws-binary` are refused.
    /// `scenario`: the messages are a scenario's steps (`send`), checked
    /// with the workload (workload_plan.rs), not `--ws-message`.
    ///
    /// A `Sec-WebSocket-Protocol` header given with `-H` (as a browser's
    /// "Copy as cURL" has it) is the offer, as `--ws-subprotocol` would
    /// make it: the answer is checked against what was sent.
    pub fn websocket(
        &self,
        is_ws: bool,
        scenario: bool,
        headers: &mut Vec<Header>,
    ) -> anyhow::Result<Option<stampede_plan::WebSocketSpec>> {
        if !is_ws {
            if self.ws_message.is_some()
                || self.ws_binary
                || !self.ws_subprotocol.is_empty()
                || self.ws_deflate
                || self.ws_rate.is_some()
                || self.ws_match_id.is_some()
            {
                anyhow::bail!(
                    "--ws-message, --ws-binary, --ws-subprotocol, --ws-deflate, --ws-rate and --ws-match-id need a ws:// or wss:// URL"
                );
            }
            return Ok(None);
        }
        if scenario && self.ws_message.is_some() {
            anyhow::bail!(
                "--ws-message is the message of a run without steps; a scenario's steps send their own (send = '...'): give one of them"
            );
        }
        let mut spec = stampede_plan::WebSocketSpec {
            binary: self.ws_binary,
            subprotocols: self.ws_subprotocol.clone(),
            deflate: self.ws_deflate,
            scenario,
            pace: match self.ws_rate {
                Some(rate) if !(rate.is_finite() && rate > 0.0) => {
                    anyhow::bail!(
                        "--ws-rate {rate} is not a positive number of messages per second"
                    )
                }
                rate => rate.map(|rate| std::time::Duration::from_secs_f64(1.0 / rate)),
            },
            ..Default::default()
        };
        spec.subprotocols
            .extend(offered_subprotocols(headers, &self.ws_subprotocol)?);
        if let Some(text) = self.ws_message.as_deref() {
            spec.message = match text.strip_prefix('@') {
                Some("") => anyhow::bail!("--ws-message @ needs a file name (@FILE)"),
                Some(path) => std::fs::read(path)
                    .map_err(|e| anyhow::anyhow!("reading --ws-message file {path}: {e}"))?,
                None => text.as_bytes().to_vec(),
            };
        }
        // A text message is a template, as a request body is: compiled
        // against the workload's names (workload_plan.rs), in one line
        // before the run.
        if let Some(source) = &self.ws_match_id {
            let extractor = stampede_workload::Extractor::parse("ws-match-id", source, 0)
                .map_err(|e| anyhow::anyhow!("--ws-match-id {source}: {}", e.reason))?;
            if let Some(why) = extractor.cannot_read_message(spec.binary) {
                anyhow::bail!("--ws-match-id {source}: {why}");
            }
            let scope = stampede_workload::Scope::new();
            let fixed = stampede_workload::Template::compile("--ws-message", &spec.message, &scope)
                .ok()
                .and_then(|t| t.static_bytes());
            if let Some(fixed) = fixed.filter(|_| !spec.binary && !scenario) {
                refuse_without_id(source, &fixed)?;
            }
            spec.match_id = Some(source.clone());
        }
        Ok(Some(spec))
    }

    /// `--compressed` and `--decode`: what the plan records, and the
    /// `Accept-Encoding` header to add (none when `given` has one: the
    /// user's header is sent, and recorded, instead).
    pub fn compression(&self, given: &[Header]) -> (CompressionSpec, Option<Header>) {
        let asked = self
            .compressed
            .clone()
            .or_else(|| self.decode.then(|| DEFAULT_ACCEPT_ENCODING.to_string()));
        let Some(asked) = asked else {
            return (CompressionSpec::default(), None);
        };
        let theirs = given
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("accept-encoding"));
        let spec = |accept: &str| CompressionSpec {
            accept_encoding: Some(accept.to_string()),
            decode: self.decode,
        };
        match theirs {
            Some(header) => (spec(&header.value), None),
            None => (
                spec(&asked),
                Some(Header {
                    name: "Accept-Encoding".into(),
                    value: asked,
                }),
            ),
        }
    }

    /// The transport part of the plan.
    pub fn spec(&self) -> anyhow::Result<TransportSpec> {
        let tls_given = self.insecure
            || self.cacert.is_some()
            || self.sni.is_some()
            || self.no_tls_resume
            || self.cert.is_some()
            || self.tls_min.is_some()
            || self.tls_max.is_some()
            || !self.ciphers.is_empty()
            || !self.tls_groups.is_empty();
        let client_cert = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => Some(ClientCert {
                cert: cert.clone(),
                key: key.clone(),
            }),
            (None, None) => None,
            (Some(_), None) => anyhow::bail!("--cert needs --key (the certificate's private key)"),
            (None, Some(_)) => anyhow::bail!("--key needs --cert (the client certificate)"),
        };
        let tls = tls_given.then(|| TlsSpec {
            insecure: self.insecure,
            ca_file: self.cacert.clone(),
            sni: self.sni.clone(),
            resume: !self.no_tls_resume,
            client_cert,
            min_version: self.tls_min,
            max_version: self.tls_max,
            ciphers: self.ciphers.clone(),
            groups: self.tls_groups.clone(),
        });
        let proxy = self.proxy.as_deref().map(ProxySpec::parse).transpose()?;
        if proxy.is_some() && self.unix_socket.is_some() {
            anyhow::bail!("--proxy and --unix-socket cannot be combined");
        }
        if self.streams == 0 {
            anyhow::bail!("--streams must be at least 1 (streams in flight per connection)");
        }
        Ok(TransportSpec {
            unix_socket: self.unix_socket.clone(),
            tls,
            proxy,
            pipeline: self.pipeline,
            http2: self.http2,
            streams: self.streams,
            http3: self.http3,
            zero_rtt: self.zero_rtt,
            resolve: self
                .resolve
                .iter()
                .map(|r| ResolveOverride::parse(r))
                .collect::<Result<_, _>>()?,
            lifetime: self.connection.lifetime()?,
            dns: self.connection.dns()?,
            io: self.io.unwrap_or_default(),
            redirects: self.redirects,
            // Set with the request's headers (`TransportArgs::compression`).
            compression: CompressionSpec::default(),
            stream: stampede_plan::StreamSpec {
                watch: self.sse,
                for_at_most: self.sse_for,
                reconnect: self.sse_reconnect,
            },
            // Set with the URL (`plan_args`): only a ws:// URL makes one.
            websocket: None,
        })
    }
}

/// `--compressed=LIST`: codings stampede can decode, comma-separated.
fn parse_codings(text: &str) -> Result<String, String> {
    let codings: Vec<&str> = text.split(',').map(str::trim).collect();
    for coding in &codings {
        if !["gzip", "deflate", "br", "zstd", "identity"]
            .contains(&coding.to_ascii_lowercase().as_str())
        {
            return Err(format!(
                "unknown coding '{coding}' (expected gzip, deflate, br, zstd, comma-separated)"
            ));
        }
    }
    Ok(codings.join(", "))
}

fn parse_io(text: &str) -> Result<IoBackend, String> {
    IoBackend::parse(text).map_err(|e| e.to_string())
}

fn parse_tls_version(text: &str) -> Result<TlsVersion, String> {
    TlsVersion::parse(text).map_err(|e| e.to_string())
}

/// The subprotocols a `-H 'Sec-WebSocket-Protocol: a, b'` offers, the
/// header taken out (the upgrade writes the offer itself); refused beside
/// `--ws-subprotocol`, where it is not clear which offer is meant. A
/// `Sec-WebSocket-Extensions` header is refused: the only extension
/// stampede speaks is permessage-deflate, offered by `--ws-deflate`.
fn offered_subprotocols(
    headers: &mut Vec<Header>,
    flags: &[String],
) -> anyhow::Result<Vec<String>> {
    let named = |h: &Header, name: &str| h.name.eq_ignore_ascii_case(name);
    if headers.iter().any(|h| named(h, "sec-websocket-extensions")) {
        anyhow::bail!(
            "-H Sec-WebSocket-Extensions: stampede offers only permessage-deflate, with --ws-deflate; drop the header"
        );
    }
    let mut offered = Vec::new();
    for header in headers
        .iter()
        .filter(|h| named(h, "sec-websocket-protocol"))
    {
        if !flags.is_empty() {
            anyhow::bail!(
                "-H Sec-WebSocket-Protocol and --ws-subprotocol both offer subprotocols: give one of them"
            );
        }
        offered.extend(
            header
                .value
                .split(',')
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(String::from),
        );
    }
    headers.retain(|h| !named(h, "sec-websocket-protocol"));
    Ok(offered)
}
