//! Counter and Random Variable config elements: a variable JMeter sets at
//! the start of each iteration (CounterConfig.java and
//! RandomVariableConfig.java, iterationStart), mapped to a stampede group
//! counter (`counter = [...]`) or built-in slot that gives the same values,
//! or refused with the reason when none does.

use crate::functions::{constant, Names};
use crate::tree::Element;
use crate::MapError;
use stampede_workload::CounterSpec;

/// What a generated variable stands for in the scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// The same text every iteration (folded in as a user-defined variable).
    Fixed(String),
    /// A built-in slot's text (`rand_int 1 9`).
    Slot(String),
    /// A group counter, advanced at each iteration.
    Counter(CounterSpec),
}

fn unsupported(why: impl std::fmt::Display) -> MapError {
    MapError::Unsupported(why.to_string())
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
/// iterations; written with the format (a DecimalFormat). Empty numbers
/// are 0 (getPropertyAsLong) and an empty end is Long.MAX_VALUE (getEnd).
fn counter(e: &Element, names: &Names) -> Result<(String, Value), MapError> {
    let var = name(e, "CounterConfig.name", names)?;
    let start = long(e, "CounterConfig.start", names)?.unwrap_or(0);
    let incr = long(e, "CounterConfig.incr", names)?.unwrap_or(0);
    let end = long(e, "CounterConfig.end", names)?.unwrap_or(i64::MAX);
    let per_user = e.flag("CounterConfig.per_user").unwrap_or(false);
    let reset = e
        .flag("CounterConfig.reset_on_tg_iteration")
        .unwrap_or(false);
    let width = match e.text("CounterConfig.format") {
        Some(format) => {
            let format = constant(format, names, "CounterConfig.format")?;
            decimal_format_width(&format).ok_or_else(|| {
                unsupported(format!(
                    "the number format '{format}' is not mapped: only DecimalFormat's integer patterns of # then 0 (000, #, #00) are"
                ))
            })?
        }
        None => 0,
    };
    if !stampede_workload::scope::is_name(&var) {
        return Err(unsupported(format!(
            "the variable name '{var}' is not a stampede variable name (letters, digits, _, - and .)"
        )));
    }
    if stampede_workload::BUILTINS.contains(&var.as_str()) {
        return Err(unsupported(format!(
            "the variable name '{var}' is one of stampede's built-in values ({}); rename the Counter's variable",
            stampede_workload::BUILTINS.join(", ")
        )));
    }
    let spec = CounterSpec {
        incr,
        end,
        shared: !per_user,
        width,
        ..CounterSpec::new(&var, start)
    };
    // No increment, or a per-user count reset at each iteration of the
    // group it sits in (mapped at thread-group level only): `start` every
    // time.
    if incr == 0 || (per_user && reset) {
        return Ok((var, Value::Fixed(spec.text(start))));
    }
    Ok((var, Value::Counter(spec)))
}

/// The width a Java DecimalFormat integer pattern pads to: `#`s then `0`s
/// (`000` is 3, `#` and `#00` are 0 and 2); None for any other pattern
/// (grouping, fractions, literal text, exponents), which is refused.
fn decimal_format_width(pattern: &str) -> Option<usize> {
    let zeros = pattern.trim_start_matches('#');
    (!pattern.is_empty() && zeros.len() <= 40 && zeros.bytes().all(|b| b == b'0'))
        .then_some(zeros.len())
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
