//! The smallest plan of a target: one GET on one connection of one thread
//! for one second. Tests and benchmarks of the crates that take a [`Plan`]
//! start from it and set the fields they are about, instead of each writing
//! every field out (and each having to change when a field is added).

use crate::{LoadModel, Plan, RequestSpec, Schedule, StopCondition, Target, TransportSpec};
use std::time::Duration;

impl RequestSpec {
    /// A GET with no headers of the user's and no body, over HTTP/1.1.
    pub fn get() -> RequestSpec {
        RequestSpec {
            method: "GET".into(),
            headers: Vec::new(),
            body: Vec::new(),
            http10: false,
        }
    }
}

impl Plan {
    /// A GET of `target` on one connection of one thread for one second,
    /// keep-alive, 1 s connect and response timeouts, no warm-up, no mix,
    /// the default transport. Not validated: a caller that changes it and
    /// runs it calls [`Plan::validate`].
    pub fn minimal(target: Target) -> Plan {
        let second = Duration::from_secs(1);
        Plan {
            target,
            request: RequestSpec::get(),
            model: LoadModel::Closed {
                connections: Schedule::constant(1.0, second),
            },
            threads: 1,
            stop: StopCondition::Duration(second),
            warmup: None,
            source_addrs: Vec::new(),
            transport: TransportSpec::default(),
            mix: Vec::new(),
            keepalive: true,
            connect_timeout: second,
            timeout: second,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minimal_plan_validates_as_it_is() {
        let mut plan = Plan::minimal(Target::parse("http://127.0.0.1:3000/").unwrap());
        assert_eq!(plan.validate(), Ok(Vec::new()));
        assert_eq!(plan.connections(), 1);
        assert_eq!(plan.request.method, "GET");
    }
}
