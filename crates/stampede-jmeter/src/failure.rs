//! The `failureMessage` JMeter writes in the JTL for a failed assertion,
//! word for word (ResponseAssertion.getFailText and equalsComparisonText,
//! DurationAssertion's message; checked against JMeter 2.13's JTL):
//! `Test failed: text expected to contain /ok/`, `Test failed: code
//! expected to equal /` with the received and expected codes and their
//! difference marked `[[[...]]]`, `The operation lasted too long: It took
//! 56 milliseconds, but should not have lasted longer than 5
//! milliseconds.`, or the assertion's own custom message (JMeter 5).
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
    CodeEquals { not: bool, pattern: String },
    /// A Duration Assertion of at most `max_ms` milliseconds.
    Duration { max_ms: u64 },
}

impl FailureText {
    /// The message of a sample with response code `code` (`200`) that took
    /// `elapsed_ms`.
    pub fn render(&self, code: &str, elapsed_ms: u64) -> String {
        match self {
            FailureText::Fixed(text) => text.clone(),
            FailureText::CodeEquals { not, pattern } => format!(
                "Test failed: code expected {}to equal /{}/",
                if *not { "not " } else { "" },
                equals_comparison(code, pattern)
            ),
            FailureText::Duration { max_ms } => format!(
                "The operation lasted too long: It took {elapsed_ms} milliseconds, but should not have lasted longer than {max_ms} milliseconds."
            ),
        }
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
        for (field, kind, pattern, jmeter) in cases {
            let text = FailureText::response(field, kind, pattern, None);
            assert_eq!(text.render("200", 3), jmeter, "{field} {kind} {pattern}");
        }
        let code = FailureText::response("Assertion.response_code", EQUALS, "500", None);
        assert_eq!(
            code.render("200", 3),
            "Test failed: code expected to equal /\n\n****** received  : [[[2]]]00\n\n****** comparison: [[[5]]]00\n\n/"
        );
        let code = FailureText::response("Assertion.response_code", EQUALS, "404", None);
        assert_eq!(
            code.render("200", 3),
            "Test failed: code expected to equal /\n\n****** received  : [[[200]]]\n\n****** comparison: [[[404]]]\n\n/"
        );
        assert_eq!(
            FailureText::Duration { max_ms: 5 }.render("200", 56),
            "The operation lasted too long: It took 56 milliseconds, but should not have lasted longer than 5 milliseconds."
        );
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
        assert_eq!(custom.render("200", 0), "no!");
        let or = FailureText::response("Assertion.response_data", OR | SUBSTRING, "ok", None);
        assert_eq!(
            or.render("200", 0),
            "Test failed: text expected something using /ok/\t"
        );
    }
}
