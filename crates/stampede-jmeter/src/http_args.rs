//! An HTTP Request sampler's arguments (HTTPArgument) and what JMeter 5.6
//! makes of them: the query string (HTTPSamplerBase.getQueryString) and
//! the body of a method that sends one
//! (HTTPHC4Impl.setupHttpEntityEnclosingRequestData): the values as they
//! are, an url-encoded form, or multipart/form-data.
//!
//! Names and values are translated first (`${...}`): what is known when
//! the plan is mapped is encoded here, exactly; a value filled at run time
//! (a CSV column, an extracted value) is sent as it is.

use crate::functions::{form_decode, form_encode, translate, Names, Translated};
use crate::tree::Element;
use crate::MapError;

/// One enabled argument, translated.
pub(crate) struct Arg {
    name: Translated,
    value: Translated,
    /// `HTTPArgument.always_encode` (false when absent, as the schema says).
    always_encode: bool,
    /// `Argument.metadata`: what the query string puts between name and
    /// value (`=`, or nothing when "include equals" is off).
    metadata: String,
    /// `HTTPArgument.content_type`: a multipart part's type.
    content_type: String,
}

impl Arg {
    pub(crate) fn read(e: &Element, names: &Names) -> Result<Arg, MapError> {
        Ok(Arg {
            name: translate(e.raw("Argument.name").unwrap_or(""), names)?,
            value: translate(e.raw("Argument.value").unwrap_or(""), names)?,
            always_encode: e.flag("HTTPArgument.always_encode") == Some(true),
            metadata: e.raw("Argument.metadata").unwrap_or("").to_string(),
            content_type: e
                .text("HTTPArgument.content_type")
                .unwrap_or("text/plain")
                .to_string(),
        })
    }

    /// HTTPArgument.getEncodedName.
    fn encoded_name(&self) -> String {
        if self.always_encode {
            self.name.encoded_template()
        } else {
            self.name.template()
        }
    }

    /// HTTPArgument.getEncodedValue.
    fn encoded_value(&self) -> String {
        if self.always_encode {
            self.value.encoded_template()
        } else {
            self.value.template()
        }
    }

    /// A name that is empty once translated (one filled at run time is
    /// taken to be present).
    fn unnamed(&self) -> bool {
        self.name.literal().is_some_and(|n| n.is_empty())
    }

    /// Argument.isSkippable: a blank name, or one that is still `${...}`
    /// (an undefined variable), is left out of forms.
    fn skippable(&self) -> bool {
        let Some(name) = self.name.literal() else {
            return false;
        };
        name.trim().is_empty() || (name.trim().starts_with("${") && name.ends_with('}'))
    }
}

/// HTTPSamplerBase.getSendParameterValuesAsPostBody: a raw body, or
/// arguments none of which has a name.
pub(crate) fn values_as_body(raw: bool, args: &[Arg]) -> bool {
    raw || (!args.is_empty() && args.iter().all(Arg::unnamed))
}

/// HTTPSamplerBase.getQueryString: `name` + metadata + value for each
/// argument whose encoded name is not empty, joined by `&`.
pub(crate) fn query_string(args: &[Arg]) -> String {
    let mut parts = Vec::new();
    for arg in args {
        let name = arg.encoded_name();
        if name.is_empty() {
            continue;
        }
        parts.push(format!("{name}{}{}", arg.metadata, arg.encoded_value()));
    }
    parts.join("&")
}

/// The values one after another, each encoded when `always_encode` says so
/// (the body of a raw or all-unnamed sampler).
pub(crate) fn values_body(args: &[Arg]) -> String {
    args.iter().map(Arg::encoded_value).collect()
}

/// HTTPHC4Impl.createUrlEncodedFormEntity: `name=value` for each argument
/// that is not skippable, both url-encoded by HttpClient (an argument not
/// marked "encode" is taken as already encoded: decoded first, so that it
/// is sent as written, normalised).
pub(crate) fn form_body(args: &[Arg]) -> Result<String, MapError> {
    let mut parts = Vec::new();
    for arg in args.iter().filter(|a| !a.skippable()) {
        let encode = |text: &Translated| -> Result<String, MapError> {
            if arg.always_encode {
                return Ok(text.encoded_template());
            }
            let mut bad = None;
            let encoded = text.map_literals(|literal| match form_decode(literal) {
                Some(decoded) => form_encode(&decoded),
                None => {
                    bad = Some(literal.to_string());
                    String::new()
                }
            });
            match bad {
                Some(literal) => Err(MapError::Unsupported(format!(
                    "the argument text '{literal}' is not valid url-encoding: JMeter's URLDecoder fails the sample"
                ))),
                None => Ok(encoded.template()),
            }
        };
        parts.push(format!("{}={}", encode(&arg.name)?, encode(&arg.value)?));
    }
    Ok(parts.join("&"))
}

/// The boundary between parts. HttpClient's MultipartEntityBuilder picks 30
/// to 40 random characters of `-_0-9a-zA-Z` per request; stampede one
/// fixed string of them.
pub(crate) const BOUNDARY: &str = "stampede-jmeter_9fK2qX7dLw0Tz4Rb";

/// A multipart/form-data body as HttpClient 4.5 writes JMeter's parts
/// (HTTPHC4Impl.setupHttpEntityEnclosingRequestData): each non-skippable
/// argument a text part of its value, unencoded. `browser_compatible`
/// (`HTTPSampler.BROWSER_COMPATIBLE_MULTIPART`): only Content-Disposition
/// in each part's header (HttpClient's lax mode); otherwise also its
/// Content-Type and Content-Transfer-Encoding (RFC 6532 mode). Checked
/// against JMeter's HttpSamplerTest.kt bodies.
pub(crate) fn multipart_body(
    args: &[Arg],
    charset: &str,
    browser_compatible: bool,
) -> Result<String, MapError> {
    let mut body = String::new();
    for arg in args.iter().filter(|a| !a.skippable()) {
        let name = arg.name.template();
        if arg.name.literal().is_some_and(|n| n.contains(['\r', '\n'])) {
            return Err(MapError::Unsupported(
                "a multipart part whose name holds a line break is not mapped".into(),
            ));
        }
        // FormBodyPartBuilder escapes `"` and `\` in the name.
        let name = name.replace('\\', "\\\\").replace('"', "\\\"");
        body.push_str(&format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n"
        ));
        if !browser_compatible {
            // A type with parameters is taken as it is; otherwise the
            // sampler's charset is added (ContentType.create).
            let content_type = if arg.content_type.contains(';') {
                arg.content_type.clone()
            } else {
                format!("{}; charset={charset}", arg.content_type)
            };
            body.push_str(&format!(
                "Content-Type: {content_type}\r\nContent-Transfer-Encoding: 8bit\r\n"
            ));
        }
        body.push_str("\r\n");
        body.push_str(&arg.value.template());
        body.push_str("\r\n");
    }
    body.push_str(&format!("--{BOUNDARY}--\r\n"));
    Ok(body)
}
