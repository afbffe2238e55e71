//! Serializes the plan's request once; every send writes these same bytes.

use stampede_plan::{Plan, RequestSpec, Scheme, Target};

/// The request bytes for `plan`: request line, default headers (Host,
/// User-Agent, Accept, Connection, Content-Length) unless the user gave one of
/// the same name, the user's headers in order, then the body.
pub fn encode_request(plan: &Plan) -> Vec<u8> {
    encode_request_to(plan, &plan.target, &plan.request)
}

/// The bytes of one request of the plan's mix (`--targets`): the plan gives
/// the connection settings (keep-alive, proxy), the entry the request.
pub fn encode_request_to(plan: &Plan, destination: &Target, request: &RequestSpec) -> Vec<u8> {
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
    // Through a plain proxy an http:// request names its whole URL
    // (absolute form); https:// goes through a CONNECT tunnel instead.
    let target = if plan.transport.proxy.is_some() && destination.scheme == Scheme::Http {
        format!(
            "http://{}{}",
            destination.authority, destination.path_and_query
        )
    } else {
        destination.path_and_query.clone()
    };
    let mut head = format!("{} {target} {version}\r\n", request.method);
    let mut default = |name: &str, value: &str| {
        if !given(name) {
            head.push_str(name);
            head.push_str(": ");
            head.push_str(value);
            head.push_str("\r\n");
        }
    };
    default("Host", &destination.authority);
    default(
        "User-Agent",
        concat!("stampede/", env!("CARGO_PKG_VERSION")),
    );
    default("Accept", "*/*");
    match (plan.keepalive, request.http10) {
        (false, false) => default("Connection", "close"),
        (true, true) => default("Connection", "keep-alive"),
        _ => {}
    }
    let method_carries_body = matches!(request.method.as_str(), "POST" | "PUT" | "PATCH");
    if (!request.body.is_empty() || method_carries_body) && !given("Transfer-Encoding") {
        default("Content-Length", &request.body.len().to_string());
    }
    for header in &request.headers {
        head.push_str(&header.name);
        head.push_str(": ");
        head.push_str(&header.value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&request.body);
    bytes
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
