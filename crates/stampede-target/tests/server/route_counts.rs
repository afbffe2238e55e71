//! `serve --metrics`' counters by route: each request is counted under the
//! route that answered it (routes.rs's dispatch names it), with a route
//! prefix and static files.

use crate::common::*;

#[test]
fn each_request_counts_under_the_route_that_answered_it() {
    let root = std::env::temp_dir().join(format!("stampede-route-counts-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.txt"), b"file\n").unwrap();
    let mut cfg = small();
    cfg.route_prefix = "_t/".into();
    cfg.root = Some(root.clone());
    cfg.count_routes = true;
    let h = start(cfg);
    let a = h.local_addr();
    assert_eq!(get(a, "GET /_t/cpu/10 HTTP/1.1\r\n\r\n").status, 200);
    assert_eq!(get(a, "GET /_t/delay/x HTTP/1.1\r\n\r\n").status, 400);
    assert_eq!(get(a, "POST /_t/bytes/1 HTTP/1.1\r\n\r\n").status, 405);
    assert_eq!(get(a, "GET /_t/gzip/10 HTTP/1.1\r\n\r\n").status, 200);
    assert_eq!(get(a, "GET /a.txt HTTP/1.1\r\n\r\n").status, 200);
    // Not a test route: the files answer, so the files count it.
    assert_eq!(get(a, "GET /cpu/10 HTTP/1.1\r\n\r\n").status, 404);
    let r = get(a, "GET /_t/stats HTTP/1.1\r\n\r\n");
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    let by_route = &v["requests_by_route"];
    assert_eq!(by_route["/cpu"]["200"], 1, "{v}");
    assert_eq!(by_route["/delay"]["400"], 1, "{v}");
    assert_eq!(by_route["/bytes"]["405"], 1, "{v}");
    assert_eq!(by_route["/gzip"]["200"], 1, "{v}");
    assert_eq!(by_route["files"]["200"], 1, "{v}");
    assert_eq!(by_route["files"]["404"], 1, "{v}");
    h.shutdown().unwrap();
    std::fs::remove_dir_all(&root).unwrap();
}
