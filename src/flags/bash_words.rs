//! The words of one command as bash reads them, for a command a user
//! pastes (`--curl`): blanks between words, `'…'`, `"…"` and ANSI-C
//! `$'…'` quoting (what browsers' "Copy as cURL (bash)" writes for a value
//! with a newline or a non-ASCII character), backslash escapes, and a
//! backslash before a newline joining two lines. Anything that would make
//! bash do more than run one command (`|`, `;`, `&`, `<`, `>`, `` ` ``,
//! `$(`, a variable) is refused, as the command could not be read as typed.

/// Splits `text` into its words, or says in one line why it cannot.
pub fn split(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    // A word has begun (an empty '' is a word too).
    let mut started = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            '\\' => match chars.next() {
                // A line continuation: nothing of it is kept.
                Some('\n') => {}
                Some('\r') if chars.peek() == Some(&'\n') => {
                    chars.next();
                }
                Some(next) => {
                    word.push(next);
                    started = true;
                }
                None => return Err("a backslash at the end".into()),
            },
            '\'' => {
                started = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(inner) => word.push(inner),
                        None => return Err("a ' quote is not closed".into()),
                    }
                }
            }
            '"' => {
                started = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(escaped @ ('\\' | '"' | '$' | '`')) => word.push(escaped),
                            Some('\n') => {}
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err("a \" quote is not closed".into()),
                        },
                        Some('$' | '`') => {
                            return Err("a $ or ` inside \"…\" (bash would expand it)".into())
                        }
                        Some(inner) => word.push(inner),
                        None => return Err("a \" quote is not closed".into()),
                    }
                }
            }
            '$' if chars.peek() == Some(&'\'') => {
                chars.next();
                started = true;
                ansi_c(&mut chars, &mut word)?;
            }
            '$' | '`' | '|' | ';' | '&' | '<' | '>' | '(' | ')' => {
                return Err(format!(
                    "'{c}' outside quotes: bash would not run this as one command"
                ));
            }
            other => {
                word.push(other);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    Ok(words)
}

/// The rest of a `$'…'` word after its opening quote, with bash's escapes.
fn ansi_c(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    word: &mut String,
) -> Result<(), String> {
    loop {
        let Some(c) = chars.next() else {
            return Err("a $' quote is not closed".into());
        };
        match c {
            '\'' => return Ok(()),
            '\\' => {
                let Some(escape) = chars.next() else {
                    return Err("a $' quote is not closed".into());
                };
                match escape {
                    'n' => word.push('\n'),
                    't' => word.push('\t'),
                    'r' => word.push('\r'),
                    'a' => word.push('\u{7}'),
                    'b' => word.push('\u{8}'),
                    'e' | 'E' => word.push('\u{1b}'),
                    'f' => word.push('\u{c}'),
                    'v' => word.push('\u{b}'),
                    '\\' | '\'' | '"' | '?' => word.push(escape),
                    'x' => word.push(hex(chars, 2)?),
                    'u' => word.push(hex(chars, 4)?),
                    'U' => word.push(hex(chars, 8)?),
                    '0'..='7' => {
                        let mut value = escape.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            match chars.peek().and_then(|d| d.to_digit(8)) {
                                Some(digit) => {
                                    value = value * 8 + digit;
                                    chars.next();
                                }
                                None => break,
                            }
                        }
                        word.push(char::from_u32(value).unwrap_or('\u{fffd}'));
                    }
                    other => {
                        word.push('\\');
                        word.push(other);
                    }
                }
            }
            other => word.push(other),
        }
    }
}

/// Up to `most` hex digits after `\x`, `\u` or `\U`, as the character.
fn hex(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, most: usize) -> Result<char, String> {
    let mut value = 0u32;
    let mut digits = 0;
    while digits < most {
        match chars.peek().and_then(|d| d.to_digit(16)) {
            Some(digit) => {
                value = value * 16 + digit;
                chars.next();
                digits += 1;
            }
            None => break,
        }
    }
    if digits == 0 {
        return Err("an escape \\x, \\u or \\U without hex digits in $'…'".into());
    }
    char::from_u32(value).ok_or_else(|| format!("\\u{value:x} in $'…' is not a character"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        split(text).unwrap()
    }

    #[test]
    fn quotes_escapes_and_continuations() {
        assert_eq!(
            words("curl 'http://h/a b' \\\n  -H \"X: \\\"q\\\" \\$\" --data-raw ''"),
            ["curl", "http://h/a b", "-H", "X: \"q\" $", "--data-raw", ""]
        );
        assert_eq!(words("a\\ b c'd'\"e\""), ["a b", "cde"]);
        assert_eq!(words("curl x \\\r\n -k"), ["curl", "x", "-k"]);
    }

    #[test]
    fn ansi_c_quoting_as_browsers_write_it() {
        assert_eq!(
            words(r#"--data-raw $'{"a":"line\nnext","b":"\u00e9\x41\'\\"}'"#),
            ["--data-raw", "{\"a\":\"line\nnext\",\"b\":\"éA'\\\"}"]
        );
        assert_eq!(words(r"$'\101\t\e'"), ["A\t\u{1b}"]);
    }

    #[test]
    fn what_bash_would_do_more_with_is_refused() {
        for text in [
            "curl x | sh",
            "curl x; rm y",
            "curl $URL",
            "curl \"$URL\"",
            "curl `x`",
            "curl x > out",
            "curl 'open",
            "curl \"open",
            "curl $'open",
            "curl x \\",
        ] {
            assert!(split(text).is_err(), "{text}");
        }
    }
}
