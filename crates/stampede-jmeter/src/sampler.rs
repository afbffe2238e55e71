//! One HTTP Request sampler (HTTPSamplerProxy) as a stampede step: which
//! of JMeter's rules apply to its method (query string, body, both or
//! neither), its URL (http_url.rs) and body (http_args.rs) with HTTP
//! Request Defaults filling what the sampler leaves empty, the Content-Type
//! JMeter's HttpClient4 sampler sends, and the per-sampler connection
//! settings.

use crate::functions::{constant, translate, Names};
use crate::http_args::{
    form_body, multipart_body, query_string, values_as_body, values_body, Arg, BOUNDARY,
};
use crate::http_url::{query_method, url, Address};
use crate::model::Step;
use crate::tree::{Element, Prop};
use crate::MapError;

/// An HTTP sampler's property, or the innermost HTTP Request Defaults' one.
struct Fields<'a> {
    sampler: &'a Element,
    /// Outermost first.
    defaults: &'a [&'a Element],
}

impl<'a> Fields<'a> {
    fn get(&self, name: &str) -> Option<&'a str> {
        self.sampler
            .text(name)
            .or_else(|| self.defaults.iter().rev().find_map(|d| d.text(name)))
    }

    fn flag(&self, name: &str) -> Option<bool> {
        self.sampler
            .flag(name)
            .or_else(|| self.defaults.iter().rev().find_map(|d| d.flag(name)))
    }

    /// The sampler's arguments, then the defaults' (JMeter adds both).
    fn arguments(&self) -> Vec<&'a Element> {
        let mut args = Vec::new();
        for element in std::iter::once(self.sampler).chain(self.defaults.iter().rev().copied()) {
            if let Some(list) = element.element("HTTPsampler.Arguments") {
                for (_, prop) in list.list("Arguments.arguments") {
                    if let Prop::Element(arg) = prop {
                        args.push(&**arg);
                    }
                }
            }
        }
        args
    }
}

/// `Content-Type` of an url-encoded form.
const FORM: &str = "application/x-www-form-urlencoded";

/// Maps `sampler` with the HTTP Request Defaults in scope.
pub(crate) fn http_step(
    sampler: &Element,
    defaults: &[&Element],
    names: &Names,
    notes: &mut Vec<String>,
) -> Result<Step, MapError> {
    let fields = Fields { sampler, defaults };
    let refuse = |why: &str| Err(MapError::Unsupported(why.to_string()));
    if fields.flag("HTTPSampler.image_parser") == Some(true) {
        return refuse("downloading embedded resources is not mapped");
    }
    if fields.get("HTTPSampler.proxyHost").is_some() {
        return refuse("a per-sampler proxy is not mapped");
    }
    if fields.get("HTTPSampler.ipSource").is_some() {
        return refuse("a per-sampler source address is not mapped");
    }
    let has_files = sampler
        .element("HTTPsampler.Files")
        .is_some_and(|f| !f.list("HTTPFileArgs.files").is_empty());
    if has_files {
        return refuse("file uploads are not mapped");
    }
    let method = match fields.get("HTTPSampler.method") {
        Some(m) => constant(m, names, "the method")?
            .trim()
            .to_ascii_uppercase(),
        None => "GET".to_string(),
    };
    let mut args = Vec::new();
    for arg in fields.arguments().into_iter().filter(|a| a.enabled) {
        args.push(Arg::read(arg, names)?);
    }
    let raw_body = fields.flag("HTTPSampler.postBodyRaw") == Some(true);
    let values = values_as_body(raw_body, &args);
    // HTTPHC4Impl.createHttpRequest: HEAD, TRACE and OPTIONS never carry a
    // body, GET only its values-as-body (HttpGetWithEntity), every other
    // method (POST, PUT, PATCH, DELETE, WebDAV's) always does.
    let sends_body = match method.as_str() {
        "HEAD" | "TRACE" | "OPTIONS" => false,
        "GET" => values,
        _ => true,
    };
    let query = if query_method(&method) {
        query_string(&args)
    } else {
        String::new()
    };
    let text = |name: &str, what: &str| -> Result<Option<String>, MapError> {
        match fields.get(name) {
            Some(raw) => Ok(Some(constant(raw, names, what)?)),
            None => Ok(None),
        }
    };
    let address = Address {
        sampler: &sampler.describe(),
        protocol: text("HTTPSampler.protocol", "the protocol")?,
        domain: text("HTTPSampler.domain", "the server name")?,
        port: text("HTTPSampler.port", "the port")?,
        path: translate(fields.get("HTTPSampler.path").unwrap_or(""), names)?,
    };
    let url = url(&address, &query, notes)?;
    if fields
        .get("HTTPSampler.implementation")
        .is_some_and(|i| i.trim().eq_ignore_ascii_case("java"))
    {
        notes.push(format!(
            "{}: the Java implementation: the request is built as JMeter's default HttpClient4 builds it",
            sampler.describe()
        ));
    }
    let charset = charset_name(fields.get("HTTPSampler.contentEncoding"));
    if charset != "UTF-8" {
        notes.push(format!(
            "{}: contentEncoding {charset}: the body is sent as the plan's UTF-8 text",
            sampler.describe()
        ));
    }
    // JMeter sets application/x-www-form-urlencoded itself only with this
    // property (false since JMeter 5.0); otherwise HttpClient names the
    // entity's own type, charset included (RequestContent).
    let add_form_type = names
        .props
        .get("http.post_add_content_type_if_missing")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let multipart = sends_body && fields.flag("HTTPSampler.DO_MULTIPART_POST") == Some(true);
    let (body, content_type) = if !sends_body {
        (String::new(), None)
    } else if multipart {
        let lax = fields.flag("HTTPSampler.BROWSER_COMPATIBLE_MULTIPART") == Some(true);
        (
            multipart_body(&args, &charset, lax)?,
            Some(format!(
                "multipart/form-data; boundary={BOUNDARY}; charset={charset}"
            )),
        )
    } else if values {
        let entity_type = format!("text/plain; charset={charset}");
        (
            values_body(&args),
            Some(if add_form_type {
                FORM.into()
            } else {
                entity_type
            }),
        )
    } else {
        let entity_type = format!("{FORM}; charset={charset}");
        (
            form_body(&args)?,
            Some(if add_form_type {
                FORM.into()
            } else {
                entity_type
            }),
        )
    };
    let keep_alive = fields.flag("HTTPSampler.use_keepalive") == Some(true);
    // HTTPHC4Impl.setupRequest (and HTTPJavaImpl.setupConnection) send
    // `Connection: keep-alive` on every keep-alive request, before the
    // Header Manager's headers (which may replace it); stampede's own
    // HTTP/1.1 request leaves it out, and its `keep_alive = false` already
    // sends JMeter's `Connection: close`.
    let mut headers: Vec<(String, String)> = keep_alive
        .then(|| ("Connection".to_string(), "keep-alive".to_string()))
        .into_iter()
        .chain(content_type.map(|t| ("Content-Type".to_string(), t)))
        .collect();
    // HttpClient sends an entity's length, 0 included; stampede says 0 on
    // its own for POST, PUT and PATCH only.
    if sends_body && body.is_empty() && !matches!(method.as_str(), "POST" | "PUT" | "PATCH") {
        headers.push(("Content-Length".into(), "0".into()));
    }
    let millis = |name: &str| -> Result<Option<u64>, MapError> {
        let Some(raw) = fields.get(name) else {
            return Ok(None);
        };
        let value = constant(raw, names, name)?;
        value.trim().parse::<u64>().map(Some).map_err(|_| {
            MapError::Bad(format!(
                "{}: {name} is '{value}', not a whole number of milliseconds",
                sampler.describe()
            ))
        })
    };
    Ok(Step {
        name: sampler.name.clone(),
        method,
        url,
        body: (!body.is_empty()).then_some(body),
        headers,
        multipart,
        follow_redirects: fields.flag("HTTPSampler.follow_redirects") == Some(true)
            || fields.flag("HTTPSampler.auto_redirects") == Some(true),
        keep_alive,
        connect_timeout_ms: millis("HTTPSampler.connect_timeout")?.filter(|ms| *ms > 0),
        response_timeout_ms: millis("HTTPSampler.response_timeout")?.filter(|ms| *ms > 0),
        ..Step::default()
    })
}

/// HTTPSamplerBase.getContentEncoding (UTF-8 when empty, JMeter 5.6.1+)
/// as Java's Charset names it.
fn charset_name(written: Option<&str>) -> String {
    let written = written.map(str::trim).unwrap_or("");
    let plain: String = written
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    match plain.as_str() {
        "" | "utf8" => "UTF-8".into(),
        "iso88591" | "latin1" => "ISO-8859-1".into(),
        "usascii" | "ascii" => "US-ASCII".into(),
        _ => written.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::charset_name;

    /// Java's Charset names: the aliases JMeter users write, dashes and
    /// underscores and case aside; anything else as written.
    #[test]
    fn charset_names_are_javas() {
        assert_eq!(charset_name(None), "UTF-8");
        assert_eq!(charset_name(Some(" utf_8 ")), "UTF-8");
        assert_eq!(charset_name(Some("ISO-8859-1")), "ISO-8859-1");
        assert_eq!(charset_name(Some("latin1")), "ISO-8859-1");
        assert_eq!(charset_name(Some("us-ascii")), "US-ASCII");
        assert_eq!(charset_name(Some("windows-1252")), "windows-1252");
    }
}
