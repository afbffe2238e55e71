//! One HTTP Request sampler (HTTPSamplerProxy) as a stampede step: the URL
//! from protocol, domain, port and path (HTTP Request Defaults filling what
//! the sampler leaves empty), arguments as the query or a form body, a raw
//! body, and the per-sampler connection settings.

use crate::functions::{constant, translate, Names};
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

/// Methods whose arguments JMeter sends in the query string.
const QUERY_METHODS: &[&str] = &["GET", "HEAD", "DELETE", "OPTIONS", "TRACE"];

/// Maps `sampler` with the HTTP Request Defaults in scope.
pub(crate) fn http_step(
    sampler: &Element,
    defaults: &[&Element],
    names: &Names,
    notes: &mut Vec<String>,
) -> Result<Step, MapError> {
    let fields = Fields { sampler, defaults };
    let refuse = |why: &str| Err(MapError::Unsupported(why.to_string()));
    if fields.flag("HTTPSampler.DO_MULTIPART_POST") == Some(true) {
        return refuse("multipart/form-data bodies are not mapped");
    }
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
    let mut url = base_url(sampler, &fields, names)?;
    let args = fields.arguments();
    let raw_body = fields.flag("HTTPSampler.postBodyRaw") == Some(true);
    let mut body = None;
    let mut form = false;
    if raw_body {
        let mut text = String::new();
        for arg in &args {
            text.push_str(&translate(arg.text("Argument.value").unwrap_or(""), names)?.template());
        }
        body = Some(text);
    } else if !args.is_empty() {
        let encoded = encode_args(&args, names)?;
        if QUERY_METHODS.contains(&method.as_str()) {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&encoded);
        } else {
            body = Some(encoded);
            form = true;
        }
    }
    if let Some(encoding) = fields.get("HTTPSampler.contentEncoding") {
        let encoding = encoding.trim();
        if !encoding.eq_ignore_ascii_case("utf-8") && !encoding.eq_ignore_ascii_case("utf8") {
            notes.push(format!(
                "{}: contentEncoding {encoding}: the body is sent as the plan's UTF-8 text",
                sampler.describe()
            ));
        }
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
        body,
        headers: if form {
            vec![(
                "Content-Type".into(),
                "application/x-www-form-urlencoded".into(),
            )]
        } else {
            Vec::new()
        },
        follow_redirects: fields.flag("HTTPSampler.follow_redirects") == Some(true)
            || fields.flag("HTTPSampler.auto_redirects") == Some(true),
        keep_alive: fields.flag("HTTPSampler.use_keepalive") == Some(true),
        connect_timeout_ms: millis("HTTPSampler.connect_timeout")?.filter(|ms| *ms > 0),
        response_timeout_ms: millis("HTTPSampler.response_timeout")?.filter(|ms| *ms > 0),
        ..Step::default()
    })
}

/// `protocol://domain[:port]path`, or the path when it is a whole URL.
fn base_url(sampler: &Element, fields: &Fields, names: &Names) -> Result<String, MapError> {
    let path = translate(fields.get("HTTPSampler.path").unwrap_or("/"), names)?.template();
    let path = path.trim();
    let lower = path.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let after = path.find("://").map_or(0, |i| i + 3);
        let host_end = path[after..]
            .find(['/', '?'])
            .map_or(path.len(), |i| after + i);
        if path[..host_end].contains("{{") {
            return Err(MapError::Unsupported(
                "the host changes per request; stampede needs it fixed".into(),
            ));
        }
        return Ok(path.to_string());
    }
    let domain = fields.get("HTTPSampler.domain").ok_or_else(|| {
        MapError::Bad(format!(
            "{}: no server name (HTTPSampler.domain), and no HTTP Request Defaults give one",
            sampler.describe()
        ))
    })?;
    let domain = constant(domain, names, "the server name")?;
    let domain = domain.trim();
    if domain.contains("${") {
        return Err(MapError::Bad(format!(
            "{}: the server name '{domain}' holds a variable no user-defined variable or property sets",
            sampler.describe()
        )));
    }
    let protocol = match fields.get("HTTPSampler.protocol") {
        Some(p) => constant(p, names, "the protocol")?
            .trim()
            .to_ascii_lowercase(),
        None => "http".to_string(),
    };
    if protocol != "http" && protocol != "https" {
        return Err(MapError::Unsupported(format!(
            "protocol {protocol} is not mapped (http or https)"
        )));
    }
    let host = if domain.contains(':') && !domain.starts_with('[') {
        format!("[{domain}]")
    } else {
        domain.to_string()
    };
    let port = match fields.get("HTTPSampler.port") {
        Some(p) => {
            let port = constant(p, names, "the port")?;
            let port = port.trim();
            if port.parse::<u16>().is_err() {
                return Err(MapError::Bad(format!(
                    "{}: HTTPSampler.port is '{port}', not a port number",
                    sampler.describe()
                )));
            }
            format!(":{port}")
        }
        None => String::new(),
    };
    let slash = if path.starts_with('/') { "" } else { "/" };
    Ok(format!("{protocol}://{host}{port}{slash}{path}"))
}

/// `name=value&...`, each part form-encoded when `always_encode` says so.
fn encode_args(args: &[&Element], names: &Names) -> Result<String, MapError> {
    let mut parts = Vec::new();
    for arg in args {
        let encode = arg.flag("HTTPArgument.always_encode") == Some(true);
        let render = |text: &str| -> Result<String, MapError> {
            let translated = translate(text, names)?;
            Ok(if encode {
                translated.encoded_template()
            } else {
                translated.template()
            })
        };
        let name = render(arg.text("Argument.name").unwrap_or(""))?;
        let value = render(arg.text("Argument.value").unwrap_or(""))?;
        let equals = arg.flag("HTTPArgument.use_equals") != Some(false) || !value.is_empty();
        parts.push(if equals {
            format!("{name}={value}")
        } else {
            name
        });
    }
    Ok(parts.join("&"))
}
