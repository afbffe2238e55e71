//! The `failureMessage` JMeter writes in the JTL for a failed assertion,
//! word for word (ResponseAssertion.getFailText and equalsComparisonText,
//! DurationAssertion's message; checked against JMeter 2.13's JTL):
//! `Test failed: text expected to contain /ok/`, `Test failed: code
//! expected to equal /` with the received and expected codes and their
//! difference marked `[[[...]]]`, `The operation lasted too long: It took
//! 1,667 milliseconds, but should not have lasted longer than 1,000
//! milliseconds.` (numbers grouped, as Java's MessageFormat writes them),
//! `The result was the wrong size: It was 2,000 bytes, but should have been
//! less than or equal to 1,000 bytes.`, or the assertion's own custom
//! message (JMeter 5).
//!
//! What a check cannot know is left out: an `equals` on the body or the
//! headers names the expected text only (`Test failed: text expected to
//! equal /ok/`), as stampede's request log keeps no bodies; JMeter adds the
//! received text and the difference.

/// What a failed check's sample says in `failureMessage`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureText {
    /// The same words every time.
    Fixed(String),
    /// A Response Assertion `equals` on the response code: the difference
    /// from the received code.
    CodeEquals {
        /// The assertion's `Not` box: the code must not equal the pattern.
        not: bool,
        /// The expected code, as the assertion's test string gives it.
        pattern: String,
    },
    /// A Duration Assertion of at most `max_ms` milliseconds.
    Duration {
        /// `DurationAssertion.duration`: the longest a sample may take, in ms.
        max_ms: u64,
    },
    /// A Size Assertion on the body: `should` is JMeter's words for its
    /// operator (`been less than`), `allowed` the size in bytes.
    BodySize {
        /// JMeter's words for the operator (`been less than or equal to`).
        should: &'static str,
        /// `SizeAssertion.size`: the size compared with, in bytes.
        allowed: u64,
    },
}

/// What a failed sample's message is filled in with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Measured<'a> {
    /// The response code (`200`).
    pub code: &'a str,
    /// The sample's `elapsed`, in milliseconds.
    pub elapsed_ms: u64,
    /// The response body's size, in bytes.
    pub body_bytes: u64,
}

/// A number as Java's MessageFormat writes a long: `1,667`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

impl FailureText {
    /// The message of a failed sample.
    pub fn render(&self, sample: &Measured<'_>) -> String {
        match self {
            FailureText::Fixed(text) => text.clone(),
            FailureText::CodeEquals { not, pattern } => format!(
                "Test failed: code expected {}to equal /{}/",
                if *not { "not " } else { "" },
                equals_comparison(sample.code, pattern)
            ),
            FailureText::Duration { max_ms } => format!(
                "The operation lasted too long: It took {} milliseconds, but should not have lasted longer than {} milliseconds.",
                grouped(sample.elapsed_ms),
                grouped(*max_ms)
            ),
            FailureText::BodySize { should, allowed } => format!(
                "The result was the wrong size: It was {} bytes, but should have {should} {} bytes.",
                grouped(sample.body_bytes),
                grouped(*allowed)
            ),
        }
    }

    /// A Size Assertion's operator (`SizeAssertion.operator`, 1 to 6): the
    /// check's comparison and JMeter's words for it.
    pub(crate) fn size_operator(operator: u32) -> Option<(&'static str, &'static str)> {
        Some(match operator {
            1 => ("==", "been equal to"),
            2 => ("!=", "not been equal to"),
            3 => (">", "been greater than"),
            4 => ("<", "been less than"),
            5 => (">=", "been greater or equal to"),
            6 => ("<=", "been less than or equal to"),
            _ => return None,
        })
    }

    /// A Response Assertion's message: `field` is JMeter's test field
    /// (`Assertion.response_data`), `test_type` its bits, `custom` its
    /// `Assertion.custom_message`.
    pub(crate) fn response(
        field: &str,
        test_type: u32,
        pattern: &str,
        custom: Option<&str>,
    ) -> FailureText {
        if let Some(custom) = custom.filter(|c| !c.is_empty()) {
            return FailureText::Fixed(custom.to_string());
        }
        let (not, or) = (test_type & NOT != 0, test_type & OR != 0);
        if field == "Assertion.response_code" && test_type & !(NOT | OR) == EQUALS && !or {
            return FailureText::CodeEquals {
                not,
                pattern: pattern.to_string(),
            };
        }
        let what = match field {
            "Assertion.response_data" => "text",
            "Assertion.response_code" => "code",
            "Assertion.response_message" => "message",
            "Assertion.response_headers" => "headers",
            "Assertion.request_headers" => "request headers",
            "Assertion.request_data" => "request data",
            "Assertion.response_data_as_document" => "document",
            _ => "URL",
        };
        // JMeter's switch is on the whole test type: with the OR bit no
        // case matches; its OR form ends each pattern's text with a tab.
        let how = match test_type {
            CONTAINS | SUBSTRING => " expected to contain ",
            t if t == NOT | CONTAINS || t == NOT | SUBSTRING => " expected not to contain ",
            MATCH => " expected to match ",
            t if t == NOT | MATCH => " expected not to match ",
            EQUALS => " expected to equal ",
            t if t == NOT | EQUALS => " expected not to equal ",
            _ => " expected something using ",
        };
        let tail = if or { "\t" } else { "" };
        FailureText::Fixed(format!("Test failed: {what}{how}/{pattern}/{tail}"))
    }
}

/// ResponseAssertion's test_type bits.
pub(crate) const MATCH: u32 = 1;
pub(crate) const CONTAINS: u32 = 2;
pub(crate) const NOT: u32 = 4;
pub(crate) const EQUALS: u32 = 8;
pub(crate) const SUBSTRING: u32 = 16;
pub(crate) const OR: u32 = 32;

/// `assertion.equals_section_diff_len`'s default.
const SECTION: usize = 100;

fn trunc(right: bool, s: &[char]) -> String {
    if s.len() <= SECTION {
        s.iter().collect()
    } else if right {
        s[..SECTION].iter().collect::<String>() + "..."
    } else {
        "...".to_string() + &s[s.len() - SECTION..].iter().collect::<String>()
    }
}

/// JMeter's equalsComparisonText: where `received` and `comparison` stop
/// being equal from the front and from the back, the differing middle of
/// each in `[[[...]]]`, the shorter padded with spaces.
fn equals_comparison(received: &str, comparison: &str) -> String {
    let (r, c): (Vec<char>, Vec<char>) = (received.chars().collect(), comparison.chars().collect());
    let min = r.len().min(c.len());
    let first = (0..min).find(|&i| r[i] != c[i]).unwrap_or(min);
    let starting = if first == 0 {
        String::new()
    } else {
        trunc(false, &r[..first])
    };
    // JMeter's indexes may reach -1 (an empty text); i64 as Java's int.
    let (mut last_r, mut last_c) = (r.len() as i64 - 1, c.len() as i64 - 1);
    let first_i = first as i64;
    while last_r > first_i && last_c > first_i && r[last_r as usize] == c[last_c as usize] {
        last_r -= 1;
        last_c -= 1;
    }
    let ending = trunc(true, &r[(last_r + 1) as usize..]);
    let (mut rec, mut comp) = if ending.is_empty() {
        (trunc(true, &r[first..]), trunc(true, &c[first..]))
    } else {
        (
            trunc(true, &r[first..(last_r + 1) as usize]),
            trunc(true, &c[first..(last_c + 1) as usize]),
        )
    };
    let (rl, cl) = (rec.chars().count(), comp.chars().count());
    if rl > cl {
        comp.push_str(&" ".repeat(rl - cl));
    } else {
        rec.push_str(&" ".repeat(cl - rl));
    }
    format!(
        "\n\n****** received  : {starting}[[[{rec}]]]{ending}\n\n****** comparison: {starting}[[[{comp}]]]{ending}\n\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each as JMeter 2.13 wrote it in a JTL for `stampede serve`'s
    /// `/bytes/10` (body `abcdefghij`, code 200) and `/delay/50`.
    #[test]
    fn messages_are_jmeters() {
        let data = "Assertion.response_data";
        let cases = [
            (
                data,
                CONTAINS,
                "ok",
                "Test failed: text expected to contain /ok/",
            ),
            (
                data,
                MATCH,
                "ok",
                "Test failed: text expected to match /ok/",
            ),
            (
                data,
                SUBSTRING,
                "ok",
                "Test failed: text expected to contain /ok/",
            ),
            (
                data,
                NOT | CONTAINS,
                "abc",
                "Test failed: text expected not to contain /abc/",
            ),
            (
                data,
                NOT | SUBSTRING,
                "abc",
                "Test failed: text expected not to contain /abc/",
            ),
            (
                data,
                NOT | MATCH,
                "abcdefghij",
                "Test failed: text expected not to match /abcdefghij/",
            ),
            (
                "Assertion.response_code",
                CONTAINS,
                "5..",
                "Test failed: code expected to contain /5../",
            ),
            (
                "Assertion.response_code",
                SUBSTRING,
                "50",
                "Test failed: code expected to contain /50/",
            ),
            (
                "Assertion.response_headers",
                CONTAINS,
                "X-Nope",
                "Test failed: headers expected to contain /X-Nope/",
            ),
        ];
        let ok = Measured {
            code: "200",
            elapsed_ms: 3,
            body_bytes: 10,
        };
        for (field, kind, pattern, jmeter) in cases {
            let text = FailureText::response(field, kind, pattern, None);
            assert_eq!(text.render(&ok), jmeter, "{field} {kind} {pattern}");
        }
        let code = FailureText::response("Assertion.response_code", EQUALS, "500", None);
        assert_eq!(
            code.render(&ok),
            "Test failed: code expected to equal /\n\n****** received  : [[[2]]]00\n\n****** comparison: [[[5]]]00\n\n/"
        );
        let code = FailureText::response("Assertion.response_code", EQUALS, "404", None);
        assert_eq!(
            code.render(&ok),
            "Test failed: code expected to equal /\n\n****** received  : [[[200]]]\n\n****** comparison: [[[404]]]\n\n/"
        );
        let slow = Measured {
            elapsed_ms: 1667,
            body_bytes: 2000,
            ..ok
        };
        assert_eq!(
            FailureText::Duration { max_ms: 1000 }.render(&slow),
            "The operation lasted too long: It took 1,667 milliseconds, but should not have lasted longer than 1,000 milliseconds."
        );
        let (_, should) = FailureText::size_operator(6).unwrap();
        assert_eq!(
            FailureText::BodySize { should, allowed: 1000 }.render(&slow),
            "The result was the wrong size: It was 2,000 bytes, but should have been less than or equal to 1,000 bytes."
        );
        let (_, should) = FailureText::size_operator(5).unwrap();
        assert_eq!(
            FailureText::BodySize { should, allowed: 11 }.render(&ok),
            "The result was the wrong size: It was 10 bytes, but should have been greater or equal to 11 bytes."
        );
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(999), "999");
    }

    #[test]
    fn the_comparison_pads_and_marks_as_jmeter_does() {
        // JMeter 2.13's texts for a body of abcdefghij.
        assert_eq!(
            equals_comparison("abcdefghij", "ok"),
            "\n\n****** received  : [[[abcdefghij]]]\n\n****** comparison: [[[ok        ]]]\n\n"
        );
        assert_eq!(
            equals_comparison("abcdefghij", "abcdefghij"),
            "\n\n****** received  : abcdefghij[[[]]]\n\n****** comparison: abcdefghij[[[]]]\n\n"
        );
        let custom = FailureText::response("Assertion.response_code", EQUALS, "500", Some("no!"));
        assert_eq!(custom.render(&Measured::default()), "no!");
        let or = FailureText::response("Assertion.response_data", OR | SUBSTRING, "ok", None);
        assert_eq!(
            or.render(&Measured::default()),
            "Test failed: text expected something using /ok/\t"
        );
    }
}
