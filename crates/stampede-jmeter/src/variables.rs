//! Counter and Random Variable config elements: a variable JMeter sets at
//! the start of each iteration (CounterConfig.java and
//! RandomVariableConfig.java, iterationStart), mapped to the stampede
//! built-in slot that gives the same values, or refused with the reason
//! when none does (stampede templates compute nothing at run time: no
//! offset, step, wrap or number format).

use crate::functions::{constant, Names};
use crate::tree::Element;
use crate::MapError;

/// What a generated variable stands for in the scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// The same text every iteration (folded in as a user-defined variable).
    Fixed(String),
    /// A built-in slot's text (`iter`, `rand_int 1 9`).
    Slot(String),
}

fn unsupported(why: impl std::fmt::Display) -> MapError {
    MapError::Unsupported(format!("{why} (stampede templates have no arithmetic)"))
}

/// A whole-number property (JMeter reads an empty one as 0); None: empty.
fn long(e: &Element, prop: &str, names: &Names) -> Result<Option<i64>, MapError> {
    let Some(raw) = e.text(prop) else {
        return Ok(None);
    };
    let value = constant(raw, names, prop)?;
    value.trim().parse::<i64>().map(Some).map_err(|_| {
        MapError::Bad(format!(
            "{}: {prop} is '{value}', not a whole number",
            e.describe()
        ))
    })
}

fn name(e: &Element, prop: &str, names: &Names) -> Result<String, MapError> {
    let raw = e.text(prop).ok_or_else(|| MapError::missing(e, prop))?;
    Ok(constant(raw, names, prop)?.trim().to_string())
}

/// The variable a Counter or Random Variable sets, and its value.
pub(crate) fn generated(
    e: &Element,
    names: &Names,
    notes: &mut Vec<String>,
) -> Result<(String, Value), MapError> {
    match e.class.as_str() {
        "CounterConfig" => counter(e, names),
        _ => random(e, names, notes),
    }
}

/// CounterConfig.iterationStart: per user, `start`, `start + incr`, ...
/// back to `start` past `end`; shared, one sequence over all users'
/// iterations. `{{iter}}` is the per-user count from 0 by 1.
fn counter(e: &Element, names: &Names) -> Result<(String, Value), MapError> {
    let var = name(e, "CounterConfig.name", names)?;
    let start = long(e, "CounterConfig.start", names)?.unwrap_or(0);
    let incr = long(e, "CounterConfig.incr", names)?.unwrap_or(0);
    let end = long(e, "CounterConfig.end", names)?;
    let per_user = e.flag("CounterConfig.per_user").unwrap_or(false);
    let reset = e
        .flag("CounterConfig.reset_on_tg_iteration")
        .unwrap_or(false);
    if let Some(format) = e.text("CounterConfig.format") {
        return Err(unsupported(format!(
            "the number format '{format}' (Java DecimalFormat) is not mapped"
        )));
    }
    // No increment, or a per-user count reset at each iteration of the
    // group it sits in: the value is `start` every time.
    if incr == 0 || (per_user && reset) {
        return Ok((var, Value::Fixed(start.to_string())));
    }
    if end.is_some_and(|end| end < i64::MAX) {
        return Err(unsupported(
            "a counter that wraps at an end value is not mapped",
        ));
    }
    if !per_user {
        return Err(unsupported(
            "a counter shared by all users counts iterations across threads; stampede's {{seq}} counts requests",
        ));
    }
    if (start, incr) != (0, 1) {
        return Err(unsupported(
            format!("a per-user counter from {start} by {incr} is not mapped: {{{{iter}}}} counts from 0 by 1"),
        ));
    }
    Ok((var, Value::Slot("iter".into())))
}

/// RandomVariableConfig.iterationStart: `minimum + nextInt(max - min + 1)`,
/// drawn once per iteration.
fn random(
    e: &Element,
    names: &Names,
    notes: &mut Vec<String>,
) -> Result<(String, Value), MapError> {
    let var = name(e, "variableName", names)?;
    let min = long(e, "minimumValue", names)?.unwrap_or(0);
    let max = long(e, "maximumValue", names)?.unwrap_or(0);
    if min > max {
        return Err(MapError::Bad(format!(
            "{}: minimumValue {min} is above maximumValue {max} (JMeter sets no value)",
            e.describe()
        )));
    }
    if let Some(format) = e.text("outputFormat") {
        return Err(unsupported(format!(
            "the number format '{format}' (Java DecimalFormat) is not mapped"
        )));
    }
    let seed = match e.text("randomSeed") {
        Some(seed) => format!(
            "; the seed {} is not used, so the values are not JMeter's sequence",
            seed.trim()
        ),
        None => String::new(),
    };
    notes.push(format!(
        "{}: ${{{var}}} is {{{{rand_int {min} {max}}}}}: each use draws its own value, where JMeter draws one per iteration{seed}",
        e.describe()
    ));
    Ok((var, Value::Slot(format!("rand_int {min} {max}"))))
}
