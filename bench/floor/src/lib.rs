//! What both floor probes share: their command line and the request. A probe
//! keeps N keep-alive connections busy for a duration with one GET each and
//! takes a response as done once RESPONSE_BYTES bytes arrived (the target is
//! a static file, so every response has the same size). Exits with a message
//! on any error: a probe is for measuring, not for robustness. The paced probe
//! (floor-paced) takes a seventh argument, the rate in requests per second.

use std::time::Duration;

pub struct Args {
    pub address: String,
    pub connections: usize,
    pub duration: Duration,
    pub path: String,
    pub response_bytes: usize,
    /// Requests per second (the paced probe only).
    pub rate: Option<u64>,
}

impl Args {
    /// `probe ADDRESS CONNECTIONS SECONDS PATH RESPONSE_BYTES [RATE]`
    pub fn from_env() -> Args {
        let args: Vec<String> = std::env::args().collect();
        if args.len() != 6 && args.len() != 7 {
            fail("usage: probe ADDRESS CONNECTIONS SECONDS PATH RESPONSE_BYTES [RATE]");
        }
        let number = |i: usize| -> u64 {
            args[i]
                .parse()
                .unwrap_or_else(|_| fail(&format!("not a number: {}", args[i])))
        };
        Args {
            address: args[1].clone(),
            connections: number(2) as usize,
            duration: Duration::from_secs(number(3)),
            path: args[4].clone(),
            response_bytes: number(5) as usize,
            rate: (args.len() == 7).then(|| number(6)),
        }
    }

    pub fn request(&self) -> Vec<u8> {
        format!("GET {} HTTP/1.1\r\nHost: {}\r\n\r\n", self.path, self.address).into_bytes()
    }
}

pub fn fail(message: &str) -> ! {
    eprintln!("floor probe: {message}");
    std::process::exit(2)
}
