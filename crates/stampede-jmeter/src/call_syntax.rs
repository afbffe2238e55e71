//! The syntax of JMeter's `${...}` expressions that more than one
//! translator reads: where an expression ends, and a function call's
//! arguments, as JMeter's FunctionParser reads them (`\,` is a literal
//! comma; nested calls and braces keep theirs).

/// The index of the `}` closing an expression that began just before `text`.
pub(crate) fn closing(text: &str) -> Option<usize> {
    let (mut depth, mut escaped) = (0usize, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Splits a function's arguments on unescaped commas outside nested calls.
pub(crate) fn split_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let (mut depth, mut chars) = (0usize, text.chars());
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(',') => current.push(','),
                Some(other) => {
                    current.push('\\');
                    current.push(other);
                }
                None => current.push('\\'),
            },
            '(' | '{' => {
                depth += 1;
                current.push(c);
            }
            ')' | '}' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' if depth == 0 => args.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    if !args.is_empty() || !current.is_empty() {
        args.push(current);
    }
    args
}
