//! `--decode` over HTTP/2 and HTTP/3: their bodies arrive as
//! DATA, not through the HTTP/1.1 parser's capture, so they are counted
//! here, with the same decoders (decode.rs); a body check over HTTP/2
//! (h2_workload.rs) reads the decoded bytes through a sink.

use super::decode::{content_decoder, BodyDecoder, DecodeError};

/// `--decode` over HTTP/2 and HTTP/3: a body's decoded bytes, counted as
/// its DATA arrives (nothing kept).
#[derive(Debug)]
pub(crate) struct DecodedCount {
    decoder: Result<Option<BodyDecoder>, DecodeError>,
    decoded: u64,
    fed: bool,
}

impl DecodedCount {
    /// For a response with these headers.
    pub(crate) fn new(headers: &http::HeaderMap) -> DecodedCount {
        DecodedCount {
            decoder: content_decoder(headers),
            decoded: 0,
            fed: false,
        }
    }

    /// The next piece of the body; an error ends the count.
    pub(crate) fn data(&mut self, data: &[u8]) {
        self.data_into(data, &mut |_| {});
    }

    /// The next piece of the body, its decoded bytes (the bytes as they
    /// came when not encoded) handed to `sink`; an error ends the count.
    pub(crate) fn data_into(&mut self, data: &[u8], sink: &mut dyn FnMut(&[u8])) {
        if data.is_empty() {
            return;
        }
        self.fed = true;
        let decoded = &mut self.decoded;
        if let Ok(Some(decoder)) = &mut self.decoder {
            let fed = decoder.feed(data, &mut |out| {
                *decoded += out.len() as u64;
                sink(out);
            });
            if let Err(why) = fed {
                self.decoder = Err(why);
            }
        } else if let Ok(None) = self.decoder {
            *decoded += data.len() as u64;
            sink(data);
        }
    }

    /// The body is over: its decoded bytes and whether it came encoded,
    /// or why it did not decode (a body-less response never fails).
    pub(crate) fn end(self) -> Result<(u64, bool), DecodeError> {
        self.end_into(&mut |_| {})
    }

    /// [`DecodedCount::end`], the decoder's last bytes handed to `sink`.
    pub(crate) fn end_into(
        mut self,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(u64, bool), DecodeError> {
        let decoded = &mut self.decoded;
        match &mut self.decoder {
            Ok(None) => Ok((*decoded, false)),
            Ok(Some(_)) if !self.fed => Ok((0, false)),
            Ok(Some(decoder)) => {
                decoder.finish(&mut |out| {
                    *decoded += out.len() as u64;
                    sink(out);
                })?;
                Ok((*decoded, true))
            }
            Err(_) if !self.fed => Ok((0, false)),
            Err(why) => Err(why.clone()),
        }
    }
}
