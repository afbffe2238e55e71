//! The server template and its variants: `--vary NAME=V1,V2` read (the name
//! ends at the first `=`, values may hold `=` and may be empty), checked
//! against the template's `{NAME}` placeholders both ways before anything
//! starts, and the variants as the product of every `--vary`'s values.

use std::collections::BTreeMap;

/// One `--vary`: a name and its values, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vary {
    pub name: String,
    pub values: Vec<String>,
}

/// One configuration: its name ("w=1 log=on"), its values and its command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    pub name: String,
    pub values: BTreeMap<String, String>,
    pub command: String,
}

/// Reads `NAME=V1,V2[,…]`.
pub fn parse_vary(text: &str) -> Result<Vary, String> {
    let (name, values) = text
        .split_once('=')
        .ok_or_else(|| format!("--vary {text:?}: expected NAME=V1,V2"))?;
    if !is_name(name) {
        return Err(format!(
            "--vary {text:?}: the name {name:?} must be letters, digits, '_' or '-'"
        ));
    }
    Ok(Vary {
        name: name.to_string(),
        values: values.split(',').map(str::to_string).collect(),
    })
}

fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The `{NAME}` placeholders of a template, in order, each once.
fn placeholders(template: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_name(&after[..close]) => {
                let name = &after[..close];
                if !found.contains(&name) {
                    found.push(name);
                }
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    found
}

/// Every variant of `template` over `varies` (the first `--vary` changes
/// slowest), or the one line saying what does not match.
pub fn variants(template: &str, varies: &[Vary]) -> Result<Vec<Variant>, String> {
    let used = placeholders(template);
    for (i, vary) in varies.iter().enumerate() {
        if varies[..i].iter().any(|v| v.name == vary.name) {
            return Err(format!("--vary {} is given twice", vary.name));
        }
        if !used.contains(&vary.name.as_str()) {
            return Err(format!(
                "--vary {}: the server template has no {{{}}}",
                vary.name, vary.name
            ));
        }
        if vary.values.len() != dedup_len(&vary.values) {
            return Err(format!("--vary {}: a value is given twice", vary.name));
        }
    }
    if let Some(missing) = used.iter().find(|n| !varies.iter().any(|v| v.name == **n)) {
        return Err(format!(
            "the server template has {{{missing}}} but no --vary {missing}=..."
        ));
    }
    let mut all = vec![Vec::<(&str, &str)>::new()];
    for vary in varies {
        all = all
            .into_iter()
            .flat_map(|chosen| {
                vary.values.iter().map(move |value| {
                    let mut more = chosen.clone();
                    more.push((vary.name.as_str(), value.as_str()));
                    more
                })
            })
            .collect();
    }
    Ok(all
        .into_iter()
        .map(|chosen| {
            let command = chosen.iter().fold(template.to_string(), |text, (n, v)| {
                text.replace(&format!("{{{n}}}"), v)
            });
            Variant {
                name: chosen
                    .iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                values: chosen
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.to_string()))
                    .collect(),
                command,
            }
        })
        .collect())
}

fn dedup_len(values: &[String]) -> usize {
    let mut sorted: Vec<&String> = values.iter().collect();
    sorted.sort();
    sorted.dedup();
    sorted.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vary(text: &str) -> Vary {
        parse_vary(text).unwrap()
    }

    #[test]
    fn the_name_ends_at_the_first_equals_sign() {
        assert_eq!(
            vary("log=--access-log=/tmp/a,"),
            Vary {
                name: "log".into(),
                values: vec!["--access-log=/tmp/a".into(), String::new()],
            }
        );
        assert!(parse_vary("novalue").unwrap_err().contains("NAME=V1,V2"));
        assert!(parse_vary("a b=1").unwrap_err().contains("must be letters"));
    }

    #[test]
    fn variants_are_the_product_first_slowest() {
        let all = variants(
            "srv -w {w} {log} -w2 {w}",
            &[vary("w=1,2"), vary("log=on,off")],
        )
        .unwrap();
        let names: Vec<&str> = all.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            ["w=1 log=on", "w=1 log=off", "w=2 log=on", "w=2 log=off"]
        );
        assert_eq!(all[3].command, "srv -w 2 off -w2 2");
        assert_eq!(all[1].values["log"], "off");
    }

    #[test]
    fn template_and_varies_must_match_both_ways() {
        assert_eq!(
            variants("srv {w} {x}", &[vary("w=1")]).unwrap_err(),
            "the server template has {x} but no --vary x=..."
        );
        assert_eq!(
            variants("srv {w}", &[vary("w=1"), vary("y=2")]).unwrap_err(),
            "--vary y: the server template has no {y}"
        );
        assert!(variants("srv {w}", &[vary("w=1"), vary("w=2")])
            .unwrap_err()
            .contains("twice"));
        assert!(variants("srv {w}", &[vary("w=1,1")])
            .unwrap_err()
            .contains("twice"));
        // Braces that are no placeholder (a shell's ${x:-y}, JSON) are left alone.
        let all = variants("srv {w} --json '{\"a\": 1}'", &[vary("w=1")]).unwrap();
        assert_eq!(all[0].command, "srv 1 --json '{\"a\": 1}'");
    }
}
