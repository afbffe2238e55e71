//! Which route a request went to, as a label for `serve --metrics`
//! (`stampede_target_route_requests{route,code}`): the built-in pages, each
//! test route by its name (not by its argument: `/delay/20` and `/delay/300`
//! are both `/delay`, so the label set stays small), static files, and
//! everything else. Counted only when the server is asked to
//! ([`crate::Config::count_routes`]); a server without `--metrics` does no
//! work for it.

/// The routes, in the order of [`NAMES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Page,
    Bytes,
    Chunked,
    Delay,
    Cpu,
    Status,
    Echo,
    Stats,
    Redirect,
    RedirectTo,
    Login,
    Me,
    Json,
    Gzip,
    Deflate,
    Br,
    Zstd,
    Files,
    Other,
}

/// Routes counted apart.
pub(crate) const ROUTES: usize = 19;

/// The label of each route, indexed by `Route as usize`.
pub const NAMES: [&str; ROUTES] = [
    "/",
    "/bytes",
    "/chunked",
    "/delay",
    "/cpu",
    "/status",
    "/echo",
    "/stats",
    "/redirect",
    "/redirect-to",
    "/login",
    "/me",
    "/json",
    "/gzip",
    "/deflate",
    "/br",
    "/zstd",
    "files",
    "other",
];

impl Route {
    /// The route of a request for `target` (path and query, as received),
    /// with the test routes under `prefix` (`""` or e.g. `/_stampede`) and
    /// static files served when `files` is true. The same choice as
    /// routes.rs makes, by the first path segment only.
    pub(crate) fn of(target: &str, prefix: &str, files: bool) -> Route {
        let path = target.split_once('?').map_or(target, |(p, _)| p);
        if !files && matches!(path, "/" | "/index.html" | "/1k.html") {
            return Route::Page;
        }
        let routed = path.strip_prefix(prefix).filter(|r| r.starts_with('/'));
        let name = routed.map(|r| r[1..].split_once('/').map_or(&r[1..], |(n, _)| n));
        match name {
            Some("bytes") => Route::Bytes,
            Some("chunked") => Route::Chunked,
            Some("delay") => Route::Delay,
            Some("cpu") => Route::Cpu,
            Some("status") => Route::Status,
            Some("echo") => Route::Echo,
            Some("stats") => Route::Stats,
            Some("redirect") => Route::Redirect,
            Some("redirect-to") => Route::RedirectTo,
            Some("login") => Route::Login,
            Some("me") => Route::Me,
            Some("json") => Route::Json,
            Some("gzip") => Route::Gzip,
            Some("deflate") => Route::Deflate,
            Some("br") => Route::Br,
            Some("zstd") => Route::Zstd,
            _ if files => Route::Files,
            _ => Route::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_named_by_their_first_segment() {
        assert_eq!(Route::of("/", "", false), Route::Page);
        assert_eq!(Route::of("/index.html?x=1", "", false), Route::Page);
        assert_eq!(Route::of("/delay/20", "", false), Route::Delay);
        assert_eq!(Route::of("/delay/300?a", "", false), Route::Delay);
        assert_eq!(Route::of("/redirect/3", "", false), Route::Redirect);
        assert_eq!(
            Route::of("/redirect-to?url=%2F", "", false),
            Route::RedirectTo
        );
        assert_eq!(Route::of("/login", "", false), Route::Login);
        assert_eq!(Route::of("/nothing", "", false), Route::Other);
        assert_eq!(Route::of("/gzip/100", "", false), Route::Gzip);
        assert_eq!(NAMES[Route::Zstd as usize], "/zstd");
        assert_eq!(Route::of("/_s/cpu/10", "/_s", true), Route::Cpu);
        assert_eq!(Route::of("/cpu/10", "/_s", true), Route::Files);
        assert_eq!(Route::of("/", "", true), Route::Files);
        assert_eq!(NAMES[Route::Other as usize], "other");
        assert_eq!(NAMES[Route::Files as usize], "files");
    }
}
