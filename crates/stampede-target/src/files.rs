//! Static files under `--root`: safe mapping of a request path to a file (percent
//! decoding, no `..`, no absolute paths, no symlink leaving the root), Content-Type
//! from the extension, Last-Modified / If-Modified-Since, and a per-worker cache of
//! small files revalidated with a stat at most once a second.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime};

use crate::reply::{Outcome, Reply, Tail};
use crate::request::Head;
use crate::response::{self, Exchange, Len};

/// How long a cached file is trusted before it is stat-ed again.
const REVALIDATE: Duration = Duration::from_secs(1);
/// Cache bound per worker; past it the cache starts over.
const CACHE_BYTES: usize = 256 << 20;

struct Entry {
    body: Rc<[u8]>,
    ctype: &'static str,
    mtime: SystemTime,
    last_modified: [u8; crate::clock::HTTP_DATE_LEN],
    checked: Instant,
}

/// One worker's view of the root folder.
pub(crate) struct FileCache {
    root: PathBuf,
    max_cached: u64,
    entries: HashMap<String, Entry>,
    bytes: usize,
}

/// Why a path is not served.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    BadPath,
    Forbidden,
    NotFound,
    /// Over the cache limit: streamed from disk instead.
    Large,
}

impl FileCache {
    /// `root` must be canonical.
    pub(crate) fn new(root: PathBuf, max_cached: u64) -> Self {
        FileCache {
            root,
            max_cached,
            entries: HashMap::new(),
            bytes: 0,
        }
    }

    /// Produces the response for GET/HEAD of `path`.
    pub(crate) fn serve(
        &mut self,
        path: &str,
        head: &Head,
        x: &Exchange,
        out: &mut Vec<u8>,
    ) -> Outcome {
        let fresh = self
            .entries
            .get(path)
            .is_some_and(|e| e.checked.elapsed() < REVALIDATE);
        if !fresh {
            if let Err(r) = self.load(path) {
                let status = match r {
                    Refusal::BadPath => 400,
                    Refusal::Forbidden => 403,
                    Refusal::NotFound => 404,
                    Refusal::Large => match self.stream_large(path, head, x, out) {
                        Some(o) => return o,
                        None => 404,
                    },
                };
                return Outcome::done(status, response::plain(out, x, status));
            }
        }
        let Some(e) = self.entries.get(path) else {
            return Outcome::done(404, response::plain(out, x, 404));
        };
        let mut extra = [0u8; 48];
        extra[..15].copy_from_slice(b"Last-Modified: ");
        extra[15..44].copy_from_slice(&e.last_modified);
        extra[44..46].copy_from_slice(b"\r\n");
        let extra = &extra[..46];
        if not_modified(head.if_modified_since, e.mtime) {
            response::head(out, x, 304, Some(e.ctype), Len::Known(0), extra);
            return Outcome::done(304, 0);
        }
        response::head(out, x, 200, Some(e.ctype), Len::Known(e.body.len()), extra);
        if x.head_only {
            return Outcome::done(200, 0);
        }
        out.extend_from_slice(&e.body);
        Outcome::done(200, e.body.len())
    }

    /// (Re)loads a small file into the cache; large files are left to `stream_large`.
    fn load(&mut self, path: &str) -> Result<(), Refusal> {
        let (file, meta) = resolve(&self.root, path)?;
        let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        if let Some(e) = self.entries.get_mut(path) {
            if e.mtime == mtime && e.body.len() as u64 == meta.len() {
                e.checked = Instant::now();
                return Ok(());
            }
        }
        if meta.len() > self.max_cached {
            self.entries.remove(path);
            return Err(Refusal::Large);
        }
        let body: Rc<[u8]> = std::fs::read(&file).map_err(|_| Refusal::NotFound)?.into();
        if self.bytes + body.len() > CACHE_BYTES {
            self.entries.clear();
            self.bytes = 0;
        }
        self.bytes += body.len();
        let mut last_modified = [b' '; crate::clock::HTTP_DATE_LEN];
        let lm = httpdate::fmt_http_date(mtime);
        let n = lm.len().min(last_modified.len());
        last_modified[..n].copy_from_slice(&lm.as_bytes()[..n]);
        let entry = Entry {
            body,
            ctype: content_type(&file),
            mtime,
            last_modified,
            checked: Instant::now(),
        };
        if let Some(old) = self.entries.insert(path.to_string(), entry) {
            self.bytes = self.bytes.saturating_sub(old.body.len());
        }
        Ok(())
    }

    /// Files over the cache limit are streamed from disk (after the same checks).
    fn stream_large(
        &mut self,
        path: &str,
        head: &Head,
        x: &Exchange,
        out: &mut Vec<u8>,
    ) -> Option<Outcome> {
        let (file, meta) = resolve(&self.root, path).ok()?;
        if meta.len() <= self.max_cached {
            return None;
        }
        let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let lm = format!("Last-Modified: {}\r\n", httpdate::fmt_http_date(mtime));
        let ctype = content_type(&file);
        if not_modified(head.if_modified_since, mtime) {
            response::head(out, x, 304, Some(ctype), Len::Known(0), lm.as_bytes());
            return Some(Outcome::done(304, 0));
        }
        let f = std::fs::File::open(&file).ok()?;
        response::head(
            out,
            x,
            200,
            Some(ctype),
            Len::Known(meta.len() as usize),
            lm.as_bytes(),
        );
        if x.head_only {
            return Some(Outcome::done(200, 0));
        }
        let mut o = Outcome::done(200, meta.len() as usize);
        o.reply = Reply::Stream(Tail::File {
            file: f,
            remaining: meta.len(),
        });
        Some(o)
    }
}

fn not_modified(ims: Option<&str>, mtime: SystemTime) -> bool {
    let Some(since) = ims.and_then(|s| httpdate::parse_http_date(s.trim()).ok()) else {
        return false;
    };
    // HTTP dates have whole seconds: compare at that resolution.
    let secs = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    };
    secs(mtime) <= secs(since)
}

/// Maps a request path to a regular file inside `root`, refusing every way out.
fn resolve(root: &Path, path: &str) -> Result<(PathBuf, std::fs::Metadata), Refusal> {
    let mut rel = PathBuf::new();
    for seg in path.split('/') {
        let seg = percent_decode(seg).ok_or(Refusal::BadPath)?;
        match seg.as_str() {
            "" | "." => continue,
            ".." => return Err(Refusal::Forbidden),
            s if s.contains(['/', '\\', '\0']) => return Err(Refusal::Forbidden),
            s => rel.push(s),
        }
    }
    let mut full = root.join(&rel);
    if path.ends_with('/') || rel.as_os_str().is_empty() {
        full.push("index.html");
    }
    // canonicalize follows every symlink: what is left must still be under root.
    let real = std::fs::canonicalize(&full).map_err(|_| Refusal::NotFound)?;
    if !real.starts_with(root) {
        return Err(Refusal::Forbidden);
    }
    let mut meta = std::fs::metadata(&real).map_err(|_| Refusal::NotFound)?;
    let mut real = real;
    if meta.is_dir() {
        real.push("index.html");
        let r = std::fs::canonicalize(&real).map_err(|_| Refusal::NotFound)?;
        if !r.starts_with(root) {
            return Err(Refusal::Forbidden);
        }
        meta = std::fs::metadata(&r).map_err(|_| Refusal::NotFound)?;
        real = r;
    }
    if !meta.is_file() {
        return Err(Refusal::NotFound);
    }
    Ok((real, meta))
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            let hi = hex(*b.get(i + 1)?)?;
            let lo = hex(*b.get(i + 2)?)?;
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn content_type(p: &Path) -> &'static str {
    let ext = p
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "wasm" => "application/wasm",
        "pdf" => "application/pdf",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "mp4" => "video/mp4",
        "gz" => "application/gzip",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_and_types() {
        assert_eq!(percent_decode("%2e%2E").as_deref(), Some(".."));
        assert_eq!(percent_decode("a%2"), None);
        assert_eq!(content_type(Path::new("a/b.HTML")), "text/html");
        assert_eq!(content_type(Path::new("a/b")), "application/octet-stream");
        let root = std::env::temp_dir();
        assert_eq!(
            resolve(&root, "/a/%2e%2e/b").err(),
            Some(Refusal::Forbidden)
        );
        assert_eq!(resolve(&root, "/a%2fb").err(), Some(Refusal::Forbidden));
    }
}
