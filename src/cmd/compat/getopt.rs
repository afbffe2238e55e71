//! A small getopt for foreign command lines: the syntax ab, wrk, webbench and
//! the press tool share (POSIX short options that cluster, `-n1000` attached
//! values, GNU `--long`/`--long=value`, `--` ending options, options after
//! the URL as GNU getopt permutes them). clap cannot express these tools'
//! syntax (single-dash letters with attached values, digits as flags), so each
//! front-end describes its options in a table and reads the tokens.
//!
//! It deliberately knows nothing of what an option means: values stay strings.

use std::fmt;

/// One option a tool understands.
#[derive(Debug, Clone, Copy)]
pub struct OptSpec {
    /// The name the front-end matches on, and prints in messages.
    pub key: &'static str,
    pub short: Option<char>,
    pub long: Option<&'static str>,
    pub takes_value: bool,
}

impl OptSpec {
    /// A short option `-c` without a long name.
    pub const fn short(key: &'static str, short: char, takes_value: bool) -> OptSpec {
        OptSpec {
            key,
            short: Some(short),
            long: None,
            takes_value,
        }
    }

    /// An option with both spellings, `-c` and `--connections`.
    pub const fn both(
        key: &'static str,
        short: char,
        long: &'static str,
        takes_value: bool,
    ) -> OptSpec {
        OptSpec {
            key,
            short: Some(short),
            long: Some(long),
            takes_value,
        }
    }

    /// A long-only option `--latency`.
    pub const fn long(key: &'static str, long: &'static str, takes_value: bool) -> OptSpec {
        OptSpec {
            key,
            short: None,
            long: Some(long),
            takes_value,
        }
    }
}

/// A word of the command line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// An option by its key; `spelled` is how the user wrote it (`-n`, `--latency`).
    Opt {
        key: &'static str,
        spelled: String,
        value: Option<String>,
    },
    /// Anything that is not an option (the URL).
    Arg(String),
}

/// An option as a front-end reads it: its key, how the user spelled it (for
/// messages), and its value (empty for a flag).
pub type Opt = (&'static str, String, String);

/// Splits read tokens into the options, in command-line order, and the other
/// words (the URLs), which every front-end treats alike.
pub fn split(tokens: Vec<Token>) -> (Vec<Opt>, Vec<String>) {
    let mut options = Vec::new();
    let mut words = Vec::new();
    for token in tokens {
        match token {
            Token::Arg(word) => words.push(word),
            Token::Opt {
                key,
                spelled,
                value,
            } => options.push((key, spelled, value.unwrap_or_default())),
        }
    }
    (options, words)
}

/// Why a command line could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GetoptError {
    Unknown(String),
    MissingValue(String),
    UnexpectedValue(String),
}

impl fmt::Display for GetoptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GetoptError::Unknown(opt) => write!(f, "unknown option {opt}"),
            GetoptError::MissingValue(opt) => write!(f, "option {opt} needs a value"),
            GetoptError::UnexpectedValue(opt) => write!(f, "option {opt} takes no value"),
        }
    }
}

impl std::error::Error for GetoptError {}

/// Reads `words` (without the program name) against `specs`.
pub fn tokenize(specs: &[OptSpec], words: &[String]) -> Result<Vec<Token>, GetoptError> {
    let mut tokens = Vec::with_capacity(words.len());
    let mut rest = words.iter();
    while let Some(word) = rest.next() {
        if word == "--" {
            tokens.extend(rest.by_ref().map(|w| Token::Arg(w.clone())));
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            tokens.push(read_long(specs, long, &mut rest)?);
        } else if word.len() > 1 && word.starts_with('-') {
            read_short_cluster(specs, &word[1..], &mut rest, &mut tokens)?;
        } else {
            tokens.push(Token::Arg(word.clone()));
        }
    }
    Ok(tokens)
}

/// `--name`, `--name=value` or `--name value`.
fn read_long<'a>(
    specs: &[OptSpec],
    text: &str,
    rest: &mut impl Iterator<Item = &'a String>,
) -> Result<Token, GetoptError> {
    let (name, inline) = match text.split_once('=') {
        Some((name, value)) => (name, Some(value.to_string())),
        None => (text, None),
    };
    let spelled = format!("--{name}");
    let spec = specs
        .iter()
        .find(|s| s.long == Some(name))
        .ok_or_else(|| GetoptError::Unknown(spelled.clone()))?;
    let value = match (spec.takes_value, inline) {
        (true, Some(value)) => Some(value),
        (true, None) => Some(
            rest.next()
                .cloned()
                .ok_or_else(|| GetoptError::MissingValue(spelled.clone()))?,
        ),
        (false, Some(_)) => return Err(GetoptError::UnexpectedValue(spelled)),
        (false, None) => None,
    };
    Ok(Token::Opt {
        key: spec.key,
        spelled,
        value,
    })
}

/// `-abc` (three flags), `-n1000` or `-n 1000`: a letter that takes a value
/// takes the rest of the word, or the next word when the rest is empty.
fn read_short_cluster<'a>(
    specs: &[OptSpec],
    cluster: &str,
    rest: &mut impl Iterator<Item = &'a String>,
    tokens: &mut Vec<Token>,
) -> Result<(), GetoptError> {
    for (at, letter) in cluster.char_indices() {
        let spelled = format!("-{letter}");
        let spec = specs
            .iter()
            .find(|s| s.short == Some(letter))
            .ok_or_else(|| GetoptError::Unknown(spelled.clone()))?;
        if !spec.takes_value {
            tokens.push(Token::Opt {
                key: spec.key,
                spelled,
                value: None,
            });
            continue;
        }
        let attached = &cluster[at + letter.len_utf8()..];
        let value = if attached.is_empty() {
            rest.next()
                .cloned()
                .ok_or_else(|| GetoptError::MissingValue(spelled.clone()))?
        } else {
            attached.to_string()
        };
        tokens.push(Token::Opt {
            key: spec.key,
            spelled,
            value: Some(value),
        });
        return Ok(());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
}
