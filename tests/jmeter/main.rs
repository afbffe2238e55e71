//! `stampede jmeter`: JMeter plans run as JMeter runs them, their JTL, reports and timers.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod jmeter_all_threads;
mod jmeter_conformance;
mod jmeter_csv_end_note;
mod jmeter_ctt_times;
mod jmeter_failure_messages;
mod jmeter_jtl_order;
mod jmeter_loop_count;
mod jmeter_plans;
mod jmeter_report_index;
mod jmeter_request_bodies;
mod jmeter_runs;
mod jmeter_throughput_cap;
mod jmeter_transactions;
