//! Feeder loading, errors and the three modes.

use super::*;
use std::collections::HashSet;

fn csv(text: &str) -> Result<FeedData, FeederError> {
    FeedData::from_csv("users.csv", text.as_bytes(), b',')
}

fn text(field: &[u8]) -> &str {
    std::str::from_utf8(field).unwrap()
}

#[test]
fn csv_with_quotes_and_a_chosen_delimiter() {
    let data = csv("user,pass\nann,\"p,w\"\n\"b\"\"ob\",x\n").unwrap();
    assert_eq!(data.columns(), ["user", "pass"]);
    assert_eq!(data.rows(), 2);
    assert_eq!(text(&data.row(0)[1]), "p,w");
    assert_eq!(text(&data.row(1)[0]), "b\"ob");
    let data = FeedData::from_csv("t.tsv", b"a;b\n1;2\n", b';').unwrap();
    assert_eq!(text(&data.row(0)[1]), "2");
}

/// JMeter's CSV Data Set (CSVDataSet.iterationStart) fills its
/// variableNames from a line's first values and ignores the rest, as
/// Http4ImplPreemptiveBasicAuth-data.csv (3 values, 2 names) needs; fewer
/// values than names is refused with the file's own line number.
#[test]
fn headerless_rows_keep_their_first_fields() {
    let columns = vec!["login".to_string(), "password".to_string()];
    let rows = b"toto;password1;dG90bzpwYXNzd29yZDE=\ntiti;password2\n";
    let data = FeedData::from_headerless_csv("d.csv", columns.clone(), rows, b';', 1).unwrap();
    assert_eq!(data.rows(), 2);
    assert_eq!(text(&data.row(0)[1]), "password1");
    assert_eq!(data.row(0).len(), 2);
    assert_eq!(text(&data.row(1)[0]), "titi");
    let short = FeedData::from_headerless_csv("d.csv", columns, b"a;b\nc\n", b';', 2);
    assert_eq!(
        short.unwrap_err().to_string(),
        "d.csv:3: row has 1 fields, columns names 2"
    );
}

#[test]
fn csv_errors_name_file_and_line() {
    assert_eq!(
        csv("user,pass\nann,pw\nbob\n").unwrap_err().to_string(),
        "users.csv:3: row has 1 fields, the header has 2"
    );
    assert_eq!(
        csv("").unwrap_err().to_string(),
        "users.csv:1: no header row (the first line names the columns)"
    );
    assert_eq!(
        csv("user\n").unwrap_err().to_string(),
        "users.csv: no data rows after the header"
    );
    assert!(csv("a,a\n1,2\n").is_err());
    let one = csv("id\n7").unwrap();
    assert_eq!(one.rows(), 1);
}

#[test]
fn json_lines_flat_objects() {
    let data = FeedData::from_json_lines(
        "p.jsonl",
        b"{\"id\":1,\"name\":\"ann\",\"x\":null}\n\n{\"name\":\"bob\",\"id\":2,\"x\":true}\n",
    )
    .unwrap();
    assert_eq!(data.columns(), ["id", "name", "x"]);
    assert_eq!(text(&data.row(1)[0]), "2");
    assert_eq!(text(&data.row(1)[1]), "bob");
    assert_eq!(text(&data.row(0)[2]), "");
    let err = FeedData::from_json_lines("p.jsonl", b"{\"id\":1}\n{\"id\":\n").unwrap_err();
    assert_eq!((err.file.as_str(), err.line), ("p.jsonl", 2));
    assert_eq!(
        FeedData::from_json_lines("p.jsonl", b"{\"id\":1}\n{\"other\":1}\n")
            .unwrap_err()
            .line,
        2
    );
    assert_eq!(
        FeedData::from_json_lines("p.jsonl", b"{\"id\":[1]}\n")
            .unwrap_err()
            .line,
        1
    );
    assert_eq!(
        FeedData::from_json_lines("p.jsonl", b"[1]\n")
            .unwrap_err()
            .line,
        1
    );
    assert!(FeedData::from_json_lines("p.jsonl", b"").is_err());
}

#[test]
fn spec_parsing() {
    let spec = FeedSpec::parse("ids.csv:unique").unwrap();
    assert_eq!(
        (spec.path.to_str().unwrap(), spec.mode),
        ("ids.csv", FeedMode::Unique)
    );
    assert_eq!(FeedSpec::parse("ids.csv").unwrap().mode, FeedMode::Circular);
    assert_eq!(
        FeedSpec::parse("a:b.csv").unwrap().path.to_str().unwrap(),
        "a:b.csv"
    );
    assert_eq!(
        FeedSpec::parse("x.csv:random").unwrap().mode,
        FeedMode::Random
    );
    assert!(FeedSpec::parse("").is_err());
}

fn feeder(rows: usize, mode: FeedMode) -> Arc<Feeder> {
    let mut text = String::from("n\n");
    for i in 0..rows {
        text.push_str(&format!("{i}\n"));
    }
    Arc::new(Feeder::new(csv(&text).unwrap(), mode))
}

fn take(cursor: &mut FeedCursor) -> Result<usize, Exhausted> {
    cursor.next_row().map(|row| text(&row[0]).parse().unwrap())
}

#[test]
fn circular_wraps_and_random_stays_in_range() {
    let f = feeder(3, FeedMode::Circular);
    let mut c = f.cursor(0, 1, 0, 1, 1);
    let seen: Vec<usize> = (0..7).map(|_| take(&mut c).unwrap()).collect();
    assert_eq!(seen, [0, 1, 2, 0, 1, 2, 0]);
    let one = feeder(1, FeedMode::Circular);
    let mut c = one.cursor(1, 2, 0, 1, 1);
    assert_eq!([take(&mut c).unwrap(), take(&mut c).unwrap()], [0, 0]);
    let r = feeder(5, FeedMode::Random);
    let mut c = r.cursor(0, 1, 0, 1, 9);
    let seen: HashSet<usize> = (0..200).map(|_| take(&mut c).unwrap()).collect();
    assert_eq!(seen.len(), 5);
}

#[test]
fn unique_hands_each_row_out_once_across_workers_then_exhausts() {
    let f = feeder(10, FeedMode::Unique);
    let mut a = f.cursor(0, 2, 0, 1, 1);
    let mut b = f.cursor(1, 2, 0, 1, 2);
    let mut seen = Vec::new();
    while let (Ok(x), Ok(y)) = (take(&mut a), take(&mut b)) {
        seen.extend([x, y]);
    }
    assert_eq!(take(&mut a), Err(Exhausted));
    assert_eq!(take(&mut b), Err(Exhausted));
    seen.sort();
    assert_eq!(seen, (0..10).collect::<Vec<_>>());
}

#[test]
fn unique_is_exhausted_once_every_row_of_the_agent_is_handed_out() {
    let f = feeder(3, FeedMode::Unique);
    let mut c = f.cursor(0, 1, 0, 1, 1);
    for _ in 0..3 {
        assert!(!f.is_exhausted(0, 1));
        take(&mut c).unwrap();
    }
    assert!(f.is_exhausted(0, 1), "all three handed out");
    // Agent 1 of 2 owns row 1 only; agent 0 rows 0 and 2.
    let f = feeder(3, FeedMode::Unique);
    let mut c = f.cursor(0, 1, 1, 2, 1);
    assert!(!f.is_exhausted(1, 2));
    assert_eq!(take(&mut c), Ok(1));
    assert!(f.is_exhausted(1, 2));
    assert!(!feeder(1, FeedMode::Circular).is_exhausted(0, 1));
}

#[test]
fn unique_agents_take_rows_congruent_to_their_index() {
    let mut all = Vec::new();
    for agent in 0..3 {
        let f = feeder(10, FeedMode::Unique);
        let mut c = f.cursor(0, 1, agent, 3, 1);
        let mine: Vec<usize> = std::iter::from_fn(|| take(&mut c).ok()).collect();
        assert!(mine.iter().all(|i| i % 3 == agent), "{mine:?}");
        all.extend(mine);
    }
    all.sort();
    assert_eq!(all, (0..10).collect::<Vec<_>>());
}

#[test]
fn listed_rows_go_to_worker_w_of_w_as_w_then_w_plus_w_whatever_the_pace() {
    let f = feeder(7, FeedMode::Listed);
    let mut a = f.cursor(0, 2, 0, 1, 1);
    let mut b = f.cursor(1, 2, 0, 1, 2);
    // b draws first and more often: its rows stay its own.
    let from_b: Vec<usize> = (0..3).map(|_| take(&mut b).unwrap()).collect();
    assert_eq!(from_b, [1, 3, 5]);
    assert_eq!(take(&mut b), Err(Exhausted));
    let from_a: Vec<usize> = (0..4).map(|_| take(&mut a).unwrap()).collect();
    assert_eq!(from_a, [0, 2, 4, 6]);
    assert_eq!(take(&mut a), Err(Exhausted));
    assert_eq!(FeedMode::parse("listed"), None, "not a --feed mode");
}

#[test]
fn loads_relative_to_a_base_directory() {
    let dir = std::env::temp_dir().join(format!("stampede-feed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("u.jsonl"), "{\"user\":\"ann\"}\n").unwrap();
    let feeder = FeedSpec::parse("u.jsonl")
        .unwrap()
        .load(Some(&dir))
        .unwrap();
    assert_eq!(feeder.data().columns(), ["user"]);
    let missing = FeedSpec::parse("nope.csv")
        .unwrap()
        .load(Some(&dir))
        .unwrap_err();
    assert!(
        missing.to_string().contains("nope.csv: cannot read"),
        "{missing}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rows_built_in_memory_keep_their_columns_and_refuse_a_short_row() {
    let field = |s: &str| s.as_bytes().to_vec().into_boxed_slice();
    let columns = vec!["path".to_string(), "ua".to_string()];
    let data = FeedData::from_rows(
        "replay",
        columns.clone(),
        [vec![field("a"), field("x")], vec![field("b"), field("y")]],
    )
    .unwrap();
    assert_eq!(data.columns(), ["path", "ua"]);
    assert_eq!(data.rows(), 2);
    assert_eq!(text(&data.row(1)[0]), "b");
    assert_eq!(text(&data.row(1)[1]), "y");
    let err = FeedData::from_rows("replay", columns.clone(), [vec![field("a")]]).unwrap_err();
    assert_eq!((err.file.as_str(), err.line), ("replay", 1));
    assert!(FeedData::from_rows("replay", columns, []).is_err());
}
