//! A stand-alone `serve` for benchmarks and manual tests before the `stampede serve`
//! subcommand is wired: `serve [PORT] [THREADS] [--log PATH|-] [--root DIR]`.

use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cfg = stampede_target::Config::default();
    let mut port = 3000u16;
    let mut positional = 0;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--log" => {
                i += 1;
                cfg.access_log = Some(match args[i].as_str() {
                    "-" => stampede_target::AccessLogDest::Stdout,
                    p => stampede_target::AccessLogDest::File(p.into()),
                });
            }
            "--root" => {
                i += 1;
                cfg.root = Some(args[i].clone().into());
            }
            a => {
                let n: usize = a.parse().expect("a number");
                if positional == 0 {
                    port = n as u16;
                } else {
                    cfg.threads = n;
                }
                positional += 1;
            }
        }
        i += 1;
    }
    let addr = format!("127.0.0.1:{port}").parse().expect("address");
    let handle = stampede_target::Server::start(addr, cfg).expect("start");
    eprintln!("serve example: listening on {}", handle.local_addr());
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
