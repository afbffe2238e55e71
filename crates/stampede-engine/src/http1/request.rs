//! The plan's requests serialized once, before the run; every send writes
//! these same bytes. The rules are the template's
//! ([`RequestTemplate::encode_fixed`], stampede-workload's
//! template/request.rs): one rulebook for fixed and templated requests.

use stampede_plan::{Plan, RequestSpec, Target};
use stampede_workload::RequestTemplate;

/// The request bytes for `plan`: request line, default headers (Host,
/// User-Agent, Accept, Connection, Content-Length) unless the user gave one of
/// the same name, the user's headers in order, then the body.
pub(crate) fn encode_request(plan: &Plan) -> Vec<u8> {
    encode_request_to(plan, &plan.target, &plan.request)
}

/// The bytes of one request of the plan's mix (`--targets`): the plan gives
/// the connection settings (keep-alive, proxy), the entry the request.
pub fn encode_request_to(plan: &Plan, destination: &Target, request: &RequestSpec) -> Vec<u8> {
    RequestTemplate::encode_fixed(plan, destination, request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_plan::{parse_header, RequestSpec, Target};

    fn plan(method: &str, headers: &[&str], body: &str, keepalive: bool, http10: bool) -> Plan {
        Plan {
            request: RequestSpec {
                method: method.into(),
                headers: headers.iter().map(|h| parse_header(h).unwrap()).collect(),
                body: body.as_bytes().to_vec(),
                http10,
            },
            keepalive,
            ..Plan::minimal(Target::parse("http://127.0.0.1:3000/echo?x=1").unwrap())
        }
    }

    fn text(plan: &Plan) -> String {
        String::from_utf8(encode_request(plan)).unwrap()
    }

    const UA: &str = concat!("User-Agent: stampede/", env!("CARGO_PKG_VERSION"), "\r\n");

    /// The exact bytes of each kind of fixed request, written against the
    /// encoder as it was before the template's rulebook took its place.
    #[test]
    fn golden_bytes_of_fixed_requests() {
        let get = text(&plan("GET", &[], "", true, false));
        assert_eq!(
            get,
            format!("GET /echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n{UA}Accept: */*\r\n\r\n")
        );
        let post = text(&plan(
            "POST",
            &["Content-Type: application/json", "X-A: 1"],
            "{\"k\":1}",
            false,
            false,
        ));
        assert_eq!(
            post,
            format!(
                "POST /echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n{UA}Accept: */*\r\n\
                 Connection: close\r\nContent-Length: 7\r\nContent-Type: application/json\r\n\
                 X-A: 1\r\n\r\n{{\"k\":1}}"
            )
        );
        let head = text(&plan("HEAD", &[], "", true, false));
        assert_eq!(
            head,
            format!("HEAD /echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n{UA}Accept: */*\r\n\r\n")
        );
        // An empty PUT still says its length; HTTP/1.0 asks to keep alive.
        let put = text(&plan("PUT", &[], "", true, true));
        assert_eq!(
            put,
            format!(
                "PUT /echo?x=1 HTTP/1.0\r\nHost: 127.0.0.1:3000\r\n{UA}Accept: */*\r\n\
                 Connection: keep-alive\r\nContent-Length: 0\r\n\r\n"
            )
        );
        // A `--targets` entry: its own destination and request, the plan's
        // connection settings (here no keep-alive).
        let p = plan("GET", &[], "", false, false);
        let entry = stampede_plan::MixEntry {
            target: Target::parse("http://[::1]:8080/items/7?a=b").unwrap(),
            request: RequestSpec {
                method: "DELETE".into(),
                headers: vec![parse_header("X-Token: t").unwrap()],
                body: b"{{seq}}".to_vec(),
                http10: false,
            },
            weight: 3,
        };
        assert_eq!(
            String::from_utf8(encode_request_to(&p, &entry.target, &entry.request)).unwrap(),
            format!(
                "DELETE /items/7?a=b HTTP/1.1\r\nHost: [::1]:8080\r\n{UA}Accept: */*\r\n\
                 Connection: close\r\nContent-Length: 7\r\nX-Token: t\r\n\r\n{{{{seq}}}}"
            )
        );
        // Through a plain proxy: the absolute form; https:// is tunnelled.
        let mut p = plan("GET", &[], "", true, false);
        p.transport.proxy = Some(stampede_plan::ProxySpec::parse("127.0.0.1:3128").unwrap());
        assert_eq!(
            text(&p),
            format!(
                "GET http://127.0.0.1:3000/echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n{UA}\
                 Accept: */*\r\n\r\n"
            )
        );
        let tls = Target::parse("https://example.test/s").unwrap();
        assert_eq!(
            String::from_utf8(encode_request_to(&p, &tls, &p.request)).unwrap(),
            format!("GET /s HTTP/1.1\r\nHost: example.test\r\n{UA}Accept: */*\r\n\r\n")
        );
        // A custom Host and every default overridden: the user's names, in
        // the user's order and spelling, and no default of the same name.
        let custom = text(&plan(
            "POST",
            &[
                "host: example",
                "user-agent: ab",
                "ACCEPT: text/html",
                "Connection: upgrade",
                "Content-Length: 3",
            ],
            "abc",
            false,
            false,
        ));
        assert_eq!(
            custom,
            "POST /echo?x=1 HTTP/1.1\r\nhost: example\r\nuser-agent: ab\r\nACCEPT: text/html\r\n\
             Connection: upgrade\r\nContent-Length: 3\r\n\r\nabc"
        );
        let chunked = text(&plan(
            "POST",
            &["Transfer-Encoding: chunked"],
            "3\r\nabc\r\n0\r\n\r\n",
            true,
            false,
        ));
        assert_eq!(
            chunked,
            format!(
                "POST /echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n{UA}Accept: */*\r\n\
                 Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
            )
        );
    }

    #[test]
    fn get_with_defaults() {
        let request = text(&plan("GET", &[], "", true, false));
        assert!(request.starts_with("GET /echo?x=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n"));
        assert!(request.contains("User-Agent: stampede/"));
        assert!(!request.contains("Connection"));
        assert!(!request.contains("Content-Length"));
        assert!(request.ends_with("\r\n\r\n"));
    }

    #[test]
    fn user_headers_replace_defaults() {
        let request = text(&plan(
            "GET",
            &["host: example", "User-Agent: ab"],
            "",
            true,
            false,
        ));
        assert!(!request.contains("Host: 127.0.0.1"));
        assert!(request.contains("host: example\r\n"));
        assert_eq!(request.matches("User-Agent").count(), 1);
    }

    #[test]
    fn absolute_form_through_a_proxy() {
        let mut p = plan("GET", &[], "", true, false);
        p.transport.proxy = Some(stampede_plan::ProxySpec::parse("127.0.0.1:3128").unwrap());
        assert!(text(&p).starts_with("GET http://127.0.0.1:3000/echo?x=1 HTTP/1.1\r\n"));
    }

    #[test]
    fn post_body_and_connection_modes() {
        let request = text(&plan(
            "POST",
            &["Content-Type: application/json"],
            "{\"k\":1}",
            false,
            false,
        ));
        assert!(request.contains("Connection: close\r\n"));
        assert!(request.contains("Content-Length: 7\r\n"));
        assert!(request.ends_with("\r\n\r\n{\"k\":1}"));
        let request = text(&plan("GET", &[], "", true, true));
        assert!(request.starts_with("GET /echo?x=1 HTTP/1.0\r\n"));
        assert!(request.contains("Connection: keep-alive\r\n"));
    }
}
