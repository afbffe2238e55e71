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
    /// A browser that dies before it has opened the page is started again
    /// (twice at most): a test is about the page, and chromium has been
    /// seen to die at start on a busy host.
    pub fn open(chromium: &Path, url: &str) -> Browser {
        let mut attempt = 1;
        loop {
            match Browser::try_open(chromium, url) {
                Ok(browser) => return browser,
                Err(why) if attempt < 3 => {
                    eprintln!("chromium did not open {url} ({why}); starting it again");
                    attempt += 1;
                }
                Err(why) => panic!("chromium did not open {url} three times: {why}"),
            }
        }
    }

    fn try_open(chromium: &Path, url: &str) -> Result<Browser, String> {
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
            // Kept beside the profile: a browser that dies says why.
            .stderr(
                std::fs::File::create(profile.with_extension("stderr"))
                    .map_or_else(|_| Stdio::null(), Stdio::from),
            );
        // SAFETY: between fork and exec only dup2 and fcntl run, which are
        // async-signal-safe; it puts the socket on the fds the DevTools
        // pipe reads (3) and writes (4), without close-on-exec.
        unsafe {
            command.pre_exec(move || {
                for target in [3, 4] {
                    if libc::dup2(fd, target) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // dup2 onto the fd itself (the pair's end may be 3 or
                    // 4) leaves its close-on-exec flag set: clear it, or
                    // chromium starts without its pipe ("Remote debugging
                    // pipe file descriptors are not open").
                    if libc::fcntl(target, libc::F_SETFD, 0) < 0 {
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
        let target = browser.try_call("Target.createTarget", json!({ "url": url }))?;
        let target_id = target["targetId"]
            .as_str()
            .expect("a target id")
            .to_string();
        let attached = browser.try_call(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        )?;
        browser.session = attached["sessionId"]
            .as_str()
            .expect("a session id")
            .to_string();
        Ok(browser)
    }

    /// Sends one command (to the page once attached) and returns its
    /// result; panics on a protocol error or a browser gone.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.try_call(method, params)
            .unwrap_or_else(|why| panic!("{method}: {why}"))
    }

    /// [`Browser::call`], a browser gone or a protocol error an `Err`.
    fn try_call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        if let Err(error) = self.to_browser.write_all(&bytes) {
            return Err(format!(
                "writing to chromium: {error}; {}",
                self.last_words()
            ));
        }
        loop {
            let mut reply = Vec::new();
            if let Err(error) = self.from_browser.read_until(0, &mut reply) {
                return Err(format!(
                    "chromium answers within 30 s: {error}; {}",
                    self.last_words()
                ));
            }
            reply.pop();
            if reply.is_empty() {
                return Err(format!(
                    "chromium closed the DevTools pipe; {}",
                    self.last_words()
                ));
            }
            let reply: Value = serde_json::from_slice(&reply).expect("DevTools JSON");
            if reply["id"] == json!(id) {
                if reply.get("error").is_some() {
                    return Err(format!("a protocol error: {reply}"));
                }
                return Ok(reply["result"].clone());
            }
            if reply.get("method").is_some() && reply.get("id").is_none() {
                self.events.push(reply);
            }
        }
    }

    /// How the browser ended, if it has, and the end of what it wrote to
    /// stderr: why a test lost it.
    fn last_words(&mut self) -> String {
        let status = self.child.try_wait().ok().flatten();
        let stderr =
            std::fs::read_to_string(self.profile.with_extension("stderr")).unwrap_or_default();
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        format!(
            "chromium {}; its last stderr lines: {}",
            status.map_or("still runs".to_string(), |s| format!("exited: {s}")),
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        )
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
        let _ = std::fs::remove_file(self.profile.with_extension("stderr"));
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
