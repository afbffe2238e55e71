//! Transaction Controller samples in `stampede jmeter`'s JTL, as JMeter
//! 2.13 wrote them for crates/stampede-jmeter/testdata/transactions.jmx
//! against `stampede serve` (2 threads, 2 loops; `Tx`: ok + bad,
//! includeTimers=false; `TxT`: a 50 ms timer then ok2, includeTimers=true;
//! `Parent`: p1 + p2 with generateParentSample; then `after`). JMeter's
//! lines for one thread's pass were:
//!
//! ```text
//! ...,ok,200,OK,TG 1-1,text,true,235,...
//! ...,bad,500,Internal Server Error,TG 1-1,text,false,165,...
//! ...,132,Tx,,"Number of samples in transaction : 2, number of failing samples : 1",TG 1-1,,false,400,2,2,132
//! ...,29,ok2,200,OK,TG 1-1,text,true,126,2,2,29
//! ...,80,TxT,200,"Number of samples in transaction : 1, number of failing samples : 0",TG 1-1,,true,126,2,2,29
//! ...,2,Parent,404,"Number of samples in transaction : 2, number of failing samples : 1",TG 1-1,,false,285,2,2,0
//! ...,1,after,200,OK,TG 1-1,text,true,138,2,2,1
//! ```

use stampede_testkit::jmeter as support;

use stampede_testkit::{temp_dir, text, ServeProcess};
use std::collections::HashMap;
use support::{jmeter, testdata};

type Row = HashMap<String, String>;

fn rows(jtl: &str) -> Vec<Row> {
    let mut reader = csv::Reader::from_reader(jtl.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .cloned()
                .zip(r.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn num(row: &Row, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column}: {row:?}"))
}

#[test]
fn transaction_controllers_add_their_samples_as_jmeter_writes_them() {
    let serve = ServeProcess::start(&[]);
    let dir = temp_dir("jmeter-transactions");
    let jtl = dir.join("t.jtl");
    let port = format!("-Jport={}", serve.port);
    let plan = testdata("transactions.jmx");
    let jtl_arg = jtl.display().to_string();
    let out = jmeter(&["-n", "-t", &plan, "-l", &jtl_arg, &port]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let all = rows(&std::fs::read_to_string(&jtl).unwrap());
    for thread in ["TG 1-1", "TG 1-2"] {
        let lines: Vec<&Row> = all.iter().filter(|r| r["threadName"] == thread).collect();
        let labels: Vec<&str> = lines.iter().map(|r| r["label"].as_str()).collect();
        let pass = ["ok", "bad", "Tx", "ok2", "TxT", "Parent", "after"];
        assert_eq!(labels, [pass, pass].concat(), "{thread}");
        for at in [0, pass.len()] {
            let (ok, bad, tx) = (lines[at], lines[at + 1], lines[at + 2]);
            assert_eq!(tx["responseCode"], "", "a failed transaction has no code");
            assert_eq!(
                tx["responseMessage"],
                "Number of samples in transaction : 2, number of failing samples : 1"
            );
            assert_eq!(
                (tx["success"].as_str(), tx["dataType"].as_str()),
                ("false", "")
            );
            assert_eq!(
                (tx["URL"].as_str(), tx["failureMessage"].as_str()),
                ("", "")
            );
            for column in ["bytes", "elapsed", "Latency", "Connect"] {
                assert_eq!(
                    num(tx, column),
                    num(ok, column) + num(bad, column),
                    "{column}"
                );
            }
            // It starts before ok's timers: at the user's previous sample's
            // end (ok's own start on the user's very first sample).
            assert!(num(tx, "timeStamp") <= num(ok, "timeStamp"));
            let (ok2, txt) = (lines[at + 3], lines[at + 4]);
            assert_eq!(
                (txt["responseCode"].as_str(), txt["success"].as_str()),
                ("200", "true")
            );
            assert_eq!(
                txt["responseMessage"],
                "Number of samples in transaction : 1, number of failing samples : 0"
            );
            // includeTimers: ok2's 50 ms timer is inside the transaction.
            assert!(
                num(txt, "elapsed") >= num(ok2, "elapsed") + 45,
                "{txt:?} {ok2:?}"
            );
            assert_eq!(
                num(txt, "timeStamp"),
                num(bad, "timeStamp") + num(bad, "elapsed")
            );
            let parent = lines[at + 5];
            assert_eq!(parent["responseCode"], "404", "the first failing sampler's");
            assert_eq!(
                parent["responseMessage"],
                "Number of samples in transaction : 2, number of failing samples : 1"
            );
            assert_eq!(
                (num(parent, "Latency"), parent["success"].as_str()),
                (0, "false")
            );
        }
    }
    assert!(!all.iter().any(|r| r["label"] == "p1" || r["label"] == "p2"));
}
