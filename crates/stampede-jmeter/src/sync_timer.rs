//! The Synchronizing Timer (`SyncTimer`, 集合点): a step's rendezvous. As
//! JMeter's (src/components/src/main/java/org/apache/jmeter/timers/
//! SyncTimer.java): `groupSize` threads are gathered and released together
//! (0: every thread of the group), then the barrier is reset for the next
//! batch; `timeoutInMs` releases whoever waits that long after the first
//! arrival (0: no timeout); a negative `groupSize` gathers nobody.

use crate::functions::{constant, Names};
use crate::model::Rendezvous;
use crate::tree::Element;
use crate::MapError;

/// The rendezvous a SyncTimer asks for; `None` when it gathers nobody
/// (a negative `groupSize`, which JMeter's `delay()` skips).
pub(crate) fn rendezvous(e: &Element, names: &Names) -> Result<Option<Rendezvous>, MapError> {
    let whole = |prop: &str| -> Result<i64, MapError> {
        let Some(raw) = e.text(prop) else {
            return Ok(0);
        };
        let value = constant(raw, names, prop)?;
        match value.trim() {
            "" => Ok(0),
            text => text.parse::<i64>().map_err(|_| {
                MapError::Bad(format!(
                    "{}: {prop} is '{value}', not a whole number",
                    e.describe()
                ))
            }),
        }
    };
    let (size, timeout) = (whole("groupSize")?, whole("timeoutInMs")?);
    // groupSize is a Java int (an intProp): JMeter does not load a plan
    // with a larger one.
    if i32::try_from(size).is_err() {
        return Err(MapError::Bad(format!(
            "{}: groupSize is {size}, beyond a Java int (at most {})",
            e.describe(),
            i32::MAX
        )));
    }
    if timeout < 0 {
        // SyncTimer.delay(): "Negative value for timeout".
        return Err(MapError::Bad(format!(
            "{}: timeoutInMs is {timeout}: a timeout is 0 (none) or more",
            e.describe()
        )));
    }
    if size < 0 {
        return Ok(None);
    }
    Ok(Some(Rendezvous {
        users: u32::try_from(size).unwrap_or(u32::MAX),
        timeout_ms: (timeout > 0).then_some(timeout as u64),
    }))
}

/// A step's rendezvous against its group: a batch larger than the threads
/// would hold them for good in JMeter (without a timeout). (A timer beside
/// a throughput timer is listed as unsupported where the step is built.)
pub(crate) fn check_in_group(
    rendezvous: &Rendezvous,
    threads: u32,
    step: &str,
) -> Result<(), MapError> {
    if rendezvous.users > threads && rendezvous.timeout_ms.is_none() {
        return Err(MapError::Bad(format!(
            "sampler '{step}': Synchronizing Timer groupSize {} is more than the group's {threads} threads and has no timeoutInMs: JMeter's threads would wait at it for good; give at most {threads}, 0 (every thread) or a timeout",
            rendezvous.users
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::model::Rendezvous;
    use crate::tests::{plan_with, props, testdata, GET};
    use crate::{parse, scenario_text, JmxError, Plan};

    /// A Synchronizing Timer as JMeter 5.6 writes it.
    fn sync_timer(size: i64, timeout: i64) -> String {
        format!(
            r#"<SyncTimer guiclass="TestBeanGUI" testclass="SyncTimer" testname="rendezvous">
          <intProp name="groupSize">{size}</intProp>
          <longProp name="timeoutInMs">{timeout}</longProp>
        </SyncTimer><hashTree/>"#
        )
    }

    fn group(threads: u32, body: &str) -> Result<Plan, JmxError> {
        let text = plan_with(&format!(
            r#"<ThreadGroup testclass="ThreadGroup" testname="G">
        <stringProp name="ThreadGroup.num_threads">{threads}</stringProp>
        <stringProp name="ThreadGroup.ramp_time">1</stringProp>
      </ThreadGroup>
      <hashTree>{body}</hashTree>"#
        ));
        parse("p.jmx", &text, &testdata(), props(&[]))
    }

    #[test]
    fn a_sync_timer_is_its_samplers_rendezvous_in_the_scenario() {
        let plan = group(10, &format!("{}{GET}<hashTree/>", sync_timer(5, 0))).unwrap();
        assert!(plan.unsupported.is_empty(), "{:?}", plan.unsupported);
        let step = &plan.groups[0].steps[0];
        let five = Rendezvous {
            users: 5,
            timeout_ms: None,
        };
        assert_eq!((step.rendezvous, step.think), (Some(five), None));
        let text = scenario_text(&plan, "p.jmx");
        let scenario = stampede_workload::Scenario::parse("p.toml", &text, &testdata(), &[])
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let spec = scenario.groups[0].steps[0].options.rendezvous.expect(&text);
        assert_eq!((spec.users, spec.timeout), (Some(5), None), "{text}");
    }

    #[test]
    fn group_size_0_gathers_every_thread_and_a_timeout_is_kept() {
        // Under the sampler: its own rendezvous only.
        let body = format!(
            "{GET}<hashTree>{}</hashTree>{GET}<hashTree/>",
            sync_timer(0, 2000)
        );
        let plan = group(4, &body).unwrap();
        let steps = &plan.groups[0].steps;
        assert_eq!(
            steps[1].rendezvous, None,
            "the other sampler is not gathered"
        );
        let text = scenario_text(&plan, "p.jmx");
        assert!(text.contains("rendezvous = \"all\""), "{text}");
        assert!(text.contains("rendezvous_timeout = \"2000ms\""), "{text}");
    }

    #[test]
    fn a_group_size_above_the_threads_needs_a_timeout_as_in_jmeter() {
        let error = group(10, &format!("{}{GET}<hashTree/>", sync_timer(20, 0)))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("groupSize 20 is more than the group's 10 threads"),
            "{error}"
        );
        let timed = group(10, &format!("{}{GET}<hashTree/>", sync_timer(20, 500))).unwrap();
        let users = timed.groups[0].steps[0].rendezvous.map(|r| r.users);
        assert_eq!(users, Some(20), "released by the timeout each time");
    }

    #[test]
    fn negative_values_are_as_sync_timer_reads_them() {
        // delay(): a negative groupSize waits for nobody; a negative timeout throws.
        let none = group(2, &format!("{}{GET}<hashTree/>", sync_timer(-1, 0))).unwrap();
        assert_eq!(none.groups[0].steps[0].rendezvous, None);
        let error = group(2, &format!("{}{GET}<hashTree/>", sync_timer(2, -5)))
            .unwrap_err()
            .to_string();
        assert!(error.contains("timeoutInMs is -5"), "{error}");
        let error = group(
            2,
            &format!("{}{GET}<hashTree/>", sync_timer(2_147_483_648, 1000)),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("groupSize is 2147483648, beyond a Java int"),
            "{error}"
        );
        let largest = group(
            2,
            &format!("{}{GET}<hashTree/>", sync_timer(2_147_483_647, 1000)),
        );
        assert!(largest.is_ok());
    }

    #[test]
    fn a_throughput_timer_leaves_no_threads_to_gather() {
        let ctt = r#"<ConstantThroughputTimer testclass="ConstantThroughputTimer" testname="ctt">
          <doubleProp><name>throughput</name><value>60.0</value><savedValue>0.0</savedValue></doubleProp>
        </ConstantThroughputTimer><hashTree/>"#;
        let plan = group(4, &format!("{ctt}{}{GET}<hashTree/>", sync_timer(2, 0))).unwrap();
        let listed = format!("{:?}", plan.unsupported);
        assert!(listed.contains("with a throughput timer"), "{listed}");
        // The timer is listed, not its group: --skip-unsupported keeps the
        // group and its sampler, paced by the throughput timer.
        assert_eq!(plan.unsupported.len(), 1, "{listed}");
        assert_eq!(plan.unsupported[0].class, "SyncTimer", "{listed}");
        assert_eq!(plan.groups.len(), 1);
        assert_eq!(plan.groups[0].steps.len(), 1);
        assert_eq!(plan.groups[0].steps[0].rendezvous, None);
    }
}
