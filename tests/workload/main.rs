//! Real workloads end to end: templates, feeders, checks, extraction, scenarios and their limits,
//! on HTTP/1.1 and HTTP/2, proved by the servers' access logs.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod check_not_evaluated;
mod h2_decoded_body_checks;
mod replay;
mod workload_checks;
mod workload_compare;
mod workload_feed_eof;
mod workload_feeds;
mod workload_h2;
mod workload_h2_open;
mod workload_h2_open_nginx;
mod workload_html;
mod workload_interrupts;
mod workload_limits;
mod workload_limits_log;
mod workload_limits_steps;
mod workload_scenario_errors;
mod workload_scenarios;
mod workload_templates;
