//! The HTML page around the charts: one self-contained document with uPlot
//! (vendored under crates/stampede-report/assets/uplot, MIT) and the
//! report's own chart script inlined, summary cards, tables, chart
//! containers and the charts' data as JSON. Owns markup and style only;
//! what goes on a page is decided by run.rs, sweep.rs and compare.rs.

use super::charts::Chart;
use serde::Serialize;
use std::io::{self, Write};

/// uPlot's minified browser build, inlined so the report needs no network.
const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
/// The hand-written script that turns the charts' JSON into uPlot charts.
const CHARTS_JS: &str = include_str!("charts.js");

/// Escapes text for HTML element content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// One summary card: a big figure with a label and a small line under it.
pub(crate) struct Card {
    pub label: &'static str,
    pub value: String,
    pub detail: String,
}

/// A page being assembled, section by section.
pub(crate) struct Page {
    title: String,
    body: String,
    charts: Vec<PlacedChart>,
}

/// A chart and the container (`data-chart` id) it is drawn in.
#[derive(Serialize)]
pub(crate) struct PlacedChart {
    pub id: String,
    pub chart: Chart,
}

/// The charts' data as JSON that is safe inside a `<script>` element: `<`
/// only occurs in JSON strings, where `\u003c` means the same, so no
/// `</script>` or `<!--` in a label can end the element early.
pub(crate) fn chart_data_json(charts: &[PlacedChart]) -> String {
    serde_json::to_string(charts)
        .expect("chart data is plain numbers and strings")
        .replace('<', "\\u003c")
}

const STYLE: &str = r#"
:root { --fg:#1d2330; --muted:#5d6678; --line:#e3e7ee; --bg:#f6f7fa; --accent:#2f6fde; --bad:#c0392b; --good:#1e8e3e; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", sans-serif; color:var(--fg); background:var(--bg); }
header { background:#1d2330; color:#fff; padding:18px 28px; }
header h1 { margin:0; font-size:20px; font-weight:600; word-break:break-all; }
header p { margin:4px 0 0; color:#c9d1e0; }
main { max-width:1240px; margin:0 auto; padding:18px 28px 40px; }
h2 { font-size:16px; margin:28px 0 10px; padding-bottom:4px; border-bottom:1px solid var(--line); }
.cards { display:grid; grid-template-columns:repeat(auto-fill, minmax(170px, 1fr)); gap:12px; }
.card { background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px 14px; }
.card .label { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.04em; }
.card .value { font-size:24px; font-weight:600; margin-top:2px; }
.card .detail { color:var(--muted); font-size:12px; }
.chart { position:relative; background:#fff; border:1px solid var(--line); border-radius:8px; min-height:380px; margin:12px 0; padding:8px 4px 4px; overflow:hidden; }
.chart .u-title { font-size:15px; font-weight:600; }
.chart .u-legend { font-size:12px; }
.chart-empty { position:absolute; left:0; right:0; top:40%; text-align:center; pointer-events:none; }
.chart-empty span { display:inline-block; background:rgba(255,255,255,.92); padding:6px 12px; border-radius:6px; font-size:16px; color:var(--muted); }
.grid2 > * { min-width:0; }
.grid2 { display:grid; grid-template-columns:1fr 1fr; gap:12px; }
@media (max-width: 900px) { .grid2 { grid-template-columns:1fr; } }
table { max-width:100%; border-collapse:collapse; background:#fff; border:1px solid var(--line); border-radius:8px; margin:8px 0; font-variant-numeric:tabular-nums; }
th, td { text-align:left; padding:5px 12px; border-bottom:1px solid var(--line); vertical-align:top; overflow-wrap:anywhere; }
th { background:#fafbfd; font-weight:600; color:var(--muted); }
td.num { text-align:right; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; background:#e8eefb; color:var(--accent); }
.badge.bad, .worse, .overloaded { color:var(--bad); }
.better, .healthy { color:var(--good); }
.saturated, .queueing { color:#b9770e; }
ul.notes { margin:6px 0; padding-left:20px; overflow-wrap:anywhere; }
footer { color:var(--muted); font-size:12px; margin-top:30px; }
"#;

impl Page {
    pub(crate) fn new(title: &str, subtitle: &str) -> Page {
        let mut page = Page {
            title: title.to_string(),
            body: String::new(),
            charts: Vec::new(),
        };
        page.body.push_str(&format!(
            "<header><h1>{}</h1><p>{}</p></header>\n<main>\n",
            escape(title),
            escape(subtitle)
        ));
        page
    }

    pub(crate) fn heading(&mut self, text: &str) {
        self.body.push_str(&format!("<h2>{}</h2>\n", escape(text)));
    }

    /// A paragraph of already-escaped HTML.
    pub(crate) fn raw(&mut self, html: &str) {
        self.body.push_str(html);
        self.body.push('\n');
    }

    pub(crate) fn notes(&mut self, class: &str, items: &[String]) {
        if items.is_empty() {
            return;
        }
        self.body
            .push_str(&format!("<ul class=\"notes {}\">", escape(class)));
        for item in items {
            self.body.push_str(&format!("<li>{}</li>", escape(item)));
        }
        self.body.push_str("</ul>\n");
    }

    pub(crate) fn cards(&mut self, cards: &[Card]) {
        self.body.push_str("<div class=\"cards\">");
        for card in cards {
            self.body.push_str(&format!(
                "<div class=\"card\"><div class=\"label\">{}</div><div class=\"value\">{}</div><div class=\"detail\">{}</div></div>",
                escape(card.label),
                escape(&card.value),
                escape(&card.detail)
            ));
        }
        self.body.push_str("</div>\n");
    }

    /// A table; cells that look numeric are right-aligned. A cell may carry
    /// a CSS class after a `\u{1}` separator (`"worse\u{1}+12.0%"`).
    pub(crate) fn table(&mut self, headers: &[&str], rows: &[Vec<String>]) {
        self.table_aligned(headers, rows, true);
    }

    /// A table of settings: text left-aligned whatever it starts with.
    pub(crate) fn settings(&mut self, rows: &[Vec<String>]) {
        self.table_aligned(&["setting", "value"], rows, false);
    }

    fn table_aligned(&mut self, headers: &[&str], rows: &[Vec<String>], numbers_right: bool) {
        self.body.push_str("<table><thead><tr>");
        for header in headers {
            self.body.push_str(&format!("<th>{}</th>", escape(header)));
        }
        self.body.push_str("</tr></thead><tbody>");
        for row in rows {
            self.body.push_str("<tr>");
            for cell in row {
                let (class, text) = match cell.split_once('\u{1}') {
                    Some((class, text)) => (class.to_string(), text),
                    None => (String::new(), cell.as_str()),
                };
                let numeric = numbers_right
                    && text
                        .trim_start_matches(['+', '-'])
                        .starts_with(|c: char| c.is_ascii_digit());
                let class = if numeric {
                    format!("{class} num")
                } else {
                    class
                };
                self.body.push_str(&format!(
                    "<td class=\"{}\">{}</td>",
                    escape(class.trim()),
                    escape(text)
                ));
            }
            self.body.push_str("</tr>");
        }
        self.body.push_str("</tbody></table>\n");
    }

    /// Opens (and [`Page::close_row`] closes) a two-column row of charts.
    pub(crate) fn open_row(&mut self) {
        self.body.push_str("<div class=\"grid2\">\n");
    }

    pub(crate) fn close_row(&mut self) {
        self.body.push_str("</div>\n");
    }

    /// A chart in its own container; `id` names it for tests and links.
    /// The container stays empty until the page's script draws into it.
    pub(crate) fn chart(&mut self, id: &str, chart: Chart) {
        self.body.push_str(&format!(
            "<div class=\"chart\" data-chart=\"{}\"></div>\n",
            escape(id)
        ));
        self.charts.push(PlacedChart {
            id: id.to_string(),
            chart,
        });
    }

    /// Writes the complete document: the scripts come last, after every
    /// container they draw into.
    pub(super) fn write(self, footer: &str, out: &mut dyn Write) -> io::Result<()> {
        self.write_with(footer, "", out)
    }

    /// The document with `tail` (markup and scripts of a live page: its
    /// controls and the script that replaces the content as the run goes
    /// on) after the report's own scripts. The report's content is the one
    /// `<div id="report">`, which [`Page::into_parts`] gives alone.
    pub(super) fn write_with(
        self,
        footer: &str,
        tail: &str,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        write!(
            out,
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"stampede\">\n<title>{}</title>\n\
             <style>{UPLOT_CSS}</style>\n<style>{STYLE}</style>\n</head>\n<body>\n",
            escape(&self.title),
        )?;
        let charts = chart_data_json(&self.charts);
        writeln!(out, "<div id=\"report\">{}</div>", self.content(footer))?;
        writeln!(
            out,
            "<script type=\"application/json\" id=\"chart-data\">{charts}</script>"
        )?;
        writeln!(
            out,
            "<script>{UPLOT_JS}</script>\n<script>{CHARTS_JS}</script>\n<script>{}</script>",
            super::heatmap::HEATMAP_JS
        )?;
        out.write_all(tail.as_bytes())?;
        writeln!(out, "</body>\n</html>")
    }

    /// The inside of `<div id="report">` and the charts' JSON, for a live
    /// page to put in place of the ones it shows.
    pub(super) fn into_parts(self, footer: &str) -> (String, String) {
        (self.content(footer), chart_data_json(&self.charts))
    }

    fn content(&self, footer: &str) -> String {
        format!("{}<footer>{}</footer>\n</main>", self.body, escape(footer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn the_vendored_uplot_is_the_recorded_version() {
        assert!(UPLOT_JS.starts_with("/*! https://github.com/leeoniya/uPlot (v1.6.32) */"));
        assert!(UPLOT_CSS.contains(".uplot"));
        for script in [UPLOT_JS, CHARTS_JS, super::super::heatmap::HEATMAP_JS] {
            assert!(!script.contains("</script"), "would end the element early");
        }
    }

    #[test]
    fn chart_data_cannot_end_its_script_element() {
        let chart = Chart::bars("</script><!--", "x", &[("<b>".into(), 1)], "none");
        let json = chart_data_json(&[PlacedChart {
            id: "c".into(),
            chart,
        }]);
        assert!(!json.contains('<'), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back[0]["chart"]["title"], "</script><!--");
        assert_eq!(back[0]["chart"]["categories"][0], "<b>");
    }

    #[test]
    fn the_page_reaches_no_network() {
        let mut page = Page::new("t", "s");
        page.chart("c", Chart::bars("b", "x", &[("200".into(), 1)], "none"));
        let mut out = Vec::new();
        page.write("f", &mut out).unwrap();
        let html = String::from_utf8(out).unwrap();
        // Nothing that loads a resource: no external scripts, styles,
        // images, fonts or requests from script.
        for needle in [
            "src=",
            "href=",
            "<link",
            "@import",
            "url(",
            "fetch(",
            "XMLHttpRequest",
            "WebSocket",
            "sendBeacon",
        ] {
            assert!(!html.contains(needle), "the page contains {needle}");
        }
        assert!(html.contains("data-chart=\"c\""));
    }
}
