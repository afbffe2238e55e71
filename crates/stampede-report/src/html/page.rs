//! The HTML page around the charts: one self-contained document with the
//! plotly.js library inlined (taken from the `plotly` crate, which ships it),
//! summary cards, tables and chart containers. Owns markup and style only;
//! what goes on a page is decided by run.rs, sweep.rs and compare.rs.

use plotly::{Configuration, Plot};
use std::io::{self, Write};

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
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
pub struct Card {
    pub label: &'static str,
    pub value: String,
    pub detail: String,
}

/// A page being assembled, section by section.
pub struct Page {
    title: String,
    body: String,
}

/// The plotly.js bundle as one `<script>` element. The crate's offline
/// sources also carry MathJax (2 MB), which the report never uses (no LaTeX
/// in titles), so only the first script element, plotly.js itself, is kept.
fn plotly_script() -> String {
    let sources = Plot::offline_js_sources();
    match sources.find("</script>") {
        Some(end) => sources[..end + "</script>".len()].to_string(),
        None => sources,
    }
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
.chart { background:#fff; border:1px solid var(--line); border-radius:8px; height:380px; margin:12px 0; padding:4px; }
.grid2 { display:grid; grid-template-columns:1fr 1fr; gap:12px; }
@media (max-width: 900px) { .grid2 { grid-template-columns:1fr; } }
table { border-collapse:collapse; background:#fff; border:1px solid var(--line); border-radius:8px; margin:8px 0; font-variant-numeric:tabular-nums; }
th, td { text-align:left; padding:5px 12px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#fafbfd; font-weight:600; color:var(--muted); }
td.num { text-align:right; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; background:#e8eefb; color:var(--accent); }
.badge.bad, .worse, .overloaded { color:var(--bad); }
.better, .healthy { color:var(--good); }
.saturated, .queueing { color:#b9770e; }
ul.notes { margin:6px 0; padding-left:20px; }
footer { color:var(--muted); font-size:12px; margin-top:30px; }
"#;

impl Page {
    pub fn new(title: &str, subtitle: &str) -> Page {
        let mut page = Page {
            title: title.to_string(),
            body: String::new(),
        };
        page.body.push_str(&format!(
            "<header><h1>{}</h1><p>{}</p></header>\n<main>\n",
            escape(title),
            escape(subtitle)
        ));
        page
    }

    pub fn heading(&mut self, text: &str) {
        self.body.push_str(&format!("<h2>{}</h2>\n", escape(text)));
    }

    /// A paragraph of already-escaped HTML.
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
        self.body.push('\n');
    }

    pub fn notes(&mut self, class: &str, items: &[String]) {
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

    pub fn cards(&mut self, cards: &[Card]) {
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
    pub fn table(&mut self, headers: &[&str], rows: &[Vec<String>]) {
        self.table_aligned(headers, rows, true);
    }

    /// A table of settings: text left-aligned whatever it starts with.
    pub fn settings(&mut self, rows: &[Vec<String>]) {
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
    pub fn open_row(&mut self) {
        self.body.push_str("<div class=\"grid2\">\n");
    }

    pub fn close_row(&mut self) {
        self.body.push_str("</div>\n");
    }

    /// A chart in its own container; `id` names it for tests and links.
    pub fn chart(&mut self, id: &str, mut plot: Plot) {
        plot.set_configuration(Configuration::new().responsive(true).display_logo(false));
        self.body.push_str(&format!(
            "<div class=\"chart\" data-chart=\"{}\">{}</div>\n",
            escape(id),
            plot.to_inline_html(Some(&format!("chart-{}", escape(id))))
        ));
    }

    /// Writes the complete document.
    pub fn write(self, footer: &str, out: &mut dyn Write) -> io::Result<()> {
        write!(
            out,
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"stampede\">\n<title>{}</title>\n<style>{STYLE}</style>\n{}\n</head>\n<body>\n",
            escape(&self.title),
            plotly_script()
        )?;
        out.write_all(self.body.as_bytes())?;
        writeln!(
            out,
            "<footer>{}</footer>\n</main>\n</body>\n</html>",
            escape(footer)
        )
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
    fn the_script_is_plotly_alone() {
        let script = plotly_script();
        assert!(script.starts_with("<script"));
        assert!(script.ends_with("</script>"));
        assert!(script.contains("plotly.js v"));
        assert_eq!(script.matches("<script").count(), 1, "MathJax left out");
    }
}
