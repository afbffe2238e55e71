//! Rendering cost of a templated request (the budget: `{{seq}}` in
//! the path plus one feeder column in a header, ≤ 1.15× the fixed request's
//! CPU): the template render next to copying the fixed request's bytes.

use criterion::{criterion_group, criterion_main, Criterion};
use stampede_plan::{parse_header, Plan, RequestSpec};
use stampede_workload::{parse_url_template, RenderContext, RequestTemplate, Scope, VarStore};
use std::hint::black_box;

fn plan(url: &str) -> Plan {
    Plan::minimal(parse_url_template(url).expect("bench URL"))
}

fn bench(c: &mut Criterion) {
    let mut scope = Scope::new();
    scope
        .add_feed_columns(0, &["user".to_string()])
        .expect("column");
    let templated = plan("http://127.0.0.1:3000/item/{{seq}}");
    let request = RequestSpec {
        method: "GET".into(),
        headers: vec![parse_header("X-User: {{user}}").expect("header")],
        body: Vec::new(),
        http10: false,
    };
    let template = RequestTemplate::from_plan(&templated, &templated.target, &request, &scope)
        .expect("template");
    let fixed_plan = plan("http://127.0.0.1:3000/item/12345");
    let fixed_request = RequestSpec {
        headers: vec![parse_header("X-User: user0042").expect("header")],
        ..request.clone()
    };
    let fixed_template =
        RequestTemplate::from_plan(&fixed_plan, &fixed_plan.target, &fixed_request, &scope)
            .expect("template");
    let fixed = fixed_template.static_bytes().expect("static");
    let rows_data: Vec<Vec<Box<[u8]>>> = (0..1000)
        .map(|i| vec![format!("user{i:04}").into_bytes().into()])
        .collect();
    let mut store = VarStore::new(0);
    let mut rng = fastrand::Rng::with_seed(1);
    let mut buffer = Vec::with_capacity(4096);
    let mut group = c.benchmark_group("request");
    group.bench_function("fixed_copy", |b| {
        b.iter(|| {
            buffer.clear();
            buffer.extend_from_slice(black_box(&fixed));
            black_box(buffer.len())
        })
    });
    // The template machinery's own overhead: a slot-free template rendered
    // piece by piece (the engine would copy the pre-encoded bytes instead).
    group.bench_function("static_template_render", |b| {
        b.iter(|| {
            buffer.clear();
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
            fixed_template.render(&mut context, &mut buffer);
            black_box(buffer.len())
        })
    });
    let mut seq = 0u64;
    group.bench_function("seq_path_and_feed_header", |b| {
        b.iter(|| {
            seq += 1;
            let row: &[Box<[u8]>] = &rows_data[(seq % 1000) as usize];
            let rows = [row];
            buffer.clear();
            let mut context = RenderContext {
                seq,
                conn: 0,
                iter: seq,
                worker: 0,
                agent: 0,
                rows: &rows,
                vars: &mut store,
                rng: &mut rng,
            };
            template.render(&mut context, &mut buffer);
            black_box(buffer.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
