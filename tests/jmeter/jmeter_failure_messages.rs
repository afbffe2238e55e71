//! failureMessage in `stampede jmeter`'s JTL is JMeter's, word for word:
//! crates/stampede-jmeter/testdata/assertions.jmx (one sampler per
//! assertion against `stampede serve`'s `/bytes/10`, body `abcdefghij`)
//! gave these texts in JMeter 2.13's JTL, and so must stampede's.

use stampede_testkit::jmeter as support;

use stampede_testkit::{temp_dir, text, ServeProcess};
use support::{jmeter, testdata};

/// Label → JMeter 2.13's failureMessage (responseCode for `timeout`).
const JMETER: [(&str, &str); 9] = [
    ("contains", "Test failed: text expected to contain /ok/"),
    ("matches", "Test failed: text expected to match /ok/"),
    ("substring", "Test failed: text expected to contain /ok/"),
    (
        "codeequals",
        "Test failed: code expected to equal /\n\n****** received  : [[[2]]]00\n\n****** comparison: [[[5]]]00\n\n/",
    ),
    ("codecontains", "Test failed: code expected to contain /5../"),
    ("headers", "Test failed: headers expected to contain /X-Nope: 1/"),
    (
        "two",
        "Test failed: code expected to equal /\n\n****** received  : [[[200]]]\n\n****** comparison: [[[404]]]\n\n/",
    ),
    (
        "size",
        "The result was the wrong size: It was 2,000 bytes, but should have been less than or equal to 1,000 bytes.",
    ),
    ("timeout", ""),
];

#[test]
fn failure_messages_are_jmeters() {
    let serve = ServeProcess::start(&[]);
    let dir = temp_dir("jmeter-failure-messages");
    let jtl = dir.join("a.jtl");
    let (plan, jtl_arg) = (testdata("assertions.jmx"), jtl.display().to_string());
    let port = format!("-Jport={}", serve.port);
    let out = jmeter(&["-n", "-t", &plan, "-l", &jtl_arg, &port]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let data = std::fs::read_to_string(&jtl).unwrap();
    let mut reader = csv::Reader::from_reader(data.as_bytes());
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let field = |label: &str, column: usize| -> String {
        let row = rows.iter().find(|r| &r[2] == label);
        row.unwrap_or_else(|| panic!("no {label} in {data}"))[column].to_string()
    };
    for (label, message) in JMETER {
        assert_eq!(field(label, 8), message, "{label}'s failureMessage");
        assert_eq!(field(label, 7), "false", "{label} failed");
    }
    // The Duration Assertion names the sample's own elapsed time.
    let elapsed = field("duration", 1);
    assert_eq!(
        field("duration", 8),
        format!("The operation lasted too long: It took {elapsed} milliseconds, but should not have lasted longer than 5 milliseconds.")
    );
    assert_eq!(
        (field("timeout", 3), field("timeout", 4)),
        (
            "Non HTTP response code: java.net.SocketTimeoutException".to_string(),
            "Non HTTP response message: Read timed out".to_string()
        )
    );
}

#[test]
fn a_refused_connection_reads_as_jmeter_2_13_wrote_it() {
    // The same plan aimed at a port nothing listens on; JMeter 2.13 wrote
    // `Non HTTP response code: java.net.ConnectException,Non HTTP response
    // message: Connection refused,...,text,false,` (no failureMessage).
    let dir = temp_dir("jmeter-refused");
    let port = stampede_testkit::free_port();
    let plan = std::fs::read_to_string(testdata("assertions.jmx"))
        .unwrap()
        .replace("${__P(port,8000)}", &port.to_string());
    let path = dir.join("refused.jmx");
    std::fs::write(&path, plan).unwrap();
    let jtl = dir.join("r.jtl");
    let (plan_arg, jtl_arg) = (path.display().to_string(), jtl.display().to_string());
    let out = jmeter(&["-n", "-t", &plan_arg, "-l", &jtl_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let data = std::fs::read_to_string(&jtl).unwrap();
    let mut reader = csv::Reader::from_reader(data.as_bytes());
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 10, "{data}");
    for row in &rows {
        assert_eq!(
            [&row[3], &row[4], &row[6], &row[7], &row[8]],
            [
                "Non HTTP response code: java.net.ConnectException",
                "Non HTTP response message: Connection refused",
                "text",
                "false",
                ""
            ],
            "{data}"
        );
    }
}
