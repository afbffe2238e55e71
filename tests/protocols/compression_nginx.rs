//! `--compressed` and `--decode` against a real nginx with `gzip on`,
//! configured by the test: nginx's own access log says it
//! compressed (`$gzip_ratio`) and how many bytes it sent (`$bytes_sent`:
//! heads, bodies and their chunked framing), which must be stampede's
//! `bytes.received` exactly: the bytes on the wire, on every engine path. With `--decode` the
//! decoded bytes are the file's size per response; without
//! `--compressed` nginx sends the file as it is.

use stampede_testkit::{event_loop_or_skip, free_port, run_on_one_loop, temp_dir, EVENT_LOOPS};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const FILE_LEN: usize = 20_000;

struct Nginx {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Nginx {
    fn start(program: &Path, dir: &Path) -> Nginx {
        let port = free_port();
        let root = dir.join("www");
        std::fs::create_dir_all(&root).unwrap();
        let page: Vec<u8> = (0..)
            .flat_map(|i: u32| {
                format!("row {i}: a line of text that compresses well\n").into_bytes()
            })
            .take(FILE_LEN)
            .collect();
        std::fs::write(root.join("page.txt"), page).unwrap();
        let log = dir.join("access.log");
        let conf = format!(
            "daemon off;\nworker_processes 1;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  client_body_temp_path {dir}/body;\n  proxy_temp_path {dir}/proxy;\n\
               fastcgi_temp_path {dir}/fastcgi;\n  uwsgi_temp_path {dir}/uwsgi;\n  scgi_temp_path {dir}/scgi;\n\
               types {{ text/plain txt; }}\n\
               gzip on;\n  gzip_types text/plain;\n  gzip_min_length 20;\n  gzip_vary on;\n\
               log_format sizes '$bytes_sent $gzip_ratio \"$http_accept_encoding\"';\n\
               access_log {log} sizes;\n\
               server {{\n    listen 127.0.0.1:{port};\n    root {root};\n  }}\n}}\n",
            dir = dir.display(),
            log = log.display(),
            root = root.display(),
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(program)
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&conf_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nginx does not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Nginx { child, port, log }
    }

    /// The log lines since the last call: (bytes sent, gzip ratio, Accept-Encoding).
    fn take_log(&self) -> Vec<(u64, String, String)> {
        // nginx writes each line as the request ends; give the last a moment.
        std::thread::sleep(Duration::from_millis(200));
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        std::fs::write(&self.log, "").unwrap();
        text.lines()
            .map(|line| {
                let (sent, rest) = line.split_once(' ').expect("a sizes line");
                let (ratio, accept) = rest.split_once(' ').expect("a sizes line");
                (
                    sent.parse().expect("bytes sent"),
                    ratio.to_string(),
                    accept.trim_matches('"').to_string(),
                )
            })
            .collect()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

#[test]
fn nginx_gzip_bytes_on_the_wire_and_decoded_match_its_log() {
    let program = stampede_testkit::require_tool!("nginx");
    let dir = temp_dir("compression-nginx");
    let nginx = Nginx::start(&program, &dir);
    let url = format!("http://127.0.0.1:{}/page.txt", nginx.port);
    let n = 30u64;
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = run_on_one_loop(io, &[&url, "--compressed", "-n", "30", "-c", "3"]) else {
            continue;
        };
        let at = format!("--io {io}: {}", run.stderr());
        assert_eq!(run.count("/requests/success"), n, "{at}");
        let log = nginx.take_log();
        assert_eq!(log.len() as u64, n, "{at}: {log:?}");
        assert!(
            log.iter()
                .all(|(_, ratio, accept)| ratio != "-" && accept == "gzip, br, zstd"),
            "{at}: nginx compressed every response: {log:?}"
        );
        let sent: u64 = log.iter().map(|(bytes, _, _)| bytes).sum();
        assert_eq!(
            run.count("/bytes/received"),
            sent,
            "{at}: the bytes nginx sent"
        );
        let body = run.count("/bytes/body");
        assert!(body < n * FILE_LEN as u64 / 3, "{at}: {body} body bytes");

        let decoded = run_on_one_loop(io, &[&url, "--decode", "-n", "30", "-c", "3"]).expect("ran");
        assert_eq!(
            decoded.count("/compression/decoded_bytes"),
            n * FILE_LEN as u64,
            "{at}"
        );
        assert_eq!(decoded.count("/compression/encoded_responses"), n, "{at}");
        assert_eq!(
            decoded.count("/bytes/body"),
            body,
            "{at}: the same bytes on the wire"
        );
        nginx.take_log();

        let checked = run_on_one_loop(
            io,
            &[
                &url,
                "--compressed",
                "-n",
                "6",
                "--check",
                "body contains \"row 17: a line\"",
            ],
        )
        .expect("ran");
        assert_eq!(
            checked.count("/requests/success"),
            6,
            "{at}: {}",
            checked.result()
        );
        nginx.take_log();

        let plain = run_on_one_loop(io, &[&url, "-n", "10", "-c", "2"]).expect("ran");
        assert_eq!(plain.count("/bytes/body"), 10 * FILE_LEN as u64, "{at}");
        let log = nginx.take_log();
        assert!(
            log.iter().all(|(_, ratio, _)| ratio == "-"),
            "{at}: {log:?}"
        );
    }
    drop(nginx);
    let _ = std::fs::remove_dir_all(&dir);
}
