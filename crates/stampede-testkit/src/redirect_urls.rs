//! URLs of the built-in target's `/redirect-to` route, which answers 302
//! with the `url` query value as its Location: the redirect tests' way to
//! send a hop to another origin.

/// `url` percent-encoded as a query value.
pub fn query_encoded(url: &str) -> String {
    url.replace('%', "%25")
        .replace(':', "%3A")
        .replace('/', "%2F")
        .replace('?', "%3F")
        .replace('=', "%3D")
        .replace('&', "%26")
}

/// `origin`'s `/redirect-to` leading to `to`.
pub fn redirect_to(origin: &str, to: &str) -> String {
    format!("{origin}/redirect-to?url={}", query_encoded(to))
}
