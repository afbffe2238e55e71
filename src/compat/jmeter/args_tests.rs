//! Tests of JMeter's option grammar ([`super::read`]), each form as
//! CLArgsParser.java reads it (src/jorphan/src/main/java/org/apache/commons/
//! cli/avalon/CLArgsParser.java: `parseShortOption`, `parseArguments`,
//! `parseNormal`, `checkIncompatibilities`) with the descriptors of
//! src/core/src/main/java/org/apache/jmeter/JMeter.java (`-t` and `-q`
//! ARGUMENT_REQUIRED, `-J` ARGUMENTS_REQUIRED_2 with DUPLICATES_ALLOWED).

use super::*;

const SPECS: &[JOpt] = &[
    JOpt::new("nongui", 'n', "nongui", Arity::Flag),
    JOpt::new("force", 'f', "forceDeleteResultFile", Arity::Flag),
    JOpt::new("testfile", 't', "testfile", Arity::One),
    JOpt::new("logfile", 'l', "logfile", Arity::One),
    JOpt::new("addprop", 'q', "addprop", Arity::One).repeated(),
    JOpt::new("property", 'J', "jmeterproperty", Arity::Two).repeated(),
    JOpt::long("dry-run", "dry-run", Arity::Flag),
];

fn words(line: &[&str]) -> Vec<String> {
    line.iter().map(|w| w.to_string()).collect()
}

/// `key:arg|arg` per option, `text:WORD` per other word.
fn read_line(line: &[&str]) -> Result<Vec<String>, String> {
    Ok(read(SPECS, &words(line))?
        .into_iter()
        .map(|w| match w {
            Word::Opt { key, args, .. } => format!("{key}:{}", args.join("|")),
            Word::Text(text) => format!("text:{text}"),
        })
        .collect())
}

#[test]
fn a_value_attached_separate_or_after_an_equals_sign() {
    for line in [
        &["-tplan.jmx"][..],
        &["-t", "plan.jmx"],
        &["-t=plan.jmx"],
        &["--testfile=plan.jmx"],
        &["--testfile", "plan.jmx"],
    ] {
        assert_eq!(read_line(line).unwrap(), ["testfile:plan.jmx"], "{line:?}");
    }
    // One `=` is the separator; a second is the value's.
    assert_eq!(read_line(&["-t==x"]).unwrap(), ["testfile:=x"]);
    // A value may begin with a dash: it is the option's.
    assert_eq!(read_line(&["-l", "-x.jtl"]).unwrap(), ["logfile:-x.jtl"]);
}

#[test]
fn the_dockerfile_line_reads_every_file() {
    assert_eq!(
        read_line(&[
            "-n",
            "-t=/plans/a.jmx",
            "-l=/out/a.jtl",
            "-q=/p/u.properties"
        ])
        .unwrap(),
        [
            "nongui:",
            "testfile:/plans/a.jmx",
            "logfile:/out/a.jtl",
            "addprop:/p/u.properties"
        ]
    );
}

#[test]
fn flags_cluster_and_end_at_an_option_with_a_value() {
    assert_eq!(
        read_line(&["-nft", "plan.jmx"]).unwrap(),
        ["nongui:", "force:", "testfile:plan.jmx"]
    );
    assert_eq!(
        read_line(&["-ntplan.jmx"]).unwrap(),
        ["nongui:", "testfile:plan.jmx"]
    );
}

#[test]
fn two_argument_properties() {
    for line in [
        &["-Jport=80"][..],
        &["-J", "port=80"],
        &["--jmeterproperty=port=80"],
        &["--jmeterproperty", "port=80"],
        // No `=`: the next word (no option) is the value.
        &["-Jport", "80"],
        &["-J", "port", "80"],
    ] {
        assert_eq!(read_line(line).unwrap(), ["property:port|80"], "{line:?}");
    }
    // The value keeps later `=`; no value is an empty one (JMeter removes the property).
    assert_eq!(read_line(&["-Ja=b=c"]).unwrap(), ["property:a|b=c"]);
    assert_eq!(read_line(&["-Jport="]).unwrap(), ["property:port|"]);
    assert_eq!(
        read_line(&["-Jport", "-n"]).unwrap(),
        ["property:port|", "nongui:"]
    );
    assert_eq!(read_line(&["-Jport"]).unwrap(), ["property:port|"]);
}

#[test]
fn words_after_the_double_dash_are_text() {
    assert_eq!(
        read_line(&["-n", "--", "-t", "x"]).unwrap(),
        ["nongui:", "text:-t", "text:x"]
    );
    assert_eq!(read_line(&["extra"]).unwrap(), ["text:extra"]);
}

#[test]
fn bad_lines_name_the_option() {
    let err = |line: &[&str]| read_line(line).unwrap_err();
    assert_eq!(err(&["-x"]), "unknown option -x");
    assert_eq!(err(&["-nx"]), "unknown option -x");
    assert_eq!(err(&["--nope=1"]), "unknown option --nope");
    assert_eq!(err(&["-t"]), "missing argument to option -t");
    assert_eq!(err(&["-t="]), "missing argument to option -t");
    assert_eq!(
        err(&["--testfile"]),
        "missing argument to option --testfile"
    );
    assert_eq!(err(&["-J"]), "missing argument to option -J");
    assert_eq!(
        err(&["-J=1"]),
        "unable to parse first argument for option -J"
    );
    assert_eq!(err(&["--dry-run=1"]), "option --dry-run takes no value");
    assert_eq!(err(&["-"]), "malformed option -");
    assert_eq!(
        err(&["-t", "a.jmx", "--testfile=b.jmx"]),
        "duplicate options for -t/--testfile found"
    );
    // DUPLICATES_ALLOWED: -q and -J repeat.
    assert_eq!(
        read_line(&["-q", "a", "-q", "b", "-Ja=1", "-Ja=2"]).unwrap(),
        ["addprop:a", "addprop:b", "property:a|1", "property:a|2"]
    );
}
