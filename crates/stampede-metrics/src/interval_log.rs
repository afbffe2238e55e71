//! The HdrHistogram interval log (`.hlog`, format version 1.3), written
//! and read through the `hdrhistogram` crate's `serialization::interval_log`:
//! the headers, one line per interval per tag (`Tag=T,start,length,max,`
//! and the compressed base64 histogram), values in microseconds and the
//! max column in seconds. Reading names the line of any fault.

use crate::histogram_encoder::HistogramEncoder;
use crate::LatencyHistogram;
use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The format's legend line (HdrHistogram's `HistogramLogWriter.outputLegend`).
pub const HLOG_LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"";

/// Values are microseconds; the max column is in seconds.
const MAX_VALUE_DIVISOR: f64 = 1_000_000.0;

/// A tag as the format allows it: `,`, space, `%`, CR and LF (and other
/// control characters) percent-encoded.
pub fn encode_tag(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c == ',' || c == ' ' || c == '%' || c.is_control() {
            let mut bytes = [0u8; 4];
            for b in c.encode_utf8(&mut bytes).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes an interval log: the headers at once, then intervals as they come.
pub struct HlogWriter<W: Write> {
    out: W,
    encoder: HistogramEncoder,
    line: String,
}

impl<W: Write> HlogWriter<W> {
    /// Writes the headers: the format version, `StartTime` and `BaseTime`
    /// (both `started_at`: interval start times are offsets from it), the
    /// max divisor and the legend.
    pub fn begin(mut out: W, started_at: SystemTime, by: &str) -> io::Result<HlogWriter<W>> {
        let mut serializer = V2DeflateSerializer::new();
        IntervalLogWriterBuilder::new()
            .add_comment(&format!("[Logged with {by}; values in microseconds]"))
            .add_comment("[Histogram log format version 1.3]")
            .with_start_time(started_at)
            .with_base_time(started_at)
            .with_max_value_divisor(MAX_VALUE_DIVISOR)
            .begin_log_with(&mut out, &mut serializer)?;
        writeln!(out, "{HLOG_LEGEND}")?;
        Ok(HlogWriter {
            out,
            encoder: HistogramEncoder::stored(),
            line: String::new(),
        })
    }

    /// Writes one interval line of `tag` (already encoded, see
    /// [`encode_tag`]): `Tag=T,start,length,max,` as the crate's
    /// `IntervalLogWriter` writes it, and the histogram in its canonical
    /// form (1 µs to an hour, its own digits) so that equal contents encode
    /// to equal text, in zlib's stored blocks: cheap enough for every
    /// interval (see `histogram_encoder`).
    pub fn write(
        &mut self,
        tag: &str,
        start: Duration,
        length: Duration,
        histogram: &LatencyHistogram,
    ) -> io::Result<()> {
        if Tag::new(tag).is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad tag {tag:?}"),
            ));
        }
        self.line.clear();
        let max = histogram.max() as f64 / MAX_VALUE_DIVISOR;
        // `{:.3}` of seconds as f64, as the crate and HdrHistogram print them.
        let _ = write!(
            self.line,
            "Tag={tag},{:.3},{:.3},{max:.3},",
            start.as_secs_f64(),
            length.as_secs_f64()
        );
        self.encoder
            .encode_into(histogram, histogram.sigfig(), &mut self.line);
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    /// The output, to flush after a whole interval.
    pub fn out_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Flushes and hands back the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// One interval of one tag, read back.
#[derive(Debug, Clone)]
pub struct HlogInterval {
    /// The tag as written (percent-encoded); `latency` when the line had none.
    pub tag: String,
    /// Since the log's start time.
    pub start: Duration,
    /// How long the interval lasted.
    pub length: Duration,
    /// The interval's latencies, µs.
    pub histogram: LatencyHistogram,
    /// Its line in the file, from 1.
    pub line: usize,
}

/// An interval log read back.
#[derive(Debug, Clone, Default)]
pub struct HlogFile {
    /// `StartTime` (else `BaseTime`, else the first interval's time).
    pub start_time: Option<SystemTime>,
    /// Every interval, in file order.
    pub intervals: Vec<HlogInterval>,
    /// The file ended inside a line: what was read stops at the last
    /// complete one (a run cut short while writing).
    pub cut_at_line: Option<usize>,
}

impl HlogFile {
    /// The tags in order of first appearance.
    pub fn tags(&self) -> Vec<String> {
        let mut tags: Vec<String> = Vec::new();
        for interval in &self.intervals {
            if !tags.contains(&interval.tag) {
                tags.push(interval.tag.clone());
            }
        }
        tags
    }
}

/// What is wrong with an interval log, and on which line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {fault}")]
pub struct HlogError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub fault: String,
}

fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Reads an interval log. Comments and the legend are skipped; a line
/// that is not an interval, bad base64, a histogram that does not
/// decompress, or an interval of a tag that starts before the tag's
/// previous one or inside it is an error naming its line.
pub fn read_hlog(text: &[u8]) -> Result<HlogFile, HlogError> {
    let mut file = HlogFile::default();
    let mut base_time: Option<Duration> = None;
    let mut start_time: Option<Duration> = None;
    let mut raw: Vec<(Duration, HlogInterval)> = Vec::new();
    let mut last_start: Vec<(String, (Duration, Duration))> = Vec::new();
    let mut rest = text;
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        let (line, after) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..=i], &rest[i + 1..]),
            None => {
                file.cut_at_line = Some(number);
                break;
            }
        };
        rest = after;
        let fault = |fault: String| HlogError {
            line: number,
            fault,
        };
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        match IntervalLogIterator::new(line).next() {
            None => continue,
            Some(Ok(LogEntry::StartTime(t))) => start_time = Some(t),
            Some(Ok(LogEntry::BaseTime(t))) => base_time = Some(t),
            Some(Ok(LogEntry::Interval(entry))) => {
                let tag = entry.tag().map_or("latency", |t| t.as_str()).to_string();
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(entry.encoded_histogram().trim())
                    .map_err(|e| fault(format!("bad base64 in the histogram ({e})")))?;
                let histogram: LatencyHistogram = Deserializer::new()
                    .deserialize(&mut bytes.as_slice())
                    .map_err(|e| fault(format!("the histogram does not decode: {e}")))?;
                let stamp = entry.start_timestamp();
                let span = (stamp, stamp + entry.duration());
                match last_start.iter_mut().find(|(t, _)| *t == tag) {
                    Some((_, (start, _))) if stamp < *start => {
                        return Err(fault(format!(
                            "interval of tag {tag} starts at {:.3} s, before the one before it ({:.3} s)",
                            seconds(stamp),
                            seconds(*start)
                        )));
                    }
                    // The format keeps milliseconds: a start 1 ms before the
                    // last one's end is rounding, not an overlap.
                    Some((_, (start, end))) if stamp + Duration::from_millis(1) < *end => {
                        return Err(fault(format!(
                            "interval of tag {tag} starts at {:.3} s, inside the one before it \
                             ({:.3} s to {:.3} s): an interval is counted once",
                            seconds(stamp),
                            seconds(*start),
                            seconds(*end)
                        )));
                    }
                    Some((_, previous)) => *previous = span,
                    None => last_start.push((tag.clone(), span)),
                }
                raw.push((
                    stamp,
                    HlogInterval {
                        tag,
                        start: Duration::ZERO,
                        length: entry.duration(),
                        histogram,
                        line: number,
                    },
                ));
            }
            Some(Err(_)) => {
                return Err(fault(
                    "not an interval line (expected [Tag=T,]start,length,max,histogram)".into(),
                ))
            }
        }
    }
    // Interval times are offsets from BaseTime when there is one; without,
    // HdrHistogram takes them as offsets from StartTime when they are more
    // than a year smaller than it, as Unix times otherwise.
    const YEAR: Duration = Duration::from_secs(365 * 86_400);
    let zero = start_time.or(base_time);
    let first = raw.iter().map(|(s, _)| *s).min();
    let offset = |stamp: Duration| -> Duration {
        match (base_time, start_time) {
            (Some(base), Some(start)) => (base + stamp).saturating_sub(start),
            (Some(_), None) => stamp,
            (None, Some(start)) if stamp + YEAR < start => stamp,
            (None, Some(start)) => stamp.saturating_sub(start),
            (None, None) => stamp.saturating_sub(first.unwrap_or_default()),
        }
    };
    file.start_time = zero
        .or(first.filter(|_| base_time.is_none()))
        .map(|t| UNIX_EPOCH + t);
    file.intervals = raw
        .into_iter()
        .map(|(stamp, mut interval)| {
            interval.start = offset(stamp);
            interval
        })
        .collect();
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;

    fn histogram(values: &[u64]) -> LatencyHistogram {
        let mut h = crate::new_latency_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    fn log() -> Vec<u8> {
        let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let mut writer = HlogWriter::begin(Vec::new(), start, "test").unwrap();
        let s = Duration::from_secs(1);
        writer
            .write("latency", Duration::ZERO, s, &histogram(&[100, 200]))
            .unwrap();
        writer
            .write(
                &encode_tag("latency:GET /a,b"),
                Duration::ZERO,
                s,
                &histogram(&[5]),
            )
            .unwrap();
        writer
            .write("latency", s, s / 2, &histogram(&[1_500_000]))
            .unwrap();
        writer.finish().unwrap()
    }

    #[test]
    fn writes_the_headers_and_reads_back_what_it_wrote() {
        let bytes = log();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "#[Histogram log format version 1.3]");
        assert!(lines[2].starts_with("#[StartTime: 1800000000.000 "));
        assert!(lines[3].starts_with("#[BaseTime: 1800000000.000 "));
        assert_eq!(lines[5], HLOG_LEGEND);
        assert!(lines[6].starts_with("Tag=latency,0.000,1.000,0.000,"));
        assert!(lines[7].starts_with("Tag=latency:GET%20/a%2Cb,0.000,1.000,"));
        assert!(
            lines[8].starts_with("Tag=latency,1.000,0.500,1.50"),
            "{}",
            lines[8]
        );
        let file = read_hlog(&bytes).unwrap();
        assert_eq!(file.cut_at_line, None);
        assert_eq!(file.tags(), ["latency", "latency:GET%20/a%2Cb"]);
        assert_eq!(file.intervals[2].start, Duration::from_secs(1));
        assert_eq!(file.intervals[2].length, Duration::from_millis(500));
        assert_eq!(file.intervals[0].histogram.len(), 2);
        assert_eq!(file.intervals[2].line, 9);
    }

    #[test]
    fn lines_are_those_the_crates_writer_writes_of_the_full_range() {
        let wide = histogram(&[1, 70, 900, 12_345, 2_000_000, 3_600_000_000]);
        for (h, start, length) in [
            (histogram(&[]), Duration::ZERO, Duration::from_millis(100)),
            (wide, Duration::from_millis(123_456), Duration::from_secs(1)),
        ] {
            let mut mine = HlogWriter::begin(Vec::new(), UNIX_EPOCH, "test").unwrap();
            let headers = mine.out_mut().len();
            mine.write("latency:a", start, length, &h).unwrap();
            let mine = String::from_utf8(mine.finish().unwrap()[headers..].to_vec()).unwrap();
            let mut full =
                Histogram::<u64>::new_with_bounds(1, crate::histogram::MAX_TRACKED_US, 3).unwrap();
            full.add(&h).unwrap();
            let mut theirs = Vec::new();
            let mut serializer = V2DeflateSerializer::new();
            let mut writer = IntervalLogWriterBuilder::new()
                .with_max_value_divisor(MAX_VALUE_DIVISOR)
                .begin_log_with(&mut theirs, &mut serializer)
                .unwrap();
            writer
                .write_histogram(&full, start, length, Tag::new("latency:a"))
                .unwrap();
            let theirs = String::from_utf8(theirs).unwrap();
            let theirs = theirs.lines().last().unwrap();
            // The same columns; the histogram stored rather than deflated,
            // the same once decoded, the header saying the full range.
            let split = |line: &str| {
                line.rsplit_once(',')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
            };
            let (my_columns, my_histogram) = split(mine.trim_end()).unwrap();
            let (their_columns, their_histogram) = split(theirs).unwrap();
            assert_eq!(my_columns, their_columns);
            assert!(mine.ends_with('\n'));
            let decode = |text: &str| crate::decode_histogram(text).unwrap();
            assert_eq!(decode(&my_histogram), decode(&their_histogram));
            assert_eq!(
                decode(&my_histogram).high(),
                crate::histogram::MAX_TRACKED_US
            );
        }
    }

    #[test]
    fn a_file_cut_mid_line_reads_to_its_last_complete_line() {
        let mut bytes = log();
        bytes.truncate(bytes.len() - 10);
        let file = read_hlog(&bytes).unwrap();
        assert_eq!(file.cut_at_line, Some(9));
        assert_eq!(file.intervals.len(), 2);
    }

    #[test]
    fn faults_name_their_line() {
        let text = String::from_utf8(log()).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let good = lines[6].clone();
        let with = |i: usize, line: &str| {
            let mut copy = lines.clone();
            copy[i] = line.to_string();
            read_hlog((copy.join("\n") + "\n").as_bytes()).unwrap_err()
        };
        let bad64 = good.replace(
            "Tag=latency,0.000,1.000,0.000,",
            "Tag=latency,0.000,1.000,0.000,!!",
        );
        assert_eq!(with(6, &bad64).line, 7);
        assert!(with(6, &bad64).fault.contains("base64"));
        let undecodable = "Tag=latency,0.000,1.000,0.000,aGVsbG8gd29ybGQ=";
        assert!(with(6, undecodable).fault.contains("does not decode"));
        assert!(with(6, "Tag=latency,0.000")
            .fault
            .contains("not an interval"));
        // The same interval twice: it would be counted twice.
        let mut twice = lines.clone();
        twice.insert(7, good.clone());
        let err = read_hlog((twice.join("\n") + "\n").as_bytes()).unwrap_err();
        assert_eq!(err.line, 8);
        assert!(err.fault.contains("inside the one before it"), "{err}");
        lines.swap(6, 8);
        let err = read_hlog((lines.join("\n") + "\n").as_bytes()).unwrap_err();
        assert_eq!(err.line, 9);
        assert!(err.fault.contains("before"), "{err}");
    }
}
