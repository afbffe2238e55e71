//! What the client asks of a connection: its windows, frame size and the
//! response fields it wants to see.

/// A connection's settings, as chosen by the driver.
#[derive(Debug, Clone)]
pub struct Config {
    /// The receive window of each stream (SETTINGS_INITIAL_WINDOW_SIZE, at
    /// most 2^31-1). WINDOW_UPDATE is sent once half of it is consumed.
    pub stream_window: u32,
    /// The receive window of the connection; above 65,535 a WINDOW_UPDATE
    /// right after SETTINGS raises it. Replenished once half is consumed.
    pub connection_window: u32,
    /// The largest frame payload accepted (SETTINGS_MAX_FRAME_SIZE,
    /// 16,384 to 16,777,215; a value outside is brought inside).
    pub max_frame_size: u32,
    /// The largest header block (HEADERS plus CONTINUATION) accepted; a
    /// larger one ends the connection (ENHANCE_YOUR_CALM).
    pub max_header_block: usize,
    /// Streams started before the server's SETTINGS arrive (until then its
    /// SETTINGS_MAX_CONCURRENT_STREAMS is unknown). RFC 9113 §6.5.2 asks
    /// servers for at least 100; a server that allows fewer may refuse the
    /// extra ones, which then end [`crate::End::Unprocessed`].
    pub streams_before_settings: u32,
    /// Response field names (lower case) reported in
    /// [`crate::ResponseHead::field`] and trailers, by index.
    pub capture: Vec<Vec<u8>>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            stream_window: 1 << 20,
            connection_window: 1 << 24,
            max_frame_size: 16_384,
            max_header_block: 64 << 10,
            streams_before_settings: 100,
            capture: Vec::new(),
        }
    }
}
