//! A request template without slots renders exactly the bytes the engine
//! pre-encodes for a fixed request (the same rulebook, its fields taken as
//! written rather than compiled), across methods, default-header
//! overrides, keep-alive, HTTP/1.0, bodies and the proxy's absolute form;
//! the fixed bytes themselves are pinned by http1/request.rs's golden test.

use stampede_engine::http1::encode_request_to;
use stampede_plan::{parse_header, Plan, ProxySpec, RequestSpec, Target};
use stampede_workload::{RenderContext, RequestTemplate, Scope, VarStore};

fn plan(url: &str, keepalive: bool, proxy: bool) -> Plan {
    let mut plan = Plan::minimal(Target::parse(url).unwrap());
    plan.keepalive = keepalive;
    if proxy {
        plan.transport.proxy = Some(ProxySpec::parse("127.0.0.1:3128").unwrap());
    }
    plan
}

fn rendered(template: &RequestTemplate) -> Vec<u8> {
    let mut store = VarStore::new(0);
    let mut rng = fastrand::Rng::with_seed(1);
    let mut context = RenderContext {
        seq: 0,
        conn: 0,
        iter: 0,
        worker: 0,
        agent: 0,
        rows: &[],
        vars: &mut store,
        rng: &mut rng,
    };
    let mut out = Vec::new();
    template.render(&mut context, &mut out);
    out
}

#[test]
fn static_templates_match_the_engine_encoding() {
    let header_sets: [&[&str]; 5] = [
        &[],
        &["Content-Type: application/json"],
        &["host: example", "User-Agent: ab", "accept: text/html"],
        &["Connection: upgrade", "Content-Length: 3"],
        &["Transfer-Encoding: chunked", "X-A: 1", "X-B: {not a slot}"],
    ];
    let mut cases = 0;
    for url in [
        "http://127.0.0.1:3000/echo?x=1",
        "https://[::1]/",
        "localhost:8080",
    ] {
        for keepalive in [true, false] {
            for proxy in [false, true] {
                for http10 in [false, true] {
                    for method in ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"] {
                        for body in ["", "{\"k\":1}", "\\{{seq}}"] {
                            for headers in header_sets {
                                let plan = plan(url, keepalive, proxy);
                                let request = RequestSpec {
                                    method: method.into(),
                                    headers: headers
                                        .iter()
                                        .map(|h| parse_header(h).unwrap())
                                        .collect(),
                                    body: body.as_bytes().to_vec(),
                                    http10,
                                };
                                let template = RequestTemplate::from_plan(
                                    &plan,
                                    &plan.target,
                                    &request,
                                    &Scope::new(),
                                )
                                .unwrap();
                                // `\{{` is the template's escape: the engine sees the unescaped body.
                                let engine_request = RequestSpec {
                                    body: body.replace("\\{{", "{{").into_bytes(),
                                    ..request.clone()
                                };
                                let expected =
                                    encode_request_to(&plan, &plan.target, &engine_request);
                                assert!(template.is_static());
                                assert_eq!(
                                    String::from_utf8_lossy(&template.static_bytes().unwrap()),
                                    String::from_utf8_lossy(&expected),
                                    "{url} {method} {headers:?} {body} keepalive={keepalive} proxy={proxy} http10={http10}"
                                );
                                assert_eq!(rendered(&template), expected);
                                cases += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert_eq!(cases, 3 * 2 * 2 * 2 * 6 * 3 * 5);
}

#[test]
fn templated_requests_match_the_engine_encoding_of_their_values() {
    for (keepalive, proxy, method) in [
        (true, false, "POST"),
        (false, true, "PUT"),
        (true, true, "GET"),
    ] {
        let plan = plan("http://127.0.0.1:3000/", keepalive, proxy);
        let mut target = plan.target.clone();
        target.path_and_query = "/item/{{seq}}?c={{conn}}".into();
        let request = RequestSpec {
            method: method.into(),
            headers: vec![parse_header("X-Seq: {{seq}}").unwrap()],
            body: b"{\"n\":{{seq}}}".to_vec(),
            http10: false,
        };
        let template = RequestTemplate::from_plan(&plan, &target, &request, &Scope::new()).unwrap();
        assert!(!template.is_static());
        let mut resolved_target = plan.target.clone();
        resolved_target.path_and_query = "/item/0?c=0".into();
        let resolved = RequestSpec {
            headers: vec![parse_header("X-Seq: 0").unwrap()],
            body: b"{\"n\":0}".to_vec(),
            ..request.clone()
        };
        assert_eq!(
            String::from_utf8_lossy(&rendered(&template)),
            String::from_utf8_lossy(&encode_request_to(&plan, &resolved_target, &resolved))
        );
    }
}
