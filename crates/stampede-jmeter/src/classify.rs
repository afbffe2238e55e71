//! What role each JMeter test element class plays, the one table build.rs
//! consults (and docs/compat.md's mapping table mirrors).

use crate::tree::Element;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    ThreadGroup,
    Sampler,
    Controller,
    /// Config elements: headers, defaults, cookies, CSV data, variables.
    Config,
    Assertion,
    Extractor,
    /// Pauses before each sampler in scope.
    Timer,
    /// Throughput timers: the group's load model.
    Throughput,
    /// Listeners: results are stampede's own; never an error.
    Listener,
    /// Elements with no effect on the load (debug helpers).
    Ignored,
    Unknown,
}

pub(crate) fn role(element: &Element) -> Role {
    match element.class.as_str() {
        "ThreadGroup" | "SetupThreadGroup" | "PostThreadGroup" => Role::ThreadGroup,
        "HTTPSamplerProxy" | "HTTPSampler" | "HTTPSampler2" => Role::Sampler,
        "GenericController"
        | "TransactionController"
        | "LoopController"
        | "OnceOnlyController"
        | "IfController" => Role::Controller,
        "HeaderManager" | "CookieManager" | "CSVDataSet" | "Arguments" => Role::Config,
        // Values set per iteration (variables.rs) and the HTTP and DNS
        // caches (ignored with a note, or refused: build.rs).
        "CounterConfig" | "RandomVariableConfig" | "CacheManager" | "DNSCacheManager" => {
            Role::Config
        }
        "ConfigTestElement" if element.gui == "HttpDefaultsGui" => Role::Config,
        "ResponseAssertion" | "DurationAssertion" | "SizeAssertion" => Role::Assertion,
        "JSONPostProcessor"
        | "RegexExtractor"
        | "BoundaryExtractor"
        | "HtmlExtractor"
        | "com.atlantbh.jmeter.plugins.jsonutils.jsonpathextractor.JSONPathExtractor" => {
            Role::Extractor
        }
        "ConstantTimer" | "UniformRandomTimer" | "GaussianRandomTimer" | "SyncTimer" => Role::Timer,
        "ConstantThroughputTimer" | "kg.apc.jmeter.timers.VariableThroughputTimer" => {
            Role::Throughput
        }
        "ResultCollector"
        | "Summariser"
        | "BackendListener"
        | "kg.apc.jmeter.vizualizers.CorrectedResultCollector" => Role::Listener,
        "DebugPostProcessor" | "DebugSampler" => Role::Ignored,
        _ => Role::Unknown,
    }
}

/// BeanShell, JSR223 (Groovy and the other languages) and BSF elements:
/// code stampede cannot run. Whatever they set (a token, a property) has
/// no value in the mapped plan, so they are refused before anything else.
pub(crate) fn is_script(element: &Element) -> bool {
    let class = element.class.rsplit('.').next().unwrap_or("");
    ["BeanShell", "JSR223", "BSF", "Groovy"]
        .iter()
        .any(|prefix| class.starts_with(prefix))
}
