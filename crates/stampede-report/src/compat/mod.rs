//! The compat front-ends' report layouts (`stampede ab|wrk|webbench|press`),
//! each filled from a stampede result in the foreign tool's own format.
//! Reading the tools' command lines and running them is the binary's
//! `compat/`; these only render.
//!
//! Modules: `ab_figures` (what ab derives, once for both layouts),
//! `ab_text`, `ab_html` (`-w`), `wrk` (with wrk's unit formatting),
//! `webbench`, `press`, and `openssl_names` (ab's cipher names).

mod ab_figures;
mod ab_html;
mod ab_text;
mod openssl_names;
mod press;
mod webbench;
mod wrk;

pub use ab_figures::AbView;
pub use ab_html::render_ab_html;
pub use ab_text::{render_ab_text, write_ab_preamble};
pub use openssl_names::{openssl_name, OPENSSL_CIPHERS};
pub use press::render_press;
pub use webbench::render_webbench;
pub use wrk::{format_units, render_wrk, RECORD_INTERVAL, TIME_S};
