//! An access log's line format: nginx's `log_format` string (or the named
//! `combined` and `common`) compiled into literals and the variables the
//! replay reads, and one line matched against it.

use super::ReplayError;

/// nginx's predefined format (ngx_http_log_module.c, `ngx_http_combined_fmt`),
/// which is also Apache's `combined` (`%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i"`).
pub const COMBINED: &str = "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\"";

/// Apache's `common` (`%h %l %u %t "%r" %>s %b`): combined without the
/// referer and the user agent.
pub const COMMON: &str =
    "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent";

/// A variable of a format: the ones the replay reads, and any other
/// (matched and ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// `$request`: `METHOD TARGET PROTOCOL`.
    Request,
    /// `$request_method`, `$request_uri` (nginx's custom formats may log
    /// the request in parts).
    Method,
    /// See `Method`.
    Uri,
    /// `$time_local`: `10/Oct/2000:13:55:36 -0700`.
    TimeLocal,
    /// `$time_iso8601`: `2000-10-10T13:55:36-07:00`.
    TimeIso8601,
    /// `$msec`: seconds since the epoch with milliseconds, `1700000000.123`.
    Msec,
    /// `$status`.
    Status,
    /// `$host` or `$http_host`.
    Host,
    /// `$http_referer`.
    Referer,
    /// `$http_user_agent`.
    UserAgent,
    /// `$request_time`: seconds with milliseconds.
    RequestTime,
    /// `$upstream_response_time`: seconds, `-`, or a list (`0.010, 0.020`).
    UpstreamResponseTime,
    /// Any other variable: matched, not kept.
    Other(String),
}

impl Field {
    fn of(name: &str) -> Field {
        match name {
            "request" => Field::Request,
            "request_method" => Field::Method,
            "request_uri" => Field::Uri,
            "time_local" => Field::TimeLocal,
            "time_iso8601" => Field::TimeIso8601,
            "msec" => Field::Msec,
            "status" => Field::Status,
            "host" | "http_host" => Field::Host,
            "http_referer" => Field::Referer,
            "http_user_agent" => Field::UserAgent,
            "request_time" => Field::RequestTime,
            "upstream_response_time" => Field::UpstreamResponseTime,
            other => Field::Other(other.to_string()),
        }
    }
}

impl Field {
    /// True for values nginx writes without spaces.
    fn is_word(&self) -> bool {
        !matches!(
            self,
            Field::Request | Field::Uri | Field::UserAgent | Field::Referer | Field::TimeLocal
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Field(Field),
}

/// A compiled format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFormat {
    pieces: Vec<Piece>,
}

impl LogFormat {
    /// `combined`, `common`, or an nginx `log_format` string (`$name` or
    /// `${name}` variables; everything else is literal).
    pub fn parse(text: &str) -> Result<LogFormat, ReplayError> {
        let text = match text {
            "combined" => COMBINED,
            "common" => COMMON,
            other => other,
        };
        let bad = |why: &str| ReplayError::Format {
            format: text.to_string(),
            why: why.to_string(),
        };
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            literal.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let (name, next) = if let Some(braced) = after.strip_prefix('{') {
                let end = braced.find('}').ok_or_else(|| bad("a ${ without its }"))?;
                (&braced[..end], &braced[end + 1..])
            } else {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], &after[end..])
            };
            if name.is_empty() {
                return Err(bad("a $ without a variable name"));
            }
            if !literal.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(&mut literal)));
            }
            if matches!(pieces.last(), Some(Piece::Field(_))) {
                return Err(bad(
                    "two variables with nothing between them cannot be told apart",
                ));
            }
            pieces.push(Piece::Field(Field::of(name)));
            rest = next;
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        let has = |f: &Field| pieces.iter().any(|p| p == &Piece::Field(f.clone()));
        if !has(&Field::Request) && !has(&Field::Uri) {
            return Err(bad(
                "it logs no $request (nor $request_uri): nothing to replay",
            ));
        }
        if !has(&Field::TimeLocal) && !has(&Field::TimeIso8601) && !has(&Field::Msec) {
            return Err(bad("it logs no time ($time_local, $time_iso8601 or $msec)"));
        }
        Ok(LogFormat { pieces })
    }

    /// True when the format logs `field`.
    pub fn logs(&self, field: &Field) -> bool {
        self.pieces
            .iter()
            .any(|p| p == &Piece::Field(field.clone()))
    }

    /// The fields of `line`, in the format's order; `Err` says where the
    /// line stopped matching.
    pub fn split<'a>(&self, line: &'a str) -> Result<Vec<(&Field, &'a str)>, String> {
        let mut fields = Vec::new();
        let mut rest = line;
        let mut pieces = self.pieces.iter().peekable();
        while let Some(piece) = pieces.next() {
            match piece {
                Piece::Literal(text) => {
                    rest = rest
                        .strip_prefix(text.as_str())
                        .ok_or_else(|| format!("expected {text:?} at {:?}", clip(rest)))?;
                }
                Piece::Field(field) => {
                    let end = match pieces.peek() {
                        Some(Piece::Literal(next)) => find_unescaped(rest, next)
                            .ok_or_else(|| format!("no {next:?} after {:?}", clip(rest)))?,
                        // A word's value (a status, a size, a time) holds no
                        // space: what follows it is not part of the format.
                        _ if field.is_word() => rest.find(' ').unwrap_or(rest.len()),
                        _ => rest.len(),
                    };
                    fields.push((field, &rest[..end]));
                    rest = &rest[end..];
                }
            }
        }
        if !rest.is_empty() {
            return Err(format!("text left at the end: {:?}", clip(rest)));
        }
        Ok(fields)
    }
}

/// The first `needle` in `text` not preceded by an escaping backslash
/// (Apache writes `"` inside a field as `\"`; nginx as `\x22`).
fn find_unescaped(text: &str, needle: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        let at = from + found;
        let backslashes = text[..at].bytes().rev().take_while(|b| *b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(at);
        }
        from = at + needle.len().max(1);
    }
    None
}

/// A field's value with the log's escapes undone: nginx's `\xHH` (every
/// byte below 0x20, `"`, `\`, 0x7f and above; ngx_http_log_escape) and
/// Apache's `\"` and `\\`.
pub fn unescape(text: &str) -> String {
    if !text.contains('\\') {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(b'x')) => {
                let hex = text
                    .get(i + 2..i + 4)
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 4;
                    }
                    None => {
                        out.push(b'\\');
                        i += 1;
                    }
                }
            }
            (b'\\', Some(&c @ (b'"' | b'\\'))) => {
                out.push(c);
                i += 2;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The start of `text`, enough to show where a line went wrong.
fn clip(text: &str) -> String {
    text.chars().take(24).collect()
}
