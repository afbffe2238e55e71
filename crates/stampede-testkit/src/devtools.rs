//! Headless Chromium driven over the DevTools protocol, for tests of pages
//! that live (`run --web`): `--dump-dom` only shows a page at its load,
//! while a live page changes afterwards and has a button to press. The
//! protocol runs over `--remote-debugging-pipe` (NUL-terminated JSON on
//! fds 3 and 4, here one Unix socket pair), so no WebSocket client is
//! needed. Every wait is bounded; the browser is killed when dropped.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A headless Chromium with one page open.
pub struct Browser {
    child: Child,
    to_browser: UnixStream,
    from_browser: BufReader<UnixStream>,
    session: String,
    next_id: u64,
    profile: PathBuf,
    /// The events the page sent (`Network.*` once enabled), in order.
    events: Vec<Value>,
}

impl Browser {
    /// Starts `chromium` (its path) with a fresh profile and opens `url`.
    pub fn open(chromium: &Path, url: &str) -> Browser {
        let (ours, theirs) = UnixStream::pair().expect("a socket pair");
        let fd = theirs.as_raw_fd();
        let profile = crate::temp_dir("devtools-profile");
        let mut command = Command::new(chromium);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--window-size=1280,2400",
                // Host names resolve to nothing: a page under test talks to
                // 127.0.0.1 by address, or fails visibly.
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--remote-debugging-pipe",
                "about:blank",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: between fork and exec only dup2 runs, which is
        // async-signal-safe; it puts the socket on the fds the DevTools
        // pipe reads (3) and writes (4), without close-on-exec.
        unsafe {
            command.pre_exec(move || {
                for target in [3, 4] {
                    if libc::dup2(fd, target) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("chromium starts");
        drop(theirs);
        ours.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("a read timeout");
        let from_browser = BufReader::new(ours.try_clone().expect("a second handle"));
        let mut browser = Browser {
            child,
            to_browser: ours,
            from_browser,
            session: String::new(),
            next_id: 0,
            profile,
            events: Vec::new(),
        };
        let target = browser.call("Target.createTarget", json!({ "url": url }));
        let target_id = target["targetId"]
            .as_str()
            .expect("a target id")
            .to_string();
        let attached = browser.call(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        );
        browser.session = attached["sessionId"]
            .as_str()
            .expect("a session id")
            .to_string();
        browser
    }

    /// Sends one command (to the page once attached) and returns its
    /// result; panics on a protocol error.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.to_browser
            .write_all(&bytes)
            .expect("writing to chromium");
        loop {
            let mut reply = Vec::new();
            self.from_browser
                .read_until(0, &mut reply)
                .expect("chromium answers within 30 s");
            reply.pop();
            assert!(!reply.is_empty(), "chromium closed the DevTools pipe");
            let reply: Value = serde_json::from_slice(&reply).expect("DevTools JSON");
            if reply["id"] == json!(id) {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
            if reply.get("method").is_some() && reply.get("id").is_none() {
                self.events.push(reply);
            }
        }
    }

    /// The value of a JavaScript expression in the page (JSON-able).
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }

    /// Evaluates `expression` every 200 ms until it is true, or `limit`
    /// passes (then false).
    pub fn wait_until(&mut self, expression: &str, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if self.eval(expression) == json!(true) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        false
    }

    /// Opens `url` in the page and waits (up to `limit`) until it and
    /// every request it started are done: the document complete, and each
    /// `Network.requestWillBeSent` seen so far finished or failed.
    pub fn visit(&mut self, url: &str, limit: Duration) -> bool {
        self.call("Page.navigate", json!({ "url": url }));
        let until = Instant::now() + limit;
        while Instant::now() < until {
            let complete = self.eval("document.readyState") == json!("complete");
            if complete && self.requests_done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// True when every request started has finished or failed.
    fn requests_done(&self) -> bool {
        let ids = |method: &str| -> std::collections::HashSet<String> {
            (self.events.iter())
                .filter(|e| e["method"] == method)
                .filter_map(|e| e["params"]["requestId"].as_str().map(str::to_string))
                .collect()
        };
        let mut done = ids("Network.loadingFinished");
        done.extend(ids("Network.loadingFailed"));
        ids("Network.requestWillBeSent").is_subset(&done)
    }

    /// The events received so far, taken.
    pub fn take_events(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.events)
    }

    /// A PNG of the whole window.
    pub fn screenshot(&mut self) -> Vec<u8> {
        let shot = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        let data = shot["data"].as_str().expect("screenshot data");
        decode_base64(data)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// Standard base64 (the screenshot's encoding), without a crate for it.
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut bits, mut count) = (0u32, 0);
    for sextet in text.bytes().filter_map(value) {
        bits = (bits << 6) | u32::from(sextet);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(super::decode_base64("aGVsbG8="), b"hello");
        assert_eq!(super::decode_base64("aGk"), b"hi");
        assert_eq!(super::decode_base64("AAEC"), [0, 1, 2]);
    }
}
