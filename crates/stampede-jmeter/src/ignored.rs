//! Elements that send no request and change nothing stampede measures
//! except as each note says: Debug Sampler and PostProcessor, HTTP Cache
//! Manager. Each is ignored with one note naming what differs from JMeter.

use crate::tree::Element;

/// The note for an ignored element.
pub(crate) fn note(e: &Element) -> String {
    let what = e.describe();
    match e.class.as_str() {
        // DebugSampler.java: sample() builds a response from the variables
        // and properties; nothing goes on the wire.
        "DebugSampler" => format!(
            "{what}: ignored: it sends no request; JMeter records a sample of it (the variables as its response), so the JTL and the summary have one sample fewer per pass"
        ),
        "DebugPostProcessor" => format!(
            "{what}: ignored: it sends no request; JMeter adds the variables to the sample as a sub-result"
        ),
        // CacheManager.java (inCache, entryStillValid, setHeaders) and
        // HTTPHC4Impl.sample: a GET still fresh is not sent (no sample,
        // cache_manager.cached_resource_mode RETURN_NO_SAMPLE); the others
        // carry If-Modified-Since / If-None-Match.
        "CacheManager" => format!(
            "{what}: ignored: every request is sent in full. JMeter keeps each user's Last-Modified, ETag and (useExpires) Expires/max-age per URL: a repeated GET still fresh is not sent and records no sample, the others go out with If-Modified-Since/If-None-Match, which a server may answer 304 with no body. Against a server that sends cache headers, stampede sends more requests and reads more bytes"
        ),
        other => format!("{what}: ignored ({other} sends no request)"),
    }
}
