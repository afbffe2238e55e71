//! JMeter's `${...}` expressions translated into stampede template text.
//!
//! Properties (`-J`, `-q`, `${__P(...)}`, `${__property(...)}`) and
//! user-defined variables are constants: they are folded in at map time.
//! What varies per request becomes a built-in slot (`${__Random(1,9)}` is
//! `{{rand_int 1 9}}`) or a variable a feeder or extractor fills
//! (`${user}` is `{{user}}`). A `{{` that was literal JMeter text is written
//! `\{{`, so stampede reads it as the literal it was.

use crate::call_syntax::{closing, split_args};
use crate::counter_book::{counter, CounterBook};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// What names mean while translating one element's text.
#[derive(Debug, Default, Clone)]
pub struct Names {
    /// `-J`/`-q` properties.
    pub props: HashMap<String, String>,
    /// User-defined variables, already translated (constants only).
    pub constants: HashMap<String, String>,
    /// Variables set at run time in this thread group: CSV columns and
    /// extractor reference names.
    pub runtime: Vec<String>,
    /// Variables a config element sets each iteration, as the built-in
    /// slot that stands for them (a Counter's `iter`, a Random Variable's
    /// `rand_int 1 9`: variables.rs).
    pub slots: HashMap<String, String>,
    /// The .jmx file's directory: where `${__FileToString(...)}` paths start.
    pub base: std::path::PathBuf,
    /// The thread group's counters (its Counters and `${__counter}`s),
    /// shared by every clone of these names made while its elements are
    /// mapped (build.rs takes them for the group).
    pub counters: Rc<RefCell<CounterBook>>,
}

/// Why a text could not be translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FnError {
    /// A function or form stampede has no equivalent for (the element is
    /// listed as unsupported).
    Unsupported(String),
    /// Bad input: `${__P(x)}` with no value and no default (exit 2).
    Missing(String),
}

/// A translated piece: literal text, or a stampede slot's inner text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Slot(String),
}

/// The translation of one text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Translated {
    pieces: Vec<Piece>,
}

impl Translated {
    /// As stampede template text.
    pub fn template(&self) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(&text.replace("{{", "\\{{")),
                Piece::Slot(slot) => {
                    out.push_str("{{");
                    out.push_str(slot);
                    out.push_str("}}");
                }
            }
        }
        out
    }

    /// As [`template`](Self::template), the literal text form-encoded the
    /// way Java's URLEncoder does (`HTTPArgument.always_encode`); values
    /// filled at run time are sent as they are.
    pub fn encoded_template(&self) -> String {
        self.map_literals(form_encode).template()
    }

    /// The literal text changed by `change`; slots kept as they are.
    pub fn map_literals(&self, mut change: impl FnMut(&str) -> String) -> Translated {
        let mut out = Translated::default();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_literal(&change(text)),
                slot => out.pieces.push(slot.clone()),
            }
        }
        out
    }

    /// The literal text before the first slot (all of it without slots).
    pub fn leading_literal(&self) -> &str {
        match self.pieces.first() {
            Some(Piece::Literal(text)) => text,
            _ => "",
        }
    }

    /// True when a value filled at run time is part of the text.
    pub fn has_slots(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Slot(_)))
    }

    /// The text when it holds no slot (hosts, ports, counts, timeouts).
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Slot(_) => return None,
            }
        }
        Some(out)
    }

    fn push_literal(&mut self, text: &str) {
        if let Some(Piece::Literal(last)) = self.pieces.last_mut() {
            last.push_str(text);
        } else if !text.is_empty() {
            self.pieces.push(Piece::Literal(text.to_string()));
        }
    }

    fn append(&mut self, other: Translated) {
        for piece in other.pieces {
            match piece {
                Piece::Literal(text) => self.push_literal(&text),
                slot => self.pieces.push(slot),
            }
        }
    }
}

/// Translates `text`.
pub fn translate(text: &str, names: &Names) -> Result<Translated, FnError> {
    let mut out = Translated::default();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_literal(&rest[..start]);
        let after = &rest[start + 2..];
        match closing(after) {
            Some(end) => {
                out.append(expression(&after[..end], names)?);
                rest = &after[end + 1..];
            }
            None => {
                // JMeter leaves an unclosed `${` as written.
                out.push_literal(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_literal(rest);
    Ok(out)
}

/// Translates `text` that must be a constant (a host, a port, a count).
pub fn constant(text: &str, names: &Names, what: &str) -> Result<String, FnError> {
    translate(text, names)?.literal().ok_or_else(|| {
        FnError::Unsupported(format!(
            "{what} '{text}' changes per request; stampede needs it fixed"
        ))
    })
}

/// An element's name (a thread group's, a sampler's label) as JMeter runs
/// it: PreCompiler.java replaces `${...}` in every element's properties,
/// its name included, before the test starts, so properties, User Defined
/// Variables and functions of fixed value resolve. A name that changes per
/// request (a CSV column, `${__threadNum}`) or does not resolve stays as
/// written, as JMeter leaves an unknown `${name}`.
pub fn element_name(text: &str, names: &Names) -> String {
    match translate(text, names).map(|t| t.literal()) {
        Ok(Some(resolved)) => resolved,
        _ => text.to_string(),
    }
}

/// One `${...}`'s inside: a function call or a variable name.
fn expression(inner: &str, names: &Names) -> Result<Translated, FnError> {
    let mut out = Translated::default();
    let Some(call) = inner.strip_prefix("__") else {
        let name = inner.trim();
        if let Some(value) = names.constants.get(name) {
            out.push_literal(value);
        } else if let Some(slot) = names.slots.get(name) {
            out.pieces.push(Piece::Slot(slot.clone()));
        } else if names.runtime.iter().any(|n| n == name) {
            out.pieces.push(Piece::Slot(name.to_string()));
        } else {
            // An undefined variable stays as written, as JMeter sends it.
            out.push_literal(&format!("${{{inner}}}"));
        }
        return Ok(out);
    };
    let (function, args) = match call.find('(') {
        Some(open) if call.trim_end().ends_with(')') => {
            let inside = &call[open + 1..call.trim_end().len() - 1];
            (&call[..open], split_args(inside))
        }
        _ => (call, Vec::new()),
    };
    let arg = |i: usize| -> Result<String, FnError> {
        match args.get(i) {
            Some(text) => constant(text, names, "a function argument"),
            None => Ok(String::new()),
        }
    };
    let unsupported = |why: &str| FnError::Unsupported(format!("${{{inner}}}: {why}"));
    // An argument filled per request (a CSV column, a counter): stampede
    // templates compute nothing at run time, so the result has no slot.
    let per_request = |e: FnError| match e {
        FnError::Unsupported(_) => unsupported(
            "an argument changes per request and stampede templates compute nothing at run time",
        ),
        missing => missing,
    };
    match function {
        "P" | "property" => {
            let name = arg(0)?;
            let default_at = if function == "P" { 1 } else { 2 };
            match names.props.get(name.trim()) {
                Some(value) => out.push_literal(value),
                None if args.len() > default_at => out.push_literal(&arg(default_at)?),
                None => {
                    return Err(FnError::Missing(format!(
                        "${{{inner}}}: property {} has no value (give -J{}=VALUE) and no default",
                        name.trim(),
                        name.trim()
                    )))
                }
            }
        }
        "Random" => {
            let (low, high) = (arg(0)?, arg(1)?);
            if args.len() > 2 && !arg(2)?.trim().is_empty() {
                return Err(unsupported("storing the value in a variable is not mapped"));
            }
            let parse = |t: &str| t.trim().parse::<i64>().ok();
            let (Some(low), Some(high)) = (parse(&low), parse(&high)) else {
                return Err(unsupported("the bounds are not integers"));
            };
            out.pieces
                .push(Piece::Slot(format!("rand_int {low} {high}")));
        }
        "RandomString" => {
            let chars = arg(1)?;
            match arg(0)?.trim().parse::<usize>() {
                Ok(len) if chars.is_empty() && len > 0 => {
                    out.pieces.push(Piece::Slot(format!("rand_str {len}")))
                }
                _ => {
                    return Err(unsupported(
                        "only a length, with no character set, is mapped",
                    ))
                }
            }
        }
        "UUID" => out.pieces.push(Piece::Slot("uuid".into())),
        "FileToString" => {
            if args.len() > 2 && !arg(2)?.trim().is_empty() {
                return Err(unsupported("storing the value in a variable is not mapped"));
            }
            let written = arg(0)?;
            let resolved = names.base.join(written.trim());
            let text = std::fs::read_to_string(&resolved).map_err(|e| {
                FnError::Missing(format!(
                    "${{{inner}}}: file '{written}' (resolved to {}): cannot read: {e}",
                    resolved.display()
                ))
            })?;
            out.push_literal(&text);
        }
        "time" if args.iter().all(|a| a.trim().is_empty()) => {
            out.pieces.push(Piece::Slot("now_ms".into()))
        }
        "time" => return Err(unsupported("formats are not mapped (only ${__time()})")),
        // JMeter's thread number counts from 1 (ThreadNumber.java reads it
        // from the thread's name, `Group 1-1`), stampede's `conn` from 0.
        "threadNum" => out.pieces.push(Piece::Slot("thread_num".into())),
        "counter" => {
            let name =
                counter(&arg(0)?, &arg(1)?, &names.counters).map_err(|why| unsupported(&why))?;
            out.pieces.push(Piece::Slot(format!("next {name}")));
        }
        // IntSum.java: each argument Integer.parseInt, summed as a Java
        // int (wrapping); a last argument that is not a number names a
        // variable to store into.
        "intSum" => {
            let values = (0..args.len())
                .map(|i| arg(i).map_err(per_request))
                .collect::<Result<Vec<_>, _>>()?;
            if values.len() < 2 {
                return Err(unsupported("__intSum needs at least two numbers"));
            }
            let mut sum = 0i32;
            for (i, value) in values.iter().enumerate() {
                let last = i == values.len() - 1;
                match (if last { value.trim() } else { value }).parse::<i32>() {
                    Ok(n) => sum = sum.wrapping_add(n),
                    Err(_) if last => {
                        return Err(unsupported("storing the value in a variable is not mapped"))
                    }
                    Err(_) => return Err(unsupported(&format!("'{value}' is not an integer"))),
                }
            }
            out.push_literal(&sum.to_string());
        }
        // UrlEncode.java: URLEncoder.encode(text, UTF-8).
        "urlencode" => out.push_literal(&form_encode(&arg(0).map_err(per_request)?)),
        _ => return Err(unsupported("this function has no stampede equivalent")),
    }
    Ok(out)
}

/// Java's URLEncoder: `A-Za-z0-9.-*_` kept, space as `+`, the rest `%XX`.
pub(crate) fn form_encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(char::from(byte))
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// Java's URLDecoder (UTF-8): `+` is a space, `%XX` a byte; None where
/// URLDecoder throws (a `%` without two hex digits).
pub(crate) fn form_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            other => out.push(other),
        }
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        let mut names = Names::default();
        names.props.insert("host".into(), "10.0.0.1".into());
        names.constants.insert("base".into(), "/api".into());
        names.runtime.push("user".into());
        names
    }

    fn t(text: &str) -> String {
        translate(text, &names()).unwrap().template()
    }

    #[test]
    fn functions_become_builtins() {
        assert_eq!(t("${__Random(1,1000)}"), "{{rand_int 1 1000}}");
        assert_eq!(
            t("id=${__UUID()}&t=${__time()}"),
            "id={{uuid}}&t={{now_ms}}"
        );
        assert_eq!(t("${__threadNum}"), "{{thread_num}}");
        assert_eq!(t("${__RandomString(8,)}"), "{{rand_str 8}}");
        assert_eq!(t("${__UUID}"), "{{uuid}}");
        let encoded = translate("a b&${user}/é", &names())
            .unwrap()
            .encoded_template();
        assert_eq!(encoded, "a+b%26{{user}}%2F%C3%A9");
    }

    /// IterationCounter.java, execute: `${__counter(TRUE,)}` counts each
    /// evaluation from 1 per thread, `FALSE` over all threads; each
    /// occurrence is its own function instance, so its own count.
    #[test]
    fn counters_count_each_evaluation_from_one() {
        use crate::counter_book::{counter_variables, use_counter};
        let names = names();
        let t = |text: &str| translate(text, &names).unwrap().template();
        assert_eq!(t("/a/${__counter(TRUE,)}"), "/a/{{next __counter_1}}");
        assert_eq!(t("${__counter(FALSE)}"), "{{next __counter_2}}");
        // Boolean.parseBoolean takes " TRUE" (not trimmed) as false.
        assert_eq!(t("${__counter( TRUE,)}"), "{{next __counter_3}}");
        let declared = names.counters.borrow().specs.clone();
        assert_eq!(
            declared,
            [
                use_counter("__counter_1", false),
                use_counter("__counter_2", true),
                use_counter("__counter_3", true),
            ]
        );
        // Storing into a variable: the counter of that name, declared first.
        names
            .counters
            .borrow_mut()
            .specs
            .push(use_counter("c", false));
        assert_eq!(
            t("${__counter(true, c )}/${__counter(TRUE,c)}"),
            "{{next c}}/{{next c}}"
        );
        assert!(matches!(
            translate("${__counter(FALSE,c)}", &names),
            Err(FnError::Unsupported(_))
        ));
        for taken_or_bad in ["${__counter(TRUE,user)}", "${__counter(TRUE,a b)}"] {
            assert!(matches!(
                translate(taken_or_bad, &names),
                Err(FnError::Unsupported(_))
            ));
        }
        assert_eq!(
            counter_variables("a ${__counter(TRUE,c)} ${__counter(FALSE,)} ${__counter(x, d )}"),
            [
                ("c".to_string(), "TRUE".to_string()),
                ("d".into(), "x".into())
            ]
        );
    }

    #[test]
    fn properties_and_constants_fold_in() {
        assert_eq!(
            t("${__P(host,localhost)}:${__P(port,8080)}"),
            "10.0.0.1:8080"
        );
        assert_eq!(t("${__property(host,,x)}"), "10.0.0.1");
        assert_eq!(t("${base}/u/${user}"), "/api/u/{{user}}");
        assert_eq!(t("${__P(port,${__P(host,)})}"), "10.0.0.1");
        assert_eq!(
            t("${undefined} ${ and {{x}}"),
            "${undefined} ${ and \\{{x}}"
        );
        assert_eq!(t(r"${__P(missing,a\,b)}"), "a,b");
    }

    #[test]
    fn element_names_resolve_when_fixed() {
        assert_eq!(
            element_name("${__P(host,x)} group", &names()),
            "10.0.0.1 group"
        );
        assert_eq!(element_name("GET ${base}", &names()), "GET /api");
        // Per request, or without a value: as written.
        assert_eq!(element_name("as ${user}", &names()), "as ${user}");
        assert_eq!(element_name("${__P(port)}", &names()), "${__P(port)}");
    }

    #[test]
    fn missing_and_unmapped() {
        let err = translate("${__P(port)}", &names()).unwrap_err();
        assert_eq!(
            err,
            FnError::Missing(
                "${__P(port)}: property port has no value (give -Jport=VALUE) and no default"
                    .into()
            )
        );
        for text in [
            "${__time(yyyy)}",
            "${__Random(1,2,v)}",
            "${__groovy(1)}",
            "${__Random(a,b)}",
        ] {
            assert!(
                matches!(translate(text, &names()), Err(FnError::Unsupported(_))),
                "{text}"
            );
        }
        assert!(constant("${user}", &names(), "the host").is_err());
        let err = translate("${__FileToString(body.json,,)}", &names()).unwrap_err();
        assert!(
            matches!(&err, FnError::Missing(m) if m.starts_with("${__FileToString(body.json,,)}: file 'body.json' (resolved to body.json): cannot read")),
            "{err:?}"
        );
        assert_eq!(
            constant("${__P(host,)}", &names(), "the host").unwrap(),
            "10.0.0.1"
        );
    }

    /// The reason a function is refused, or its template.
    fn reason(text: &str) -> String {
        match translate(text, &names()) {
            Ok(translated) => translated.template(),
            Err(FnError::Unsupported(why) | FnError::Missing(why)) => why,
        }
    }

    /// Each function's arguments as JMeter reads them (Random.java,
    /// RandomString.java, FileToString.java, IntSum.java: a last argument
    /// names a variable to store into; an empty one stores nothing).
    #[test]
    fn arguments_are_read_as_jmeter_reads_them() {
        assert_eq!(t("${__Random(1,5,)}"), "{{rand_int 1 5}}", "empty variable");
        assert_eq!(
            reason("${__FileToString(x.txt,,var)}"),
            "${__FileToString(x.txt,,var)}: storing the value in a variable is not mapped"
        );
        assert_eq!(t("${__intSum(1,2)}"), "3");
        assert_eq!(t("${__intSum(1, 2)}"), "3", "the last one is trimmed");
        assert_eq!(t("${__intSum(2147483647,1)}"), "-2147483648", "a Java int");
        assert_eq!(
            reason("${__intSum(1,2,sum)}"),
            "${__intSum(1,2,sum)}: storing the value in a variable is not mapped"
        );
        assert_eq!(
            reason("${__intSum(x,2)}"),
            "${__intSum(x,2)}: 'x' is not an integer"
        );
        for refused in ["${__RandomString(0,)}", "${__RandomString(8,abc)}"] {
            assert_eq!(
                reason(refused),
                format!("{refused}: only a length, with no character set, is mapped")
            );
        }
        assert_eq!(
            reason("${__time(yyyy)}"),
            "${__time(yyyy)}: formats are not mapped (only ${__time()})"
        );
        // An unclosed call is a name JMeter does not know, not a slice.
        assert_eq!(
            reason("${__UUID(}"),
            "${__UUID(}: this function has no stampede equivalent"
        );
    }
}
