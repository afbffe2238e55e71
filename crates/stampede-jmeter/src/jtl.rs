//! JMeter's JTL CSV results format (the default `jmeter.save.saveservice`
//! column set of JMeter 3.0 to 5.6, which JMeter's dashboard generator
//! `jmeter -g` and other JTL tools read), and the closing `summary =` line
//! JMeter's Summariser prints.
//!
//! Quoting follows JMeter's CSVSaveService: a field holding the delimiter,
//! a quote, CR or LF is quoted, its quotes doubled. Times are whole
//! milliseconds; `timeStamp` is the sample's start in epoch milliseconds.

use std::io::{self, Write};

/// The header line (without the newline).
pub const HEADER: &str = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,\
dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect";

/// One sample, one line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sample<'a> {
    /// The sample's start, milliseconds since the Unix epoch.
    pub timestamp_ms: u64,
    /// Start to the last byte (connecting included).
    pub elapsed_ms: u64,
    pub label: &'a str,
    /// The status code, or JMeter's `Non HTTP response code: ...`.
    pub response_code: &'a str,
    pub response_message: &'a str,
    /// `Group name 1-3`: group, then the thread's number (from 1).
    pub thread_name: &'a str,
    /// `text`, `bin`, or empty when nothing was received.
    pub data_type: &'a str,
    pub success: bool,
    pub failure_message: &'a str,
    /// Bytes received (head and body).
    pub bytes: u64,
    pub sent_bytes: u64,
    /// Active threads in the sample's group, and in all groups.
    pub grp_threads: u32,
    pub all_threads: u32,
    pub url: &'a str,
    /// Start to the first response byte.
    pub latency_ms: u64,
    pub idle_ms: u64,
    /// Time to connect; 0 on a reused connection.
    pub connect_ms: u64,
}

pub fn write_header(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(HEADER.as_bytes())?;
    out.write_all(b"\n")
}

/// Writes one line.
pub fn write_sample(sample: &Sample<'_>, out: &mut dyn Write) -> io::Result<()> {
    let s = sample;
    write!(out, "{},{},", s.timestamp_ms, s.elapsed_ms)?;
    for text in [
        s.label,
        s.response_code,
        s.response_message,
        s.thread_name,
        s.data_type,
    ] {
        field(text, out)?;
        out.write_all(b",")?;
    }
    out.write_all(if s.success { b"true," } else { b"false," })?;
    field(s.failure_message, out)?;
    write!(
        out,
        ",{},{},{},{},",
        s.bytes, s.sent_bytes, s.grp_threads, s.all_threads
    )?;
    field(s.url, out)?;
    writeln!(out, ",{},{},{}", s.latency_ms, s.idle_ms, s.connect_ms)
}

/// CSVSaveService.quoteDelimiters.
fn field(text: &str, out: &mut dyn Write) -> io::Result<()> {
    if !text.contains([',', '"', '\r', '\n']) {
        return out.write_all(text.as_bytes());
    }
    out.write_all(b"\"")?;
    out.write_all(text.replace('"', "\"\"").as_bytes())?;
    out.write_all(b"\"")
}

/// The responseMessage JMeter writes: the server's reason phrase. stampede
/// does not keep it, so the standard phrase for the code stands in.
pub fn reason_phrase(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

/// The responseCode and responseMessage of a sample with no HTTP response,
/// in JMeter's words (`Non HTTP response code: java.net.ConnectException`),
/// from stampede's error class (`connect_refused`, `timeout`, ...).
pub fn non_http(kind: &str) -> (String, String) {
    let (exception, message) = match kind {
        "connect_refused" => ("java.net.ConnectException", "Connection refused"),
        "connect_timeout" => (
            "org.apache.http.conn.ConnectTimeoutException",
            "Connect timed out",
        ),
        "timeout" => ("java.net.SocketTimeoutException", "Read timed out"),
        "reset" => ("java.net.SocketException", "Connection reset"),
        "closed_early" => (
            "org.apache.http.NoHttpResponseException",
            "The target server failed to respond",
        ),
        "tls" => (
            "javax.net.ssl.SSLHandshakeException",
            "TLS handshake failed",
        ),
        // HTTPSamplerBase.followRedirects: after MAX_REDIRECTS hops
        // (httpsampler.max_redirects, 20; a step follows 20 too) an
        // IOException with this message.
        "redirect_limit" => (
            "java.io.IOException",
            "Exceeded maximum number of redirects: 20",
        ),
        other => ("java.io.IOException", other),
    };
    (
        format!("Non HTTP response code: {exception}"),
        format!("Non HTTP response message: {message}"),
    )
}

/// The totals of a `summary =` line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Totals {
    pub samples: u64,
    pub elapsed_ms: u64,
    pub mean_ms: f64,
    pub min_ms: u64,
    pub max_ms: u64,
    pub errors: u64,
}

/// JMeter's Summariser line: `summary =   1000 in 00:00:05 =  200.0/s Avg: ...`.
pub fn summary_line(t: &Totals) -> String {
    let seconds = (t.elapsed_ms + 500) / 1000;
    let rate = if t.elapsed_ms == 0 {
        0.0
    } else {
        t.samples as f64 * 1000.0 / t.elapsed_ms as f64
    };
    let percent = if t.samples == 0 {
        0.0
    } else {
        t.errors as f64 * 100.0 / t.samples as f64
    };
    format!(
        "summary = {:>6} in {:02}:{:02}:{:02} = {:>6.1}/s Avg: {:>5} Min: {:>5} Max: {:>5} Err: {:>5} ({percent:.2}%)",
        t.samples,
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60,
        rate,
        t.mean_ms.round() as u64,
        t.min_ms,
        t.max_ms,
        t.errors
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(sample: &Sample) -> String {
        let mut out = Vec::new();
        write_sample(sample, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_sample_is_one_line_of_seventeen_columns() {
        let sample = Sample {
            timestamp_ms: 1764585600123,
            elapsed_ms: 12,
            label: "login",
            response_code: "200",
            response_message: "OK",
            thread_name: "Users 1-3",
            data_type: "text",
            success: true,
            bytes: 345,
            sent_bytes: 120,
            grp_threads: 5,
            all_threads: 7,
            url: "http://127.0.0.1:8000/login",
            latency_ms: 10,
            connect_ms: 2,
            ..Sample::default()
        };
        assert_eq!(
            line(&sample),
            "1764585600123,12,login,200,OK,Users 1-3,text,true,,345,120,5,7,\
             http://127.0.0.1:8000/login,10,0,2\n"
        );
        assert_eq!(HEADER.split(',').count(), 17);
        assert_eq!(line(&sample).trim_end().split(',').count(), 17);
    }

    #[test]
    fn fields_with_commas_quotes_or_newlines_are_quoted() {
        let sample = Sample {
            label: "a,b",
            failure_message: "Test failed: text expected to contain /\"ok\"/\nnext",
            url: "http://h/?q=1,2",
            ..Sample::default()
        };
        assert_eq!(
            line(&sample),
            "0,0,\"a,b\",,,,,false,\"Test failed: text expected to contain /\"\"ok\"\"/\nnext\",\
             0,0,0,0,\"http://h/?q=1,2\",0,0,0\n"
        );
    }

    #[test]
    fn errors_read_as_jmeter_writes_them() {
        let (code, message) = non_http("connect_refused");
        assert_eq!(code, "Non HTTP response code: java.net.ConnectException");
        assert_eq!(message, "Non HTTP response message: Connection refused");
        // HTTPSamplerBase.followRedirects, as TEST_HTTP.jmx's
        // HR-FollowRedirect assertion on the response message expects.
        let (code, message) = non_http("redirect_limit");
        assert_eq!(code, "Non HTTP response code: java.io.IOException");
        assert_eq!(
            message,
            "Non HTTP response message: Exceeded maximum number of redirects: 20"
        );
        assert_eq!(reason_phrase(404), "Not Found");
    }

    #[test]
    fn the_summary_line_has_jmeter_widths() {
        let totals = Totals {
            samples: 1000,
            elapsed_ms: 5004,
            mean_ms: 2.4,
            min_ms: 0,
            max_ms: 38,
            errors: 3,
        };
        assert_eq!(
            summary_line(&totals),
            "summary =   1000 in 00:00:05 =  199.8/s Avg:     2 Min:     0 Max:    38 Err:     3 (0.30%)"
        );
    }
}
