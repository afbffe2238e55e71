//! ab's `-w` report: the figures of ab's text report as HTML table rows,
//! with the `-x`/`-y`/`-z` attributes on table, tr and th/td.

use super::ab_figures::{figures, ms, AbView};
use stampede_metrics::{RunResult, TimingSummary};
use stampede_plan::Target;
use std::io::{self, Write};

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// ab's `-w` report: the same figures as HTML table rows, with the
/// `-x`/`-y`/`-z` attributes on table, tr and th/td.
pub fn render_ab_html(
    result: &RunResult,
    target: &Target,
    view: &AbView,
    closing: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let f = figures(result, view);
    let (tr, td) = (&view.tr_attrs, &view.td_attrs);
    let row = |out: &mut dyn Write, label: &str, value: String| {
        writeln!(
            out,
            "<tr {tr}><th colspan=2 {td}>{label}</th><td colspan=2 {td}>{}</td></tr>",
            escape(&value)
        )
    };
    writeln!(out, "<p>")?;
    writeln!(
        out,
        " This is stampede {}, reading ApacheBench's command line<br>",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(out, "</p>")?;
    writeln!(out, "<table {}>", view.table_attrs)?;
    row(out, "Server Software:", "(not recorded by stampede)".into())?;
    row(out, "Server Hostname:", target.host.clone())?;
    row(out, "Server Port:", target.port.to_string())?;
    row(out, "Document Path:", target.path_and_query.clone())?;
    row(out, "Document Length:", f.document_length.clone())?;
    row(
        out,
        "Concurrency Level:",
        result.plan.connections.to_string(),
    )?;
    row(
        out,
        "Time taken for tests:",
        format!("{:.3} seconds", result.elapsed_s),
    )?;
    row(out, "Complete requests:", f.done.to_string())?;
    row(out, "Failed requests:", f.failed.to_string())?;
    if f.failed > 0 {
        let [c, r, l, e] = f.failed_by_class;
        writeln!(
            out,
            "<tr {tr}><td colspan=4 {td}>   (Connect: {c}, Receive: {r}, Length: {l}, Exceptions: {e})</td></tr>"
        )?;
    }
    if f.non_2xx > 0 {
        row(out, "Non-2xx responses:", f.non_2xx.to_string())?;
    }
    if view.keepalive {
        row(
            out,
            "Keep-Alive requests:",
            f.keepalive_requests.to_string(),
        )?;
    }
    row(
        out,
        "Total transferred:",
        format!("{} bytes", result.bytes.received),
    )?;
    if result.plan.body_bytes > 0 {
        row(out, "Total body sent:", f.body_sent.to_string())?;
    }
    row(
        out,
        "HTML transferred:",
        format!("{} bytes", result.bytes.body),
    )?;
    row(out, "Requests per second:", format!("{:.2}", f.rps))?;
    row(
        out,
        "Transfer rate:",
        format!("{:.2} kb/s received", f.kbytes_per_s),
    )?;
    let b = &result.breakdown;
    if b.total.count > 0 {
        writeln!(
            out,
            "<tr {tr}><th {td}>&nbsp;</th> <th {td}>min</th>   <th {td}>avg</th>   <th {td}>max</th></tr>"
        )?;
        let timing = |out: &mut dyn Write, label: &str, t: &TimingSummary| {
            writeln!(
                out,
                "<tr {tr}><th {td}>{label}</th><td {td}>{:>5}</td><td {td}>{:>5}</td><td {td}>{:>5}</td></tr>",
                ms(t.min),
                ms(t.mean.round() as u64),
                ms(t.max)
            )
        };
        timing(out, "Connect:", super::ab_figures::ab_connect(b))?;
        timing(out, "Processing:", &b.service)?;
        timing(out, "Total:", &b.total)?;
    }
    writeln!(out, "</table>")?;
    writeln!(out, "<p>{}</p>", escape(closing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_html() {
        assert_eq!(
            escape("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }
}
