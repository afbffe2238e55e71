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
#[path = "getopt_tests.rs"]
mod tests;
