//! The latency heatmap of a run's HTML report, built from its interval log
//! (`--hlog`): time on x (one column per interval), latency on a log y axis
//! (8 rows per decade), each cell's count as colour; hovering a column shows
//! that interval's count and percentiles. A canvas drawn by a few lines of
//! inline script from the cells' counts as JSON: a 10-minute run at 1 s is
//! 600 columns of a few dozen numbers.

use stampede_metrics::{HlogFile, LatencyHistogram};
use std::fmt::Write as _;

/// Rows per decade of latency.
const ROWS_PER_DECADE: f64 = 8.0;

/// The row of `us` (row 0 starts at 1 µs).
fn row_of(us: u64) -> usize {
    ((us.max(1) as f64).log10() * ROWS_PER_DECADE).floor() as usize
}

fn column_json(h: &LatencyHistogram, first_row: usize, rows: usize) -> String {
    let mut counts = vec![0u64; rows];
    for v in h.iter_recorded() {
        let row = row_of(v.value_iterated_to()).saturating_sub(first_row);
        if let Some(cell) = counts.get_mut(row) {
            *cell += v.count_at_value();
        }
    }
    let q = |quantile: f64| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(quantile)
        }
    };
    let max = if h.is_empty() { 0 } else { h.max() };
    let counts: Vec<String> = counts.iter().map(u64::to_string).collect();
    format!(
        "{},{},{},{},{},[{}]",
        h.len(),
        q(0.5),
        q(0.9),
        q(0.99),
        max,
        counts.join(",")
    )
}

/// The heatmap's HTML (a heading, the canvas, its data and script) from
/// the log's `latency` intervals; empty when there are none.
pub fn heatmap_section(log: &HlogFile) -> String {
    let columns: Vec<_> = log
        .intervals
        .iter()
        .filter(|i| i.tag == "latency")
        .collect();
    let recorded = columns.iter().filter(|c| !c.histogram.is_empty());
    let (low, high) = recorded.fold((u64::MAX, 0), |(lo, hi), c| {
        (lo.min(c.histogram.min()), hi.max(c.histogram.max()))
    });
    if columns.is_empty() || high == 0 {
        return String::new();
    }
    let first_row = row_of(low);
    let rows = row_of(high) - first_row + 1;
    let mut data = String::from("{\"first_row\":");
    let _ = write!(
        data,
        "{first_row},\"per_decade\":{ROWS_PER_DECADE},\"rows\":{rows},\"columns\":["
    );
    for (n, column) in columns.iter().enumerate() {
        if n > 0 {
            data.push(',');
        }
        let _ = write!(
            data,
            "[{:.3},{:.3},{}]",
            column.start.as_secs_f64(),
            column.length.as_secs_f64(),
            column_json(&column.histogram, first_row, rows)
        );
    }
    data.push_str("]}");
    format!(
        r##"<h2>Latency heatmap</h2>
<p class="note">Each column is one interval of the run's interval log (--hlog), each row a band of latency (log scale); darker cells hold more responses. Hover a column for its percentiles.</p>
<div style="position:relative"><canvas id="latency-heatmap" width="960" height="320" style="width:100%;max-width:960px;border:1px solid #ddd"></canvas>
<div id="latency-heatmap-tip" style="font:12px monospace;min-height:1.4em"></div></div>
<script>
(function () {{
  var d = {data};
  var c = document.getElementById("latency-heatmap"), g = c.getContext("2d");
  var n = d.columns.length, w = c.width / n, h = c.height / d.rows, top = 0;
  d.columns.forEach(function (col) {{ col[7].forEach(function (v) {{ if (v > top) top = v; }}); }});
  var ms = function (us) {{ return (us / 1000).toFixed(3) + " ms"; }};
  d.columns.forEach(function (col, x) {{
    col[7].forEach(function (v, y) {{
      if (!v) return;
      var t = Math.log(1 + v) / Math.log(1 + top);
      g.fillStyle = "rgba(200,30,30," + (0.08 + 0.92 * t).toFixed(3) + ")";
      g.fillRect(x * w, c.height - (y + 1) * h, Math.max(w, 1), Math.max(h, 1));
    }});
  }});
  g.fillStyle = "#555"; g.font = "11px sans-serif";
  for (var r = 0; r < d.rows; r += d.per_decade / 2) {{
    g.fillText(ms(Math.pow(10, (d.first_row + r) / d.per_decade)), 2, c.height - r * h - 2);
  }}
  var tip = document.getElementById("latency-heatmap-tip");
  c.addEventListener("mousemove", function (e) {{
    var b = c.getBoundingClientRect(), x = Math.floor((e.clientX - b.left) / b.width * n);
    var col = d.columns[Math.min(Math.max(x, 0), n - 1)];
    tip.textContent = col[0].toFixed(3) + " s +" + col[1].toFixed(3) + " s: " + col[2] + " responses, p50 " +
      ms(col[3]) + ", p90 " + ms(col[4]) + ", p99 " + ms(col[5]) + ", max " + ms(col[6]);
  }});
}})();
</script>
"##
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_metrics::HlogInterval;
    use std::time::Duration;

    #[test]
    fn a_stall_is_a_band_of_its_own() {
        let interval = |start: u64, values: &[u64]| {
            let mut h = stampede_metrics::new_latency_histogram();
            for &v in values {
                h.record(v).unwrap();
            }
            HlogInterval {
                tag: "latency".into(),
                start: Duration::from_secs(start),
                length: Duration::from_secs(1),
                histogram: h,
                line: 1,
            }
        };
        let log = HlogFile {
            start_time: None,
            cut_at_line: None,
            intervals: vec![interval(0, &[100, 110]), interval(1, &[1_000_000])],
        };
        let html = heatmap_section(&log);
        assert!(html.contains("id=\"latency-heatmap\""));
        // 100 µs is row 16, 1 s row 48: 33 rows from the first.
        assert!(html.contains("\"first_row\":16,"), "{html}");
        assert!(html.contains("\"rows\":33,"));
        let second = html.split("[1.000,1.000,").nth(1).unwrap();
        assert!(
            second.starts_with("1,"),
            "one response in the second column"
        );
        assert!(second.contains(",1]]"), "in the top row: {second}");
        assert!(heatmap_section(&HlogFile::default()).is_empty());
    }
}
