//! Tests of the getopt reader ([`super::tokenize`], [`super::split`]): clusters,
//! attached and separate values, long options, the double dash, errors.

use super::*;

const SPECS: &[OptSpec] = &[
    OptSpec::both("threads", 't', "threads", true),
    OptSpec::both("connections", 'c', "connections", true),
    OptSpec::short("keepalive", 'k', false),
    OptSpec::short("http10", '1', false),
    OptSpec::short("http11", '2', false),
    OptSpec::short("help", '?', false),
    OptSpec::long("latency", "latency", false),
    OptSpec::both("header", 'H', "header", true),
];

fn words(line: &[&str]) -> Vec<String> {
    line.iter().map(|w| w.to_string()).collect()
}

fn read(line: &[&str]) -> Result<Vec<(String, Option<String>)>, GetoptError> {
    Ok(tokenize(SPECS, &words(line))?
        .into_iter()
        .map(|t| match t {
            Token::Opt { key, value, .. } => (key.to_string(), value),
            Token::Arg(arg) => (format!("arg:{arg}"), None),
        })
        .collect())
}

fn pair(key: &str, value: Option<&str>) -> (String, Option<String>) {
    (key.to_string(), value.map(str::to_string))
}

#[test]
fn attached_and_separate_values() {
    assert_eq!(
        read(&["-t4", "-c", "500", "http://x/"]).unwrap(),
        vec![
            pair("threads", Some("4")),
            pair("connections", Some("500")),
            pair("arg:http://x/", None)
        ]
    );
}

#[test]
fn clustered_flags_end_at_a_value() {
    assert_eq!(
        read(&["-k2t", "8"]).unwrap(),
        vec![
            pair("keepalive", None),
            pair("http11", None),
            pair("threads", Some("8"))
        ]
    );
    assert_eq!(
        read(&["-kc10"]).unwrap(),
        vec![pair("keepalive", None), pair("connections", Some("10"))]
    );
}

#[test]
fn long_options_with_and_without_equals() {
    assert_eq!(
        read(&["--threads=2", "--connections", "7", "--latency"]).unwrap(),
        vec![
            pair("threads", Some("2")),
            pair("connections", Some("7")),
            pair("latency", None)
        ]
    );
}

#[test]
fn values_may_start_with_a_dash_or_hold_spaces() {
    assert_eq!(
        read(&["-H", "-X: 1", "-H", "a: b && c: d"]).unwrap(),
        vec![
            pair("header", Some("-X: 1")),
            pair("header", Some("a: b && c: d"))
        ]
    );
}

#[test]
fn options_after_the_url_and_the_double_dash() {
    assert_eq!(
        read(&["http://x/", "-k", "--", "-t"]).unwrap(),
        vec![
            pair("arg:http://x/", None),
            pair("keepalive", None),
            pair("arg:-t", None)
        ]
    );
    assert_eq!(read(&["-"]).unwrap(), vec![pair("arg:-", None)]);
}

#[test]
fn digits_and_question_mark_are_letters_too() {
    assert_eq!(
        read(&["-12?"]).unwrap(),
        vec![
            pair("http10", None),
            pair("http11", None),
            pair("help", None)
        ]
    );
}

#[test]
fn errors_name_the_option() {
    assert_eq!(read(&["-x"]), Err(GetoptError::Unknown("-x".into())));
    assert_eq!(read(&["-kx"]), Err(GetoptError::Unknown("-x".into())));
    assert_eq!(
        read(&["--nope"]),
        Err(GetoptError::Unknown("--nope".into()))
    );
    assert_eq!(read(&["-t"]), Err(GetoptError::MissingValue("-t".into())));
    assert_eq!(
        read(&["--threads"]),
        Err(GetoptError::MissingValue("--threads".into()))
    );
    assert_eq!(
        read(&["--latency=1"]),
        Err(GetoptError::UnexpectedValue("--latency".into()))
    );
    assert_eq!(
        GetoptError::MissingValue("-t".into()).to_string(),
        "option -t needs a value"
    );
}

#[test]
fn split_keeps_option_order_and_gathers_the_urls() {
    let tokens = tokenize(SPECS, &words(&["-k", "u1", "-c", "9", "u2", "-c10"])).unwrap();
    let (options, urls) = split(tokens);
    let read: Vec<(&str, &str, &str)> = options
        .iter()
        .map(|(key, spelled, value)| (*key, spelled.as_str(), value.as_str()))
        .collect();
    assert_eq!(
        read,
        [
            ("keepalive", "-k", ""),
            ("connections", "-c", "9"),
            ("connections", "-c", "10")
        ]
    );
    assert_eq!(urls, ["u1", "u2"]);
}
