//! `{{...}}` templates: compiled once into literal pieces and slots.
//!
//! `\{{` is a literal `{{`. Built-ins take arguments (`rand_int 1 1000`);
//! constants and `env.NAME` are folded into the literals at compile time, so
//! a template using only them is static and renders as fixed bytes.

mod render;
mod request;
mod url;

pub use render::{RenderContext, Sequence};
pub use request::RequestTemplate;
pub use url::{parse_url_template, websocket_url};

/// `text` as a template that sends it as it is: `{{` begins a slot, so it
/// is written `\\{{` (for what another tool recorded or a user pasted).
pub fn escape_literal(text: &str) -> String {
    text.replace("{{", "\\{{")
}

use crate::scope::{Binding, Scope};

pub use crate::template_error::TemplateError;

/// One value written at render time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slot {
    Seq,
    Conn,
    ThreadNum,
    Iter,
    Worker,
    Agent,
    Uuid,
    RandInt {
        low: i64,
        high: i64,
    },
    RandStr {
        len: usize,
    },
    NowMs,
    NowIso,
    Feed {
        feeder: usize,
        column: usize,
    },
    Extract {
        slot: usize,
    },
    /// `{{next NAME}}`: the counter advanced for this user, its new value.
    Next(std::sync::Arc<crate::counter::Counter>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Literal(Vec<u8>),
    Slot(Slot),
    /// A feeder or extracted value in the URL: bytes a request target cannot
    /// hold raw (space, controls, `"<>\\^`{|}#`, non-ASCII) are
    /// percent-encoded; `%` is kept, so already-encoded data stays as it is.
    UrlSlot(Slot),
    /// The start of a path that begins with a slot: a `/` goes here unless
    /// what follows is rendered starting with one (`http://h{{path}}` with
    /// path `/a` or `a` both request `/a`, as JMeter's HTTPSamplerBase.getUrl
    /// builds a path after variable substitution).
    PathStart,
}

/// A compiled template: literal pieces and slots, adjacent literals merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Compiles `text`, resolving every name against `scope`; `field` names
    /// the place in error messages.
    pub fn compile(field: &str, text: &[u8], scope: &Scope) -> Result<Template, TemplateError> {
        let mut template = Template::default();
        let mut rest = text;
        let mut offset = 0;
        while !rest.is_empty() {
            if rest.starts_with(b"\\{{") {
                template.push_literal(b"{{");
                rest = &rest[3..];
                offset += 3;
                continue;
            }
            if rest.starts_with(b"{{") {
                let close = find(&rest[2..], b"}}").ok_or(TemplateError::Unclosed {
                    field: field.to_string(),
                    at: offset,
                })?;
                let inner = &rest[2..2 + close];
                template.push_slot_text(field, inner, scope)?;
                rest = &rest[close + 4..];
                offset += close + 4;
                continue;
            }
            let next = [find(rest, b"{{"), find(rest, b"\\{{")]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(rest.len());
            // A lone `\` or `{` at the front that starts no marker is literal.
            let next = next.max(1);
            template.push_literal(&rest[..next]);
            rest = &rest[next..];
            offset += next;
        }
        Ok(template)
    }

    /// A template of fixed bytes.
    pub fn literal(bytes: &[u8]) -> Template {
        let mut template = Template::default();
        template.push_literal(bytes);
        template
    }

    /// True when the template has no slots: its bytes can be encoded once.
    pub fn is_static(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Literal(_)))
    }

    /// The fixed bytes of a static template.
    pub fn static_bytes(&self) -> Option<Vec<u8>> {
        self.is_static().then(|| {
            let mut out = Vec::new();
            self.append_literals(&mut out);
            out
        })
    }

    /// Appends the literal pieces to `out` (all of a static template).
    pub(crate) fn append_literals(&self, out: &mut Vec<u8>) {
        for piece in &self.pieces {
            if let Piece::Literal(bytes) = piece {
                out.extend_from_slice(bytes);
            }
        }
    }

    /// True when the template is empty.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// Appends the rendered bytes to `out` (the caller's send buffer).
    pub fn render(&self, context: &mut RenderContext<'_>, out: &mut Vec<u8>) {
        let mut path_start = None;
        for piece in &self.pieces {
            match piece {
                Piece::Literal(bytes) => out.extend_from_slice(bytes),
                Piece::Slot(slot) => context.write_slot(slot, out),
                Piece::UrlSlot(slot) => write_url_slot(context, slot, out),
                Piece::PathStart => {
                    path_start = Some(out.len());
                    continue;
                }
            }
            slash_unless_present(&mut path_start, out, false);
        }
        slash_unless_present(&mut path_start, out, true);
    }

    /// As [`render`](Self::render), for the request line and headers: a
    /// feeder or extracted value's CR, LF and NUL bytes become spaces, so
    /// data can never end a header early or inject one.
    pub fn render_head(&self, context: &mut RenderContext<'_>, out: &mut Vec<u8>) {
        let mut path_start = None;
        for piece in &self.pieces {
            match piece {
                Piece::Literal(bytes) => out.extend_from_slice(bytes),
                Piece::Slot(slot @ (Slot::Feed { .. } | Slot::Extract { .. })) => {
                    let start = out.len();
                    context.write_slot(slot, out);
                    for byte in &mut out[start..] {
                        if matches!(*byte, b'\r' | b'\n' | 0) {
                            *byte = b' ';
                        }
                    }
                }
                Piece::Slot(slot) => context.write_slot(slot, out),
                Piece::UrlSlot(slot) => write_url_slot(context, slot, out),
                Piece::PathStart => {
                    path_start = Some(out.len());
                    continue;
                }
            }
            slash_unless_present(&mut path_start, out, false);
        }
        slash_unless_present(&mut path_start, out, true);
    }

    /// Appends `other`'s pieces, merging literals at the seam.
    pub fn append(&mut self, other: &Template) {
        for piece in &other.pieces {
            match piece {
                Piece::Literal(bytes) => self.push_literal(bytes),
                slot => self.pieces.push(slot.clone()),
            }
        }
    }

    /// The template for a URL: its data slots (feeder columns, extracted
    /// values) are percent-encoded where a request target needs it.
    pub fn for_url(mut self) -> Template {
        for piece in &mut self.pieces {
            if let Piece::Slot(slot @ (Slot::Feed { .. } | Slot::Extract { .. })) = piece {
                *piece = Piece::UrlSlot(slot.clone());
            }
        }
        self
    }

    /// The template for a request path that does not begin with `/` (its
    /// URL put a slot right after the host): a `/` is written first unless
    /// the rendered path already starts with one.
    pub fn path_start(self) -> Template {
        let mut template = Template::default();
        match self.pieces.first() {
            Some(Piece::Literal(bytes)) if bytes.starts_with(b"/") => return self,
            Some(Piece::Literal(_)) | None => template.push_literal(b"/"),
            Some(_) => template.pieces.push(Piece::PathStart),
        }
        template.append(&self);
        template
    }

    pub(crate) fn push_literal(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let Some(Piece::Literal(last)) = self.pieces.last_mut() {
            last.extend_from_slice(bytes);
        } else {
            self.pieces.push(Piece::Literal(bytes.to_vec()));
        }
    }

    /// A constant's value (`--var`, `env.NAME`) folded into the literal
    /// text: in the URL percent-encoded as a feeder's value would be, once
    /// here at compile time, so `--var q='a b'` cannot break the request line.
    fn push_value(&mut self, field: &str, value: &[u8]) {
        if field != URL_FIELD || !value.iter().any(|&b| needs_encoding(b)) {
            self.push_literal(value);
            return;
        }
        let mut encoded = Vec::with_capacity(value.len() * 3);
        for &byte in value {
            if needs_encoding(byte) {
                encoded.extend_from_slice(&percent(byte));
            } else {
                encoded.push(byte);
            }
        }
        self.push_literal(&encoded);
    }

    fn push_slot_text(
        &mut self,
        field: &str,
        inner: &[u8],
        scope: &Scope,
    ) -> Result<(), TemplateError> {
        let text = String::from_utf8_lossy(inner);
        let mut words = text.split_whitespace();
        let name = words.next().unwrap_or("");
        let args: Vec<&str> = words.collect();
        let bad = |reason: &str| TemplateError::BadSlot {
            field: field.to_string(),
            slot: text.trim().to_string(),
            reason: reason.to_string(),
        };
        let no_args = |slot: Slot| {
            if args.is_empty() {
                Ok(slot)
            } else {
                Err(bad("takes no arguments"))
            }
        };
        let slot = match name {
            "seq" => no_args(Slot::Seq)?,
            "conn" => no_args(Slot::Conn)?,
            "thread_num" => no_args(Slot::ThreadNum)?,
            "iter" => no_args(Slot::Iter)?,
            "worker" => no_args(Slot::Worker)?,
            "agent" => no_args(Slot::Agent)?,
            "uuid" => no_args(Slot::Uuid)?,
            "now_ms" => no_args(Slot::NowMs)?,
            "now_iso" => no_args(Slot::NowIso)?,
            "rand_int" => {
                let [low, high] = args[..] else {
                    return Err(bad("expected rand_int LOW HIGH, e.g. rand_int 1 1000"));
                };
                let (Ok(low), Ok(high)) = (low.parse::<i64>(), high.parse::<i64>()) else {
                    return Err(bad("LOW and HIGH are integers"));
                };
                if low > high {
                    return Err(bad("LOW is greater than HIGH"));
                }
                Slot::RandInt { low, high }
            }
            "rand_str" => {
                let [len] = args[..] else {
                    return Err(bad("expected rand_str N, e.g. rand_str 16"));
                };
                match len.parse::<usize>() {
                    Ok(len) if (1..=1 << 20).contains(&len) => Slot::RandStr { len },
                    _ => return Err(bad("N is a length from 1 to 1048576")),
                }
            }
            env if env.starts_with("env.") => {
                if !args.is_empty() {
                    return Err(bad("takes no arguments"));
                }
                let var = &env[4..];
                let value = std::env::var_os(var).ok_or_else(|| TemplateError::MissingEnv {
                    field: field.to_string(),
                    name: var.to_string(),
                })?;
                self.push_value(field, value.as_encoded_bytes());
                return Ok(());
            }
            // `next` is a built-in only with an argument: a column or
            // value named `next` stays usable as `{{next}}`.
            "next" if args.len() == 1 && scope.lookup("next").is_none() => {
                match scope.lookup(args[0]) {
                    Some(Binding::Counter(counter))
                        if counter.spec.advance == crate::counter::Advance::Use =>
                    {
                        Slot::Next(counter.clone())
                    }
                    Some(Binding::Counter(_)) => {
                        return Err(bad(
                            "this counter advances at each iteration; {{next}} advances one with advance = \"use\"",
                        ))
                    }
                    _ => return Err(bad("NAME is not a counter of this group")),
                }
            }
            other => {
                if !args.is_empty() && scope.lookup(other).is_some() {
                    return Err(bad("a variable takes no arguments"));
                }
                match scope.lookup(other) {
                    Some(Binding::Const(value)) => {
                        self.push_value(field, value);
                        return Ok(());
                    }
                    Some(Binding::Feed { feeder, column }) => Slot::Feed {
                        feeder: *feeder,
                        column: *column,
                    },
                    Some(Binding::Extract { slot }) => Slot::Extract { slot: *slot },
                    Some(Binding::Counter(counter)) => Slot::Extract {
                        slot: counter.slot(),
                    },
                    None => {
                        return Err(TemplateError::Unknown {
                            field: field.to_string(),
                            name: text.trim().to_string(),
                            known: scope.known(),
                        })
                    }
                }
            }
        };
        self.pieces.push(Piece::Slot(slot));
        Ok(())
    }
}

/// After a piece was rendered past a [`Piece::PathStart`] at `at`: the
/// path's first byte is known, so a `/` goes in unless it is one. `end`:
/// the template is done (everything after the start rendered empty).
fn slash_unless_present(path_start: &mut Option<usize>, out: &mut Vec<u8>, end: bool) {
    let Some(at) = *path_start else { return };
    if out.len() == at && !end {
        return;
    }
    if out.get(at) != Some(&b'/') {
        out.insert(at, b'/');
    }
    *path_start = None;
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Writes a data slot's value percent-encoded for a URL, in place: the
/// value is written, then widened from its end (no second buffer).
fn write_url_slot(context: &mut RenderContext<'_>, slot: &Slot, out: &mut Vec<u8>) {
    let start = out.len();
    context.write_slot(slot, out);
    let unsafe_bytes = out[start..].iter().filter(|&&b| needs_encoding(b)).count();
    if unsafe_bytes == 0 {
        return;
    }
    let old_end = out.len();
    out.resize(old_end + 2 * unsafe_bytes, 0);
    let mut write = out.len();
    for read in (start..old_end).rev() {
        let byte = out[read];
        if needs_encoding(byte) {
            out[write - 3..write].copy_from_slice(&percent(byte));
            write -= 3;
        } else {
            out[write - 1] = byte;
            write -= 1;
        }
    }
}

/// The field name of a request target's template (`Template::compile("url", ...)`):
/// its constants are percent-encoded like its data slots.
pub(crate) const URL_FIELD: &str = "url";

/// `%XX` of `byte`.
fn percent(byte: u8) -> [u8; 3] {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    [
        b'%',
        HEX[usize::from(byte >> 4)],
        HEX[usize::from(byte & 0xF)],
    ]
}

/// Bytes a request target cannot carry raw (RFC 3986 allows the rest; `%`
/// is kept so that already-encoded data passes through).
fn needs_encoding(byte: u8) -> bool {
    byte <= b' '
        || byte >= 0x7F
        || matches!(
            byte,
            b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}' | b'#'
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::VarStore;

    fn scope() -> Scope {
        let mut scope = Scope::new();
        scope
            .add_feed_columns(0, &["user".to_string(), "pass".to_string()])
            .unwrap();
        scope.add_const("host", "example").unwrap();
        scope.add_extract("token").unwrap();
        scope
    }

    fn render(template: &Template, rows: &[&[Box<[u8]>]], store: &VarStore) -> String {
        render_into(template, rows, &mut store.clone())
    }

    fn render_into(template: &Template, rows: &[&[Box<[u8]>]], store: &mut VarStore) -> String {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut context = RenderContext {
            seq: 42,
            conn: 3,
            iter: 9,
            worker: 1,
            agent: 0,
            rows,
            vars: store,
            rng: &mut rng,
        };
        let mut out = Vec::new();
        template.render(&mut context, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn empty_and_plain_text_are_static() {
        let empty = Template::compile("url", b"", &scope()).unwrap();
        assert!(empty.is_static() && empty.is_empty());
        let plain = Template::compile("url", b"/a{b}c{", &scope()).unwrap();
        assert_eq!(plain.static_bytes().unwrap(), b"/a{b}c{");
        assert!(!plain.is_empty());
    }

    /// An unclosed `{{` is reported at its byte offset, counted past
    /// escaped braces and closed slots before it.
    #[test]
    fn an_unclosed_slot_is_reported_where_it_opens() {
        let at = |text: &[u8]| match Template::compile("url", text, &scope()) {
            Err(TemplateError::Unclosed { at, .. }) => at,
            other => panic!("{other:?}"),
        };
        assert_eq!(at(b"ab{{seq"), 2);
        assert_eq!(at(br"\{{a{{b"), 4);
        assert_eq!(at(b"{{seq}}x{{"), 8);
        assert_eq!(at(b"{{seq}}{{iter}}{{"), 15);
    }

    /// A path's template gets a `/` first unless its text starts with one;
    /// a slot first decides when rendered.
    #[test]
    fn a_path_start_adds_a_slash_only_when_missing() {
        let start = |text: &[u8]| {
            let t = Template::compile("url", text, &scope())
                .unwrap()
                .path_start();
            render(&t, &[], &VarStore::new(1))
        };
        assert_eq!(start(b"/a"), "/a");
        assert_eq!(start(b"a"), "/a");
        assert_eq!(start(b""), "/");
        assert_eq!(start(b"{{seq}}"), "/42");
    }

    /// `rand_int LOW HIGH` takes both ends: equal ones are one value.
    #[test]
    fn rand_int_with_equal_ends_is_that_value() {
        let t = Template::compile("url", b"{{rand_int 5 5}}", &scope()).unwrap();
        assert_eq!(render(&t, &[], &VarStore::new(1)), "5");
        assert!(Template::compile("url", b"{{rand_int 6 5}}", &scope()).is_err());
    }

    /// `next` is a built-in only with one argument and no column of that
    /// name: a feed column called `next` still reads as `{{next}}`.
    #[test]
    fn a_column_named_next_is_read_as_a_column() {
        let mut scope = Scope::new();
        scope.add_feed_columns(0, &["next".to_string()]).unwrap();
        let t = Template::compile("url", b"{{next}}", &scope).unwrap();
        let row: Vec<Box<[u8]>> = vec![b"row-value".to_vec().into()];
        assert_eq!(render(&t, &[&row], &VarStore::new(1)), "row-value");
        let mut counted = Scope::new();
        counted.add_feed_columns(0, &["next".to_string()]).unwrap();
        counted
            .add_counter(crate::CounterSpec {
                advance: crate::counter::Advance::Use,
                ..crate::CounterSpec::new("c", 1)
            })
            .unwrap();
        // With a column named `next`, `{{next c}}` is not the counter.
        assert!(Template::compile("url", b"{{next c}}", &counted).is_err());
    }

    #[test]
    fn constants_in_the_url_are_percent_encoded_once_at_compile_time() {
        // `--var q='a b'` in `/s?q={{q}}` must not send `GET /s?q=a b HTTP/1.1`.
        let mut scope = Scope::new();
        scope.add_const("q", "a b/é%41").unwrap();
        let url = Template::compile("url", b"/s?q={{q}}", &scope).unwrap();
        assert_eq!(url.static_bytes().unwrap(), b"/s?q=a%20b/%C3%A9%41");
        let header = Template::compile("header X-Q", b"{{q}}", &scope).unwrap();
        assert_eq!(header.static_bytes().unwrap(), "a b/é%41".as_bytes());
    }

    #[test]
    fn escaped_braces_and_constants_stay_static() {
        let t = Template::compile("body", br"\{{seq}} {{host}}", &scope()).unwrap();
        assert_eq!(t.static_bytes().unwrap(), b"{{seq}} example");
    }

    #[test]
    fn one_slot_alone_and_among_literals() {
        let store = VarStore::new(1);
        let t = Template::compile("url", b"{{seq}}", &scope()).unwrap();
        assert!(!t.is_static());
        assert_eq!(render(&t, &[], &store), "42");
        let t = Template::compile(
            "url",
            b"/i/{{seq}}/{{conn}}/{{iter}}/{{worker}}/{{agent}}/{{thread_num}}",
            &scope(),
        )
        .unwrap();
        assert_eq!(render(&t, &[], &store), "/i/42/3/9/1/0/4");
    }

    #[test]
    fn feed_columns_and_extracts() {
        let row: Vec<Box<[u8]>> = vec![b"ann".to_vec().into(), b"pw".to_vec().into()];
        let mut store = VarStore::new(1);
        store.set(0, b"tok");
        let t = Template::compile("body", b"{{user}}:{{pass}}:{{token}}", &scope()).unwrap();
        assert_eq!(render(&t, &[&row], &store), "ann:pw:tok");
    }

    #[test]
    fn random_builtins_have_their_shape() {
        let store = VarStore::new(0);
        let t = Template::compile(
            "b",
            b"{{uuid}}|{{rand_int 5 7}}|{{rand_str 12}}|{{now_ms}}|{{now_iso}}",
            &scope(),
        )
        .unwrap();
        let text = render(&t, &[], &store);
        let parts: Vec<&str> = text.split('|').collect();
        assert_eq!(parts[0].len(), 36);
        assert_eq!(
            parts[0].as_bytes()[14],
            b'4',
            "a version 4 UUID: {}",
            parts[0]
        );
        assert!((5..=7).contains(&parts[1].parse::<i64>().unwrap()));
        assert!(parts[2].len() == 12 && parts[2].bytes().all(|b| b.is_ascii_alphanumeric()));
        assert!(parts[3].parse::<u64>().unwrap() > 1_600_000_000_000);
        assert_eq!(
            parts[4].len(),
            "2026-12-01T10:45:22.123Z".len(),
            "{}",
            parts[4]
        );
        assert!(parts[4].ends_with('Z') && parts[4].as_bytes()[10] == b'T');
    }

    #[test]
    fn env_is_read_at_compile_time() {
        let t = Template::compile("h", b"{{env.PATH}}", &scope()).unwrap();
        assert!(t.is_static());
        let err =
            Template::compile("h", b"{{env.STAMPEDE_SURELY_UNSET_VAR}}", &scope()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "h: environment variable STAMPEDE_SURELY_UNSET_VAR is not set"
        );
    }

    #[test]
    fn unknown_variable_names_itself_and_the_known_ones() {
        let mut scope = Scope::new();
        scope
            .add_feed_columns(0, &["user".to_string(), "pass".to_string()])
            .unwrap();
        let err = Template::compile("url", b"/u/{{usr}}", &scope).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("url: unknown variable {{usr}}; known: seq, conn,"),
            "{text}"
        );
        assert!(text.ends_with(", user, pass"), "{text}");
    }

    /// IterationCounter.java, execute: each evaluation of `${__counter}`
    /// adds 1 and gives the new value (from 1), per thread; `{{NAME}}`
    /// reads what the user last got, as `${NAME}` reads the stored value.
    #[test]
    fn next_advances_a_use_counter_and_the_name_reads_it() {
        let mut scope = scope();
        let spec = crate::CounterSpec {
            advance: crate::Advance::Use,
            ..crate::CounterSpec::new("c", 1)
        };
        scope.add_counter(spec).unwrap();
        scope
            .add_counter(crate::CounterSpec::new("per_iter", 0))
            .unwrap();
        let mut store = VarStore::new(scope.extract_slots());
        let t = Template::compile("url", b"/{{next c}}/{{c}}", &scope).unwrap();
        assert!(!t.is_static());
        let read = Template::compile("body", b"{{c}}", &scope).unwrap();
        assert_eq!(render_into(&read, &[], &mut store), "", "before the first");
        assert_eq!(render_into(&t, &[], &mut store), "/1/1");
        assert_eq!(render_into(&t, &[], &mut store), "/2/2");
        assert_eq!(render_into(&read, &[], &mut store), "2");
        let mut other_user = VarStore::new(scope.extract_slots());
        assert_eq!(render_into(&t, &[], &mut other_user), "/1/1");
        let err = Template::compile("url", b"{{next per_iter}}", &scope).unwrap_err();
        assert!(
            err.to_string().contains("advances at each iteration"),
            "{err}"
        );
        let err = Template::compile("url", b"{{next token}}", &scope).unwrap_err();
        assert!(err.to_string().contains("not a counter"), "{err}");
    }

    #[test]
    fn malformed_slots() {
        let s = scope();
        assert!(matches!(
            Template::compile("u", b"/{{seq", &s),
            Err(TemplateError::Unclosed { at: 1, .. })
        ));
        assert!(Template::compile("u", b"{{rand_int 5}}", &s).is_err());
        assert!(Template::compile("u", b"{{rand_int 9 1}}", &s).is_err());
        assert!(Template::compile("u", b"{{rand_str 0}}", &s).is_err());
        assert!(Template::compile("u", b"{{seq 1}}", &s).is_err());
        assert!(Template::compile("u", b"{{}}", &s).is_err());
    }
}
