//! A Lua error during the run shows the script's frames only, indented
//! under the message as every multi-line error is (trial D15: the
//! traceback had `[C]` frames, stampede's own hook frame and a tab
//! indentation unlike the rest of the block).

use stampede_testkit::wrk_scripts as support;

use stampede_testkit::{binary, spawn_target, TargetConfig};
use support::script;

#[test]
fn the_traceback_shows_the_scripts_frames_indented_under_the_message() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let file = script(
        "boom.lua",
        "local function build(n)\n  if n > 3 then error('boom at ' .. n) end\n  return wrk.format()\nend\nlocal n = 0\nfunction request()\n  n = n + 1\n  local r = build(n)\n  return r\nend\n",
    );
    let file = file.to_str().unwrap();
    for words in [
        vec!["wrk", "-t1", "-c1", "-d2s", "-s", file, &url],
        vec![
            "run", &url, "-t", "1", "-c", "1", "-d", "2s", "-q", "--script", file,
        ],
    ] {
        let (code, _, stderr) = support::run(binary(), &words);
        assert_eq!(code, Some(2), "{stderr}");
        let block: Vec<&str> = stderr
            .lines()
            .skip_while(|l| !l.contains("request() failed"))
            .collect();
        assert!(
            block[0].starts_with("stampede: error: ")
                && block[0].ends_with("boom.lua:2: boom at 4"),
            "{stderr}"
        );
        let indent = " ".repeat("stampede: error: ".len());
        assert_eq!(
            &block[1..],
            [
                format!("{indent}stack traceback:"),
                format!("{indent}  {file}:2: in upvalue 'build'"),
                format!("{indent}  {file}:8: in function 'request'"),
            ],
            "{stderr}"
        );
    }
}
