//! How `stampede run` spells each plan setting an error is about, and the
//! error line with those flags. The plan crate writes the sentence, this
//! table the flags; a compat front-end passes its own table (ab's `-t` is
//! the duration).

use stampede_plan::{PlanError, Setting};

/// `stampede run`'s flag for `setting`.
pub fn run_flag(setting: Setting) -> Option<&'static str> {
    Some(match setting {
        Setting::Connections => "-c",
        Setting::Rate => "-r",
        Setting::Threads => "-t",
        Setting::Duration => "-d",
        Setting::Requests => "-n",
        Setting::Timeouts => "--timeout, --connect-timeout",
        Setting::Tls => "--insecure, --cacert, --sni, --cert, --tls-min, --ciphers, ...",
        Setting::Http2 => "--http2",
        Setting::Streams => "--streams",
        Setting::Pipeline => "--pipeline",
        Setting::Http10 => "--http1.0",
        Setting::Proxy => "--proxy",
        Setting::Targets => "--targets",
        Setting::Io => "--io",
        Setting::SourceAddrs => "--source-addrs",
        Setting::Stages => "--stages",
        Setting::Resolve => "--resolve",
        Setting::TlsVersion => "--tls-min/--tls-max",
        Setting::Redirects => "--redirects",
        Setting::ConnMaxRequests => "--conn-max-requests",
        Setting::ConnMaxAge => "--conn-max-age",
        Setting::Dns => "--dns",
        Setting::DnsTtl => "--dns-ttl",
    })
}

/// One cause of an error chain as the user reads it: a plan error with
/// the flags of `flags`, anything else as it displays.
pub fn cause_text(
    cause: &(dyn std::error::Error + 'static),
    flags: stampede_plan::FlagNames,
) -> String {
    if let Some(error) = cause.downcast_ref::<DelayWithRate>() {
        return error.with_flags(flags);
    }
    match cause.downcast_ref::<PlanError>() {
        Some(error) => error.with_flags(flags),
        None => cause.to_string(),
    }
}

/// A script's `delay()` with a rate: the rate paces the requests. Typed,
/// so that a front-end names its own rate flag (wrk2's `-R`, run's `-r`).
#[derive(Debug)]
pub struct DelayWithRate {
    pub script: String,
    /// `init()` defined it, not the file's top level.
    pub in_init: bool,
}

impl DelayWithRate {
    /// The message with the rate's flag as `flags` spells it.
    pub fn with_flags(&self, flags: stampede_plan::FlagNames) -> String {
        let rate = flags(stampede_plan::Setting::Rate).unwrap_or("a rate");
        let script = &self.script;
        if self.in_init {
            format!("--script: {script}'s init() defines delay(); with {rate} the rate paces the requests: drop {rate} or delay()")
        } else {
            format!("--script: {script} defines delay(), which paces a connection's requests; with {rate} the rate does: drop {rate} or delay()")
        }
    }
}

impl std::fmt::Display for DelayWithRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.with_flags(&run_flag))
    }
}

impl std::error::Error for DelayWithRate {}

/// True when `cause` names settings a front-end spells its own way.
pub fn names_settings(cause: &(dyn std::error::Error + 'static)) -> bool {
    cause.is::<PlanError>() || cause.is::<DelayWithRate>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_errors_name_run_flags() {
        let error = anyhow::Error::new(PlanError::AtLeastOne(Setting::Requests));
        let text = cause_text(error.as_ref(), &run_flag);
        assert_eq!(text, "requests must be at least 1 (-n)");
        assert_eq!(
            PlanError::RedirectsConflict.with_flags(&run_flag),
            "--redirects follows one request at a time: drop --pipeline"
        );
        assert_eq!(
            PlanError::TlsNeedsHttps.with_flags(&run_flag),
            "TLS options (--insecure, --cacert, --sni, --cert, --tls-min, --ciphers, ...) need an https:// URL"
        );
    }
}
