//! A loop count of 0 (JMeter 2.13 starts the threads and runs no sampler)
//! is refused before any request, naming the property and the thread
//! group, not a line of the scenario the plan maps to.

use stampede_testkit::jmeter as support;

use support::{refused, testdata};

#[test]
fn a_loop_count_of_zero_names_the_property_and_the_thread_group() {
    let plan = testdata("shop.jmx");
    let line = refused(&["-n", "-t", &plan, "-Jloops=0", "--dry-run"]);
    assert!(
        line.ends_with(
            "shop.jmx: 'Browsers' (ThreadGroup): LoopController.loops is 0 (from ${__P(loops,3)}): the group would send nothing; give -1 (forever) or at least 1"
        ),
        "{line}"
    );
    assert!(!line.contains("(mapped)"), "{line}");
}
