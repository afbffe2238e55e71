//! A redirect to a scheme stampede cannot follow
//! (`ftp://…`) is not followed: its 3xx is the response, counted with the
//! redirects not followed, and the summary's Redirects line says so.

use stampede_testkit::{binary, one_thread, run_stampede, spawn_target};

#[test]
fn a_redirect_to_ftp_is_counted_as_not_followed() {
    let target = spawn_target(one_thread());
    let url = format!(
        "http://{}/redirect-to?url=ftp%3A%2F%2F127.0.0.1%2Fx",
        target.local_addr()
    );
    for io in ["epoll", "tokio"] {
        let run = run_stampede(
            binary(),
            &[
                &url,
                "--redirects",
                "2",
                "-n",
                "3",
                "-c",
                "1",
                "-t",
                "1",
                "--io",
                io,
            ],
        );
        let at = format!("--io {io}: {}\n{}", run.stdout(), run.result());
        assert_eq!(run.result()["redirects"]["offsite"], 3, "{at}");
        assert_eq!(run.result()["redirects"]["followed"], 0, "{at}");
        let line = run
            .stdout()
            .lines()
            .find(|l| l.trim_start().starts_with("Redirects"))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no Redirects line: {at}"));
        assert!(line.contains("3 not followed"), "{line}");
        assert!(line.contains("not http/https"), "{line}");
    }
}
