//! What a run leaves behind: result files, exports, interval logs, the text summary and the HTML
//! report, checked against golden files and read back.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod exports;
mod float_roundtrip;
mod golden_reports;
mod html_report;
mod interval_log;
mod protocol_compare;
mod protocol_reports;
mod result_files;
mod result_schema_doc;
mod summary_report;
