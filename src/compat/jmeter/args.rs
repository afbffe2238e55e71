//! JMeter's command-line grammar, as its parser reads it
//! (src/jorphan/src/main/java/org/apache/commons/cli/avalon/CLArgsParser.java):
//! short options cluster (`-nt plan.jmx`); an option's value is the rest
//! of its word or the next word, one `=` after a short option skipped
//! (`-tFILE`, `-t FILE`, `-t=FILE`); long options take `--name=value` or
//! `--name value`; two-argument options (`-J`, `-G`, `-D`, `-L`) split
//! `name=value` at the first `=`, take the next word as the value when the
//! first word has no `=` and the next is no option (`-J name value`), and
//! else have an empty value; `--` ends the options; an option given twice
//! is refused unless its descriptor allows duplicates. The compat getopt
//! (getopt.rs) is POSIX getopt's and reads `-t=FILE` as the file `=FILE`,
//! so JMeter's front-end has its own reader.

/// How many arguments an option takes (CLOptionDescriptor's modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arity {
    /// ARGUMENT_DISALLOWED.
    Flag,
    /// ARGUMENT_REQUIRED.
    One,
    /// ARGUMENTS_REQUIRED_2: `name=value`.
    Two,
}

/// One option JMeter (or stampede's front-end) understands.
#[derive(Debug, Clone, Copy)]
pub(super) struct JOpt {
    pub key: &'static str,
    pub short: Option<char>,
    pub long: &'static str,
    pub arity: Arity,
    /// DUPLICATES_ALLOWED: may be given more than once.
    pub repeats: bool,
}

impl JOpt {
    pub(super) const fn new(
        key: &'static str,
        short: char,
        long: &'static str,
        arity: Arity,
    ) -> JOpt {
        JOpt {
            key,
            short: Some(short),
            long,
            arity,
            repeats: false,
        }
    }

    pub(super) const fn repeated(self) -> JOpt {
        JOpt {
            repeats: true,
            ..self
        }
    }

    /// A long-only option (stampede's own).
    pub(super) const fn long(key: &'static str, long: &'static str, arity: Arity) -> JOpt {
        JOpt {
            key,
            short: None,
            long,
            arity,
            repeats: false,
        }
    }

    /// `-t/--testfile`, as JMeter names an option in its messages.
    fn described(&self) -> String {
        match self.short {
            Some(c) => format!("-{c}/--{}", self.long),
            None => format!("--{}", self.long),
        }
    }
}

/// A word of the command line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Word {
    /// An option: its key, how it was spelled (`-t`, `--testfile`), and
    /// its arguments (none, one, or a name and a value).
    Opt {
        key: &'static str,
        spelled: String,
        args: Vec<String>,
    },
    /// A word that is no option.
    Text(String),
}

/// Reads `words` (without the program name) against `specs`; an error is
/// one line naming the option.
pub(super) fn read(specs: &[JOpt], words: &[String]) -> Result<Vec<Word>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let word = &words[at];
        at += 1;
        if word == "--" {
            out.extend(words[at..].iter().cloned().map(Word::Text));
            break;
        }
        if word == "-" {
            return Err("malformed option -".to_string());
        }
        if let Some(long) = word.strip_prefix("--") {
            out.push(read_long(specs, long, words, &mut at)?);
        } else if let Some(cluster) = word.strip_prefix('-') {
            read_cluster(specs, cluster, words, &mut at, &mut out)?;
        } else {
            out.push(Word::Text(word.clone()));
        }
    }
    refuse_duplicates(specs, &out)?;
    Ok(out)
}

/// The next word, taken as a value.
fn next_word(words: &[String], at: &mut usize) -> Option<String> {
    let word = words.get(*at)?.clone();
    *at += 1;
    Some(word)
}

/// `--name`, `--name=value`, `--name value`.
fn read_long(specs: &[JOpt], text: &str, words: &[String], at: &mut usize) -> Result<Word, String> {
    let (name, inline) = match text.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (text, None),
    };
    let spelled = format!("--{name}");
    let spec = specs
        .iter()
        .find(|s| s.long == name)
        .ok_or_else(|| format!("unknown option {spelled}"))?;
    let missing = || format!("missing argument to option {spelled}");
    let args = match spec.arity {
        Arity::Flag if inline.is_some() => return Err(format!("option {spelled} takes no value")),
        Arity::Flag => Vec::new(),
        // `--testfile=` takes the next word, as the parser does.
        Arity::One => match inline.filter(|v| !v.is_empty()) {
            Some(value) => vec![value.strip_prefix('=').unwrap_or(value).to_string()],
            None => vec![next_word(words, at).ok_or_else(missing)?],
        },
        Arity::Two => {
            let first = match inline {
                Some(value) => value.to_string(),
                None => next_word(words, at).ok_or_else(missing)?,
            };
            pair(&spelled, &first, words, at)?
        }
    };
    Ok(Word::Opt {
        key: spec.key,
        spelled,
        args,
    })
}

/// `-nf` (flags), `-tFILE`, `-t=FILE`, `-t FILE`, `-Jname=value`,
/// `-J name=value`: an option with arguments takes the rest of the word.
fn read_cluster(
    specs: &[JOpt],
    cluster: &str,
    words: &[String],
    at: &mut usize,
    out: &mut Vec<Word>,
) -> Result<(), String> {
    for (index, letter) in cluster.char_indices() {
        let spelled = format!("-{letter}");
        let spec = specs
            .iter()
            .find(|s| s.short == Some(letter))
            .ok_or_else(|| format!("unknown option {spelled}"))?;
        let rest = &cluster[index + letter.len_utf8()..];
        let missing = || format!("missing argument to option {spelled}");
        let args = match spec.arity {
            Arity::Flag => {
                out.push(Word::Opt {
                    key: spec.key,
                    spelled,
                    args: Vec::new(),
                });
                continue;
            }
            Arity::One if rest.is_empty() => vec![next_word(words, at).ok_or_else(missing)?],
            Arity::One => match rest.strip_prefix('=').unwrap_or(rest) {
                "" => return Err(missing()),
                value => vec![value.to_string()],
            },
            Arity::Two => {
                let first = match rest {
                    "" => next_word(words, at).ok_or_else(missing)?,
                    rest => rest.to_string(),
                };
                pair(&spelled, &first, words, at)?
            }
        };
        out.push(Word::Opt {
            key: spec.key,
            spelled,
            args,
        });
        return Ok(());
    }
    Ok(())
}

/// A two-argument option's name and value from `first` (its first word):
/// `name=value`; `name` alone takes the next word when it is no option,
/// else the value is empty.
fn pair(
    spelled: &str,
    first: &str,
    words: &[String],
    at: &mut usize,
) -> Result<Vec<String>, String> {
    let (name, value) = match first.split_once('=') {
        Some((name, value)) => (name, Some(value.to_string())),
        None => (first, None),
    };
    if name.is_empty() {
        return Err(format!(
            "unable to parse first argument for option {spelled}"
        ));
    }
    let value = match value {
        Some(value) => value,
        None if words.get(*at).is_some_and(|w| !w.starts_with('-')) => {
            next_word(words, at).unwrap_or_default()
        }
        None => String::new(),
    };
    Ok(vec![name.to_string(), value])
}

/// CLArgsParser.checkIncompatibilities: an option without
/// DUPLICATES_ALLOWED given twice is an error.
fn refuse_duplicates(specs: &[JOpt], words: &[Word]) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    for word in words {
        let Word::Opt { key, .. } = word else {
            continue;
        };
        let Some(spec) = specs.iter().find(|s| s.key == *key) else {
            continue;
        };
        if !spec.repeats && seen.contains(key) {
            return Err(format!("duplicate options for {} found", spec.described()));
        }
        seen.push(key);
    }
    Ok(())
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
