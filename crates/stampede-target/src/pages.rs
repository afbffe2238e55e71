//! The built-in pages (`/` and `/index.html`: 515 bytes, `/1k.html`: 1024 bytes, the
//! sizes of the seeds' experiments) and their pre-built responses. A worker rebuilds
//! the response bytes once a second, when the Date changes, so that serving a page is
//! one copy of ready bytes.

use crate::clock::WallStrings;

/// Body length of `/` and `/index.html`.
pub(crate) const INDEX_PAGE_LEN: usize = 515;
/// Body length of `/1k.html`.
pub(crate) const ONE_K_PAGE_LEN: usize = 1024;

/// An HTML page of exactly `len` bytes (`len` must be at least the frame, ~150 bytes).
pub(crate) fn html_page(len: usize, title: &str) -> Vec<u8> {
    let head = format!(
        "<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"><title>{title}</title></head>\n\
         <body>\n<h1>{title}</h1>\n<p>"
    );
    let tail = "</p>\n</body>\n</html>\n";
    let filler = b"stampede built-in target page. ";
    let mut page = head.into_bytes();
    let need = len.saturating_sub(page.len() + tail.len());
    page.extend(filler.iter().cycle().take(need));
    page.extend_from_slice(tail.as_bytes());
    page.truncate(len);
    page
}

/// One page's pre-built keep-alive HTTP/1.1 response: header block then body.
pub(crate) struct Prebuilt {
    pub bytes: Vec<u8>,
    pub head_len: usize,
    pub body_len: usize,
}

impl Prebuilt {
    fn build(body: &[u8], wall: &WallStrings, alt_svc: &[u8]) -> Self {
        let mut bytes = Vec::with_capacity(body.len() + 160 + alt_svc.len());
        bytes.extend_from_slice(b"HTTP/1.1 200 OK\r\nServer: stampede\r\nDate: ");
        bytes.extend_from_slice(&wall.http);
        bytes.extend_from_slice(b"\r\nContent-Type: text/html\r\nContent-Length: ");
        bytes.extend_from_slice(body.len().to_string().as_bytes());
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(alt_svc);
        bytes.extend_from_slice(b"\r\n");
        let head_len = bytes.len();
        bytes.extend_from_slice(body);
        Prebuilt {
            bytes,
            head_len,
            body_len: body.len(),
        }
    }

    /// The full response (GET) or only its header block (HEAD).
    #[inline]
    pub(crate) fn response(&self, head_only: bool) -> &[u8] {
        if head_only {
            &self.bytes[..self.head_len]
        } else {
            &self.bytes
        }
    }
}

/// The built-in page bodies and their responses for the current second.
pub(crate) struct Pages {
    pub index_body: Vec<u8>,
    pub one_k_body: Vec<u8>,
    pub index: Prebuilt,
    pub one_k: Prebuilt,
}

impl Pages {
    /// `alt_svc`: a header line every page response carries (or empty).
    pub(crate) fn new(wall: &WallStrings, alt_svc: &[u8]) -> Self {
        let index_body = html_page(INDEX_PAGE_LEN, "stampede");
        let one_k_body = html_page(ONE_K_PAGE_LEN, "stampede 1k");
        let index = Prebuilt::build(&index_body, wall, alt_svc);
        let one_k = Prebuilt::build(&one_k_body, wall, alt_svc);
        Pages {
            index_body,
            one_k_body,
            index,
            one_k,
        }
    }

    /// Rewrites the Date in place (same length), without allocating.
    pub(crate) fn refresh(&mut self, wall: &WallStrings) {
        for p in [&mut self.index, &mut self.one_k] {
            if let Some(at) = find(&p.bytes[..p.head_len], b"Date: ") {
                let start = at + 6;
                p.bytes[start..start + wall.http.len()].copy_from_slice(&wall.http);
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_have_exact_sizes() {
        let p = Pages::new(&WallStrings::now(), b"");
        assert_eq!(p.index_body.len(), 515);
        assert_eq!(p.one_k_body.len(), 1024);
        assert!(p.index_body.ends_with(b"</html>\n"));
        assert_eq!(p.index.body_len, 515);
        let head = std::str::from_utf8(&p.index.bytes[..p.index.head_len]).unwrap();
        assert!(head.contains("Content-Length: 515\r\n"));
    }
}
