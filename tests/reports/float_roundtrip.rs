//! A figure saved in a result file reads back bit for bit, so that
//! `stampede report FILE` prints what the fresh command printed. Means of
//! HDR figures (three significant digits) land on rounding ties such as
//! 15.815 ms often; a parse one unit in the last place off turns "15.81"
//! into "15.82" (seen as a flaky tests/reports/result_files.rs). serde_json parses
//! floats exactly only with its `float_roundtrip` feature.

#[test]
fn means_of_three_digit_figures_survive_json_exactly() {
    let mut wrong = Vec::new();
    for a in (1000u32..9990).step_by(7) {
        for b in [1000u32, 1150, 2010, 4470, 9990] {
            // Two rounds' p99 in ms, as the repeat summary averages them.
            let mean = (f64::from(a) / 100.0 + f64::from(b) / 100.0) / 2.0;
            let text = serde_json::to_string(&mean).expect("a float serializes");
            let back: f64 = serde_json::from_str(&text).expect("and parses");
            if back.to_bits() != mean.to_bits() {
                wrong.push(format!("{mean:?} -> {text} -> {back:?}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of them changed, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(3)]
    );
}
