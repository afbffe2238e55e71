//! The one rulebook of an HTTP/1.x request's bytes: request line (the
//! absolute form through a plain proxy), default headers (Host,
//! User-Agent, Accept, Connection, Content-Length) unless the user gave one
//! of the same name, the user's headers in order, then the body. A
//! templated request compiles its fields as templates
//! ([`RequestTemplate::from_plan`]); a fixed one takes them as they are
//! ([`RequestTemplate::encode_fixed`], the engine's pre-encoded bytes,
//! rendered once at plan time), so both follow the same rules.

use super::{RenderContext, Template, TemplateError};
use crate::scope::Scope;
use stampede_plan::{Plan, RequestSpec, Scheme, Target};
use std::convert::Infallible;

/// Where the Content-Length value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Length {
    /// Known at compile time (folded into `head`) or not sent.
    Fixed,
    /// The body has slots: measured after rendering it.
    Measured,
}

/// The compiled request: `head` up to where Content-Length goes, `tail` (the
/// user's headers and the blank line), then the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestTemplate {
    head: Template,
    tail: Template,
    body: Template,
    length: Length,
}

impl RequestTemplate {
    /// Compiles the request of `plan` to `destination` (whose
    /// `path_and_query` may hold slots, see [`parse_url_template`](super::parse_url_template)),
    /// with header values and the body as templates.
    pub fn from_plan(
        plan: &Plan,
        destination: &Target,
        request: &RequestSpec,
        scope: &Scope,
    ) -> Result<RequestTemplate, TemplateError> {
        Self::lay_out(plan, destination, request, |field, text| {
            Template::compile(field, text, scope)
        })
    }

    /// The bytes of a fixed request (no `{{...}}` is read: every field is
    /// sent as written), by the same rules as a templated one: what the
    /// engine pre-encodes once for requests without a workload.
    pub fn encode_fixed(plan: &Plan, destination: &Target, request: &RequestSpec) -> Vec<u8> {
        let literal = |_: &str, text: &[u8]| Ok::<_, Infallible>(Template::literal(text));
        let Ok(fixed) = Self::lay_out(plan, destination, request, literal);
        let mut bytes = Vec::new();
        for part in [&fixed.head, &fixed.tail, &fixed.body] {
            part.append_literals(&mut bytes);
        }
        bytes
    }

    /// The request laid out by the rules, each field (`url`, `header NAME`,
    /// `body`) made a template by `field`.
    fn lay_out<E>(
        plan: &Plan,
        destination: &Target,
        request: &RequestSpec,
        field: impl Fn(&str, &[u8]) -> Result<Template, E>,
    ) -> Result<RequestTemplate, E> {
        let given = |name: &str| {
            request
                .headers
                .iter()
                .any(|h| h.name.eq_ignore_ascii_case(name))
        };
        let version = if request.http10 {
            "HTTP/1.0"
        } else {
            "HTTP/1.1"
        };
        let mut path = field(super::URL_FIELD, destination.path_and_query.as_bytes())?.for_url();
        // `http://h{{path}}`: the slot's value decides whether a `/` is needed.
        if destination.path_and_query.starts_with("{{") {
            path = path.path_start();
        }
        let mut head = Template::literal(request.method.as_bytes());
        head.push_literal(b" ");
        // Through a plain proxy an http:// request names its whole URL.
        if plan.transport.proxy.is_some() && destination.scheme == Scheme::Http {
            head.push_literal(format!("http://{}", destination.authority).as_bytes());
        }
        head.append(&path);
        head.push_literal(format!(" {version}\r\n").as_bytes());
        let default = |head: &mut Template, name: &str, value: &str| {
            if !given(name) {
                head.push_literal(format!("{name}: {value}\r\n").as_bytes());
            }
        };
        default(&mut head, "Host", &destination.authority);
        default(
            &mut head,
            "User-Agent",
            concat!("stampede/", env!("CARGO_PKG_VERSION")),
        );
        default(&mut head, "Accept", "*/*");
        match (plan.keepalive, request.http10) {
            (false, false) => default(&mut head, "Connection", "close"),
            (true, true) => default(&mut head, "Connection", "keep-alive"),
            _ => {}
        }
        let body = field("body", &request.body)?;
        let method_carries_body = matches!(request.method.as_str(), "POST" | "PUT" | "PATCH");
        let wants_length = (!request.body.is_empty() || method_carries_body)
            && !given("Transfer-Encoding")
            && !given("Content-Length");
        let length = match body.static_bytes() {
            Some(bytes) if wants_length => {
                default(&mut head, "Content-Length", &bytes.len().to_string());
                Length::Fixed
            }
            None if wants_length => Length::Measured,
            _ => Length::Fixed,
        };
        let mut tail = Template::default();
        for header in &request.headers {
            let name = format!("header {}", header.name);
            tail.push_literal(header.name.as_bytes());
            tail.push_literal(b": ");
            tail.append(&field(&name, header.value.as_bytes())?);
            tail.push_literal(b"\r\n");
        }
        tail.push_literal(b"\r\n");
        Ok(RequestTemplate {
            head,
            tail,
            body,
            length,
        })
    }

    /// True when nothing varies: the engine keeps [`static_bytes`](Self::static_bytes) pre-encoded.
    pub fn is_static(&self) -> bool {
        self.head.is_static() && self.tail.is_static() && self.body.is_static()
    }

    /// The request's fixed bytes, when [`is_static`](Self::is_static).
    pub fn static_bytes(&self) -> Option<Vec<u8>> {
        let mut bytes = self.head.static_bytes()?;
        bytes.extend(self.tail.static_bytes()?);
        bytes.extend(self.body.static_bytes()?);
        Some(bytes)
    }

    /// Appends the request to `out`. With a templated body the
    /// Content-Length header is written after the body is measured and
    /// rotated into place, so nothing is rendered twice or allocated.
    pub fn render(&self, context: &mut RenderContext<'_>, out: &mut Vec<u8>) {
        self.head.render_head(context, out);
        let length_at = out.len();
        self.tail.render_head(context, out);
        let body_at = out.len();
        self.body.render(context, out);
        if self.length == Length::Measured {
            let body_len = out.len() - body_at;
            let mut digits = itoa::Buffer::new();
            let digits = digits.format(body_len).as_bytes();
            let header_len = b"Content-Length: ".len() + digits.len() + 2;
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(digits);
            out.extend_from_slice(b"\r\n");
            out[length_at..].rotate_right(header_len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::VarStore;
    use stampede_plan::parse_header;

    fn plan(keepalive: bool) -> Plan {
        Plan {
            keepalive,
            ..Plan::minimal(Target::parse("http://127.0.0.1:3000/echo?x=1").unwrap())
        }
    }

    fn request(method: &str, headers: &[&str], body: &str, http10: bool) -> RequestSpec {
        RequestSpec {
            method: method.into(),
            headers: headers.iter().map(|h| parse_header(h).unwrap()).collect(),
            body: body.as_bytes().to_vec(),
            http10,
        }
    }

    fn scope() -> Scope {
        let mut scope = Scope::new();
        scope.add_feed_columns(0, &["name".to_string()]).unwrap();
        scope
    }

    fn render(template: &RequestTemplate, seq: u64) -> String {
        let row: Vec<Box<[u8]>> = vec![b"ann".to_vec().into()];
        let rows: [&[Box<[u8]>]; 1] = [&row];
        let mut store = VarStore::new(0);
        let mut rng = fastrand::Rng::with_seed(1);
        let mut context = RenderContext {
            seq,
            conn: 0,
            iter: 0,
            worker: 0,
            agent: 0,
            rows: &rows,
            vars: &mut store,
            rng: &mut rng,
        };
        let mut out = Vec::new();
        template.render(&mut context, &mut out);
        String::from_utf8(out).unwrap()
    }

    const UA: &str = concat!("User-Agent: stampede/", env!("CARGO_PKG_VERSION"), "\r\n");

    /// The engine's fixed encoding is the static template's bytes; a
    /// request varies when any of its parts does (the head, a header, the
    /// body).
    #[test]
    fn fixed_encoding_and_what_varies() {
        let p = plan(true);
        let get = request("GET", &["X-A: 1"], "", false);
        let t = RequestTemplate::from_plan(&p, &p.target, &get, &scope()).unwrap();
        let fixed = RequestTemplate::encode_fixed(&p, &p.target, &get);
        assert_eq!(Some(fixed), t.static_bytes());
        for (header, body) in [("X-A: {{name}}", ""), ("X-A: 1", "{{name}}")] {
            let req = request("POST", &[header], body, false);
            let t = RequestTemplate::from_plan(&p, &p.target, &req, &scope()).unwrap();
            assert!(!t.is_static(), "{header} / {body}");
        }
    }

    /// A templated body with the user's own Transfer-Encoding or
    /// Content-Length gets no measured Content-Length of stampede's.
    #[test]
    fn a_given_length_or_encoding_is_not_measured_again() {
        let p = plan(true);
        for header in ["Transfer-Encoding: chunked", "Content-Length: 3"] {
            let req = request("POST", &[header], "{{name}}", false);
            let t = RequestTemplate::from_plan(&p, &p.target, &req, &scope()).unwrap();
            let text = render(&t, 0);
            assert_eq!(
                text.matches("Content-Length").count(),
                header.matches("Content-Length").count(),
                "{text}"
            );
        }
    }

    #[test]
    fn static_get_is_the_engine_encoding() {
        let p = plan(true);
        let t =
            RequestTemplate::from_plan(&p, &p.target, &request("GET", &[], "", false), &scope())
                .unwrap();
        assert!(t.is_static());
        let expected =
            format!("GET /echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n{UA}Accept: */*\r\n\r\n");
        assert_eq!(
            String::from_utf8(t.static_bytes().unwrap()).unwrap(),
            expected
        );
        assert_eq!(render(&t, 0), expected);
    }

    #[test]
    fn static_post_close_and_http10_keepalive_match() {
        let p = plan(false);
        let req = request(
            "POST",
            &["Content-Type: application/json"],
            "{\"k\":1}",
            false,
        );
        let t = RequestTemplate::from_plan(&p, &p.target, &req, &scope()).unwrap();
        let expected = format!(
            "POST /echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n{UA}Accept: */*\r\nConnection: close\r\nContent-Length: 7\r\nContent-Type: application/json\r\n\r\n{{\"k\":1}}"
        );
        assert_eq!(render(&t, 0), expected);
        let p = plan(true);
        let t = RequestTemplate::from_plan(
            &p,
            &p.target,
            &request("GET", &["host: example", "User-Agent: ab"], "", true),
            &scope(),
        )
        .unwrap();
        assert_eq!(
            render(&t, 0),
            "GET /echo?x=1 HTTP/1.0\r\nAccept: */*\r\nConnection: keep-alive\r\nhost: example\r\nUser-Agent: ab\r\n\r\n"
        );
        // An empty POST still says Content-Length: 0.
        let t =
            RequestTemplate::from_plan(&p, &p.target, &request("POST", &[], "", false), &scope())
                .unwrap();
        assert!(render(&t, 0).ends_with("Content-Length: 0\r\n\r\n"));
    }

    #[test]
    fn absolute_form_through_a_proxy() {
        let mut p = plan(true);
        p.transport.proxy = Some(stampede_plan::ProxySpec::parse("127.0.0.1:3128").unwrap());
        let t =
            RequestTemplate::from_plan(&p, &p.target, &request("GET", &[], "", false), &scope())
                .unwrap();
        assert!(render(&t, 0).starts_with("GET http://127.0.0.1:3000/echo?x=1 HTTP/1.1\r\n"));
    }

    #[test]
    fn templated_path_header_and_body_measure_the_length() {
        let p = plan(true);
        let mut target = p.target.clone();
        target.path_and_query = "/item/{{seq}}".into();
        let req = request(
            "POST",
            &["X-User: {{name}}"],
            "{\"n\":{{seq}},\"u\":\"{{name}}\"}",
            false,
        );
        let t = RequestTemplate::from_plan(&p, &target, &req, &scope()).unwrap();
        assert!(!t.is_static());
        assert_eq!(t.static_bytes(), None);
        let text = render(&t, 12345);
        assert_eq!(
            text,
            format!("POST /item/12345 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n{UA}Accept: */*\r\nContent-Length: 21\r\nX-User: ann\r\n\r\n{{\"n\":12345,\"u\":\"ann\"}}")
        );
        assert_eq!(text.split("\r\n\r\n").nth(1).unwrap().len(), 21);
    }

    #[test]
    fn line_breaks_in_data_cannot_inject_headers() {
        let p = plan(true);
        let mut target = p.target.clone();
        target.path_and_query = "/{{name}}".into();
        let req = request("POST", &["X-User: {{name}}"], "{{name}}", false);
        let t = RequestTemplate::from_plan(&p, &target, &req, &scope()).unwrap();
        let row: Vec<Box<[u8]>> = vec![b"a\r\nX-Evil: 1".to_vec().into()];
        let rows: [&[Box<[u8]>]; 1] = [&row];
        let mut store = VarStore::new(0);
        let mut rng = fastrand::Rng::with_seed(1);
        let mut context = RenderContext {
            seq: 0,
            conn: 0,
            iter: 0,
            worker: 0,
            agent: 0,
            rows: &rows,
            vars: &mut store,
            rng: &mut rng,
        };
        let mut out = Vec::new();
        t.render(&mut context, &mut out);
        let text = String::from_utf8(out).unwrap();
        // In the URL data is percent-encoded (a space would end the target).
        assert!(
            text.starts_with("POST /a%0D%0AX-Evil:%201 HTTP/1.1\r\n"),
            "{text}"
        );
        assert!(text.contains("X-User: a  X-Evil: 1\r\n"), "{text}");
        // The body is data, kept as it is.
        assert!(text.ends_with("\r\n\r\na\r\nX-Evil: 1"), "{text}");
    }

    #[test]
    fn a_path_from_a_slot_gets_one_leading_slash() {
        // JMeter's HTTPSamplerBase.getUrl adds `/` only to a path without
        // one, after `${path}` is substituted: `/p1` and `p1` both request `/p1`.
        let p = plan(true);
        for (url, row, expected) in [
            ("http://h{{name}}", "/p1", "GET /p1 HTTP/1.1\r\n"),
            ("http://h{{name}}", "p1", "GET /p1 HTTP/1.1\r\n"),
            ("http://h{{name}}", "", "GET / HTTP/1.1\r\n"),
            ("http://h{{name}}?q=1", "", "GET /?q=1 HTTP/1.1\r\n"),
            ("http://h{{name}}{{seq}}", "", "GET /7 HTTP/1.1\r\n"),
            ("http://h{{name}}/x", "/p", "GET /p/x HTTP/1.1\r\n"),
            ("http://h{{name}}/x", "", "GET /x HTTP/1.1\r\n"),
            ("http://h{{name}}{{seq}}", "/", "GET /7 HTTP/1.1\r\n"),
        ] {
            let target = crate::template::parse_url_template(url).unwrap();
            let t =
                RequestTemplate::from_plan(&p, &target, &request("GET", &[], "", false), &scope())
                    .unwrap();
            let row: Vec<Box<[u8]>> = vec![row.as_bytes().to_vec().into()];
            let rows: [&[Box<[u8]>]; 1] = [&row];
            let mut store = VarStore::new(0);
            let mut rng = fastrand::Rng::with_seed(1);
            let mut context = RenderContext {
                seq: 7,
                conn: 0,
                iter: 0,
                worker: 0,
                agent: 0,
                rows: &rows,
                vars: &mut store,
                rng: &mut rng,
            };
            let mut out = Vec::new();
            t.render(&mut context, &mut out);
            let text = String::from_utf8(out).unwrap();
            assert!(text.starts_with(expected), "{url} with {row:?}: {text}");
            assert!(text.contains("\r\nHost: h\r\n"), "{text}");
        }
    }

    #[test]
    fn header_errors_name_the_header() {
        let p = plan(true);
        let req = request("GET", &["Authorization: Bearer {{tok}}"], "", false);
        let err = RequestTemplate::from_plan(&p, &p.target, &req, &scope()).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("header Authorization: unknown variable {{tok}}"));
    }

    #[test]
    fn data_in_the_url_is_percent_encoded_and_percent_is_kept() {
        let p = plan(true);
        let mut target = p.target.clone();
        target.path_and_query = "/q?name={{name}}&n={{seq}}".into();
        let t = RequestTemplate::from_plan(&p, &target, &request("GET", &[], "", false), &scope())
            .unwrap();
        let row: Vec<Box<[u8]>> = vec![b"J\xc3\xbcrgen M%C3%BCller <x>#1".to_vec().into()];
        let rows: [&[Box<[u8]>]; 1] = [&row];
        let mut store = VarStore::new(0);
        let mut rng = fastrand::Rng::with_seed(1);
        let mut context = RenderContext {
            seq: 7,
            conn: 0,
            iter: 0,
            worker: 0,
            agent: 0,
            rows: &rows,
            vars: &mut store,
            rng: &mut rng,
        };
        let mut out = Vec::new();
        t.render(&mut context, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with(
                "GET /q?name=J%C3%BCrgen%20M%C3%BCller%20%3Cx%3E%231&n=7 HTTP/1.1\r\n"
            ),
            "{text}"
        );
    }
}
