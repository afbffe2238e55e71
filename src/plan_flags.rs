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
    if let Some(error) = cause.downcast_ref::<crate::script_args::DelayWithRate>() {
        return error.with_flags(flags);
    }
    match cause.downcast_ref::<PlanError>() {
        Some(error) => error.with_flags(flags),
        None => cause.to_string(),
    }
}

/// True when `cause` names settings a front-end spells its own way.
pub fn names_settings(cause: &(dyn std::error::Error + 'static)) -> bool {
    cause.is::<PlanError>() || cause.is::<crate::script_args::DelayWithRate>()
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
            "--redirects follows HTTP/1.1 requests one at a time: drop --http2 or --pipeline"
        );
        assert_eq!(
            PlanError::TlsNeedsHttps.with_flags(&run_flag),
            "TLS options (--insecure, --cacert, --sni, --cert, --tls-min, --ciphers, ...) need an https:// URL"
        );
    }
}
