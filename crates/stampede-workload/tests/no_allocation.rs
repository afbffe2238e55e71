//! Rendering a templated request into a reused buffer does not allocate
//! (no allocation per request in the steady state). A counting
//! global allocator counts every allocation the rendering thread makes
//! (per thread: the test harness's own threads may allocate meanwhile, as
//! they did once on a loaded machine).

use stampede_plan::{parse_header, LoadModel, Plan, RequestSpec, Schedule, StopCondition};
use stampede_testkit::{thread_allocations as allocations, CountingAllocator};
use stampede_workload::{parse_url_template, RenderContext, RequestTemplate, Scope, VarStore};
use std::time::Duration;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn steady_state_rendering_does_not_allocate() {
    let target =
        parse_url_template("http://127.0.0.1:3000/item/{{seq}}?r={{rand_int 1 1000}}").unwrap();
    let plan = Plan {
        target: target.clone(),
        request: RequestSpec {
            method: "POST".into(),
            headers: Vec::new(),
            body: Vec::new(),
            http10: false,
        },
        model: LoadModel::Closed {
            connections: Schedule::constant(1.0, Duration::from_secs(1)),
        },
        threads: 1,
        stop: StopCondition::Duration(Duration::from_secs(1)),
        warmup: None,
        source_addrs: Vec::new(),
        transport: Default::default(),
        mix: Vec::new(),
        keepalive: true,
        connect_timeout: Duration::from_secs(1),
        timeout: Duration::from_secs(1),
    };
    let request = RequestSpec {
        method: "POST".into(),
        headers: vec![parse_header("X-User: {{user}}").unwrap(), parse_header("Authorization: Bearer {{token}}").unwrap()],
        body: br#"{"id":"{{uuid}}","n":{{seq}},"s":"{{rand_str 8}}","t":{{now_ms}},"at":"{{now_iso}}"}"#.to_vec(),
        http10: false,
    };
    let mut scope = Scope::new();
    scope.add_feed_columns(0, &["user".to_string()]).unwrap();
    let token = scope.add_extract("token").unwrap();
    let template = RequestTemplate::from_plan(&plan, &target, &request, &scope).unwrap();
    let row: Vec<Box<[u8]>> = vec![b"ann".to_vec().into()];
    let rows: [&[Box<[u8]>]; 1] = [&row];
    let mut store = VarStore::new(scope.extract_slots());
    store.set(token, b"abcdef");
    let mut rng = fastrand::Rng::with_seed(5);
    let mut buffer = Vec::with_capacity(4096);
    let mut render = |seq: u64, buffer: &mut Vec<u8>| {
        buffer.clear();
        let mut context = RenderContext {
            seq,
            conn: 1,
            iter: seq,
            worker: 0,
            agent: 0,
            rows: &rows,
            vars: &mut store,
            rng: &mut rng,
        };
        template.render(&mut context, buffer);
    };
    render(0, &mut buffer);
    let before = allocations();
    for seq in 1..10_000 {
        render(seq, &mut buffer);
    }
    let allocations = allocations() - before;
    assert_eq!(
        allocations, 0,
        "rendering allocated {allocations} times in 9999 renders"
    );
    let text = String::from_utf8(buffer.clone()).unwrap();
    assert!(text.starts_with("POST /item/9999?r="), "{text}");
    assert!(
        text.contains("X-User: ann\r\nAuthorization: Bearer abcdef\r\n"),
        "{text}"
    );
    let body = text.split("\r\n\r\n").nth(1).unwrap();
    assert!(
        text.contains(&format!("Content-Length: {}\r\n", body.len())),
        "{text}"
    );
}
