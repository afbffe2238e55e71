//! Following redirects (`--redirects N`): which responses are a
//! hop, where a hop goes, and the request that goes there. One rulebook for
//! every HTTP/1.1 path (the reactors' books and the tokio slot):
//!
//! - 301, 302 and 303 are followed with a GET without a body (what browsers
//!   and curl do for 301/302 after a POST, and what 303 asks); 307 and 308
//!   repeat the method and the body;
//! - `Location` may be absolute (`http://host/p`), scheme-relative
//!   (`//host/p`), absolute-path (`/p`) or relative (`p`, `../p`, `?q`),
//!   resolved against the URL of the request it answers (after a hop to
//!   another origin, that origin's);
//! - a hop to the run's own origin goes on the slot's own connection (the
//!   pool); a hop to another origin (other scheme, host or port) goes on a
//!   connection to that origin ([`Hops::origin`] names it: an id in the
//!   worker's `OriginBook`, redirect_origin.rs), with its own `Host`
//!   header. Each slot keeps at most two connections: its own and one side
//!   connection to the other origin it went to last, kept alive for the next
//!   hop there; the rule for switching between them is
//!   redirect_switch.rs, which both kinds of slot follow;
//! - through a proxy or a Unix socket the engine reaches one origin only: a
//!   hop to another is not followed, the 3xx is the response and it is
//!   counted offsite (as is one to a 65th other origin of a worker, and
//!   one to a scheme other than http and https, `ftp://…`);
//! - after `N` hops a further redirect is the `redirect_limit` error (with
//!   a sample naming where it was going); an origin that cannot be reached
//!   (its name does not resolve, its TLS options do not build) is `other`,
//!   its reason sampled. Pipelining refuses `--redirects` (plan.rs): hops
//!   need one request at a time. HTTP/2 follows by these rules too
//!   (drive/h2/h2_redirects.rs): a hop home is a stream of the run's
//!   connection, one to another origin a stream of the stream's side
//!   HTTP/2 connection there (drive/h2/h2_side.rs).

use crate::redirects::redirect_location::resolve;
use crate::redirects::redirect_origin::{ForeignRules, Origin, OriginBook};
use crate::redirects::redirect_request::{header_value, hop_request, request_path};
use stampede_metrics::ErrorKind;
use std::cell::RefCell;

/// Where hops are counted and their errors sampled: the worker's books
/// (implemented by `WorkerState` in connection.rs, so that this rulebook
/// does not import the worker's state).
pub(crate) trait HopBooks {
    /// A hop followed.
    fn hop_followed(&self);
    /// A redirect to another origin, not followed.
    fn hop_offsite(&self);
    /// An error's sample (kept only while the class has room).
    fn hop_sample(&self, kind: ErrorKind, reason: &dyn Fn() -> String);
}

/// The hops of a connection's request in flight, kept the same way by
/// every path: how many so far, the origin the next goes to, and the next
/// hop's request (two buffers swapped, so following a chain does not allocate).
#[derive(Debug, Default)]
pub(crate) struct Hops {
    count: u32,
    /// The other origin the request in flight goes to; `None`: the run's.
    at: Option<u16>,
    request: Vec<u8>,
    spare: Vec<u8>,
}

impl Hops {
    /// A new request: no hop yet, to the run's own origin.
    pub(crate) fn reset(&mut self) {
        self.count = 0;
        self.at = None;
    }

    /// The hop's request, once the request in flight has hopped.
    pub(crate) fn request(&self) -> Option<&[u8]> {
        (self.count > 0).then_some(&self.request[..])
    }

    /// The origin the request in flight goes to: `None` for the run's
    /// target, else the id of another in the worker's book.
    #[inline]
    pub(crate) fn origin(&self) -> Option<u16> {
        self.at
    }

    /// Decides on a `status` response carrying `location` to the request in
    /// flight (`original`, its bytes before any hop): a hop's request is
    /// made ready and counted; an offsite redirect is counted and is the
    /// response; the limit and an unreachable origin are sampled.
    pub(crate) fn follow(
        &mut self,
        rule: &RedirectRule,
        status: u16,
        location: Option<&[u8]>,
        original: &[u8],
        state: &dyn HopBooks,
        book: &RefCell<OriginBook>,
    ) -> Follow {
        let current: &[u8] = if self.count > 0 {
            &self.request
        } else {
            original
        };
        let decision = {
            let known = book.borrow();
            let from = self
                .at
                .and_then(|id| known.origin(id))
                .unwrap_or(&rule.home);
            rule.decide(status, location, from, request_path(current), self.count)
        };
        let (origin, path, keep_method) = match decision {
            Decision::No => return Follow::No,
            Decision::NotFollowed => {
                state.hop_offsite();
                return Follow::Offsite;
            }
            Decision::Limit => {
                state.hop_sample(ErrorKind::RedirectLimit, &|| {
                    let to = location.map(String::from_utf8_lossy).unwrap_or_default();
                    format!("more than {} redirects (the next to {to})", rule.max_hops)
                });
                return Follow::Limit;
            }
            Decision::To {
                origin,
                path,
                keep_method,
            } => (origin, path, keep_method),
        };
        let to = match origin {
            None => self.at,
            Some(origin) if origin == rule.home => None,
            Some(origin) => match away(rule, &origin, state, book) {
                Ok(id) => Some(id),
                Err(answer) => return answer,
            },
        };
        // The Host header names the hop's origin: another origin's own, or
        // back home the request's as the run wrote it.
        let host = match to {
            _ if to == self.at => None,
            None => Some(header_value(original, b"host").unwrap_or_default().to_vec()),
            Some(id) => book
                .borrow()
                .origin(id)
                .map(|o| o.host_header().into_bytes()),
        };
        hop_request(
            current,
            &path,
            keep_method,
            host.as_deref(),
            &mut self.spare,
        );
        std::mem::swap(&mut self.request, &mut self.spare);
        self.count += 1;
        self.at = to;
        state.hop_followed();
        Follow::Hop
    }
}

/// The book's id of `origin`, another than the run's; `Err`: the answer
/// when it is not followed (offsite, counted) or cannot be reached (sampled).
fn away(
    rule: &RedirectRule,
    origin: &Origin,
    state: &dyn HopBooks,
    book: &RefCell<OriginBook>,
) -> Result<u16, Follow> {
    let Some(foreign) = &rule.foreign else {
        state.hop_offsite();
        return Err(Follow::Offsite);
    };
    let interned = book.borrow_mut().intern(origin, foreign);
    match interned {
        Ok(Some(id)) => Ok(id),
        Ok(None) => {
            state.hop_offsite();
            Err(Follow::Offsite)
        }
        Err(why) => {
            state.hop_sample(ErrorKind::Other, &|| {
                let scheme = if origin.https { "https" } else { "http" };
                format!("redirect to {scheme}://{}: {why}", origin.host_header())
            });
            Err(Follow::Unreachable)
        }
    }
}

/// Whether `location` names a scheme other than http and https
/// (`ftp://host/x`): a redirect no HTTP client follows.
fn other_scheme(location: &[u8]) -> bool {
    let Some(at) = location.windows(3).position(|w| w == b"://") else {
        return false;
    };
    let scheme = &location[..at];
    !scheme.is_empty()
        && scheme.iter().all(u8::is_ascii_alphabetic)
        && !scheme.eq_ignore_ascii_case(b"http")
        && !scheme.eq_ignore_ascii_case(b"https")
}

/// Statuses that redirect.
fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// What to do with a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follow {
    /// Not a redirect (or redirects are off): the response is the answer.
    No,
    /// The hop's request is ready ([`Hops::request`], to [`Hops::origin`]).
    Hop,
    /// A redirect to another origin, not followed: the response is the answer.
    Offsite,
    /// One hop more than `--redirects` allows.
    Limit,
    /// The hop's origin cannot be reached (sampled): the request fails.
    Unreachable,
}

/// Where a redirect leads, by the rule alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Not a redirect (or redirects are off).
    No,
    /// One hop more than `--redirects` allows.
    Limit,
    /// A redirect stampede cannot follow (a scheme other than http and
    /// https, `ftp://…`): the 3xx is the response, counted as not followed.
    NotFollowed,
    /// Send `path` to `origin` next (`None`: the origin the redirect came
    /// from); `keep_method`: 307/308 repeat method and body.
    To {
        origin: Option<Origin>,
        path: Vec<u8>,
        keep_method: bool,
    },
}

/// The run's origin, how many hops a request may take, and whether hops to
/// other origins are followed.
#[derive(Debug, Clone)]
pub(crate) struct RedirectRule {
    pub max_hops: u32,
    /// The run's target.
    pub home: Origin,
    /// How to reach other origins; `None`: they are not followed (a proxy
    /// or a Unix socket reaches one origin only).
    pub foreign: Option<ForeignRules>,
}

impl RedirectRule {
    /// What to do with a `status` response carrying `location`, to a
    /// request for `current_path` on `from` that has taken `hops` hops.
    pub(crate) fn decide(
        &self,
        status: u16,
        location: Option<&[u8]>,
        from: &Origin,
        current_path: &[u8],
        hops: u32,
    ) -> Decision {
        if self.max_hops == 0 || !is_redirect(status) {
            return Decision::No;
        }
        let Some(location) = location.map(<[u8]>::trim_ascii).filter(|l| !l.is_empty()) else {
            return Decision::No;
        };
        let Some((origin, path)) = resolve(location, from, current_path) else {
            return match other_scheme(location) {
                true => Decision::NotFollowed,
                false => Decision::No,
            };
        };
        if hops >= self.max_hops {
            return Decision::Limit;
        }
        Decision::To {
            origin,
            path,
            keep_method: matches!(status, 307 | 308),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> Origin {
        Origin::parse("http", "127.0.0.1:3000").unwrap()
    }

    fn rule(max_hops: u32) -> RedirectRule {
        RedirectRule {
            max_hops,
            home: home(),
            foreign: None,
        }
    }

    fn hop(location: &str, current: &str) -> Decision {
        rule(5).decide(
            302,
            Some(location.as_bytes()),
            &home(),
            current.as_bytes(),
            0,
        )
    }

    fn to(origin: &str, p: &str) -> Decision {
        let (scheme, authority) = origin.split_once("://").unwrap();
        Decision::To {
            origin: Some(Origin::parse(scheme, authority).unwrap()),
            path: p.as_bytes().to_vec(),
            keep_method: false,
        }
    }

    /// On the origin the redirect came from.
    fn path(p: &str) -> Decision {
        Decision::To {
            origin: None,
            path: p.as_bytes().to_vec(),
            keep_method: false,
        }
    }

    #[test]
    fn locations_resolve_like_a_browser() {
        assert_eq!(hop("/b", "/a/x"), path("/b"));
        assert_eq!(hop("y", "/a/x?q=1"), path("/a/y"));
        assert_eq!(hop("../y", "/a/b/x"), path("/a/y"));
        assert_eq!(hop("?p=2", "/a/x?q=1"), path("/a/x?p=2"));
        assert_eq!(hop("http://127.0.0.1:3000/c#frag", "/"), path("/c"));
        assert_eq!(hop("HTTP://127.0.0.1:3000", "/"), path("/"));
        assert_eq!(hop("//127.0.0.1:3000/d?e", "/"), path("/d?e"));
        assert_eq!(hop("./", "/a/x"), path("/a/"));
    }

    #[test]
    fn other_origins_and_the_limit() {
        assert_eq!(
            hop("http://Example.com/", "/"),
            to("http://example.com:80", "/")
        );
        assert_eq!(
            hop("https://127.0.0.1:3000/", "/"),
            to("https://127.0.0.1:3000", "/")
        );
        assert_eq!(
            hop("//127.0.0.1:3001/x", "/"),
            to("http://127.0.0.1:3001", "/x")
        );
        // A scheme no HTTP client follows: not followed (counted), not ignored.
        assert_eq!(hop("ftp://127.0.0.1/x", "/"), Decision::NotFollowed);
        // Relative to the origin the request went to.
        let away = Origin::parse("https", "b.test").unwrap();
        assert_eq!(
            rule(5).decide(301, Some(b"../c"), &away, b"/a/b", 0),
            path("/c")
        );
        assert_eq!(
            rule(5).decide(301, Some(b"http://127.0.0.1:3000/h"), &away, b"/", 0),
            to("http://127.0.0.1:3000", "/h")
        );
        assert_eq!(
            rule(2).decide(301, Some(b"/x"), &home(), b"/", 2),
            Decision::Limit
        );
        assert_eq!(
            rule(0).decide(301, Some(b"/x"), &home(), b"/", 0),
            Decision::No
        );
        assert_eq!(
            rule(2).decide(200, Some(b"/x"), &home(), b"/", 0),
            Decision::No
        );
        assert_eq!(rule(2).decide(302, None, &home(), b"/", 0), Decision::No);
        let default_port = RedirectRule {
            home: Origin::parse("http", "example.test").unwrap(),
            ..rule(1)
        };
        assert_eq!(
            default_port.decide(
                307,
                Some(b"http://example.test:80/p"),
                &default_port.home,
                b"/",
                0
            ),
            Decision::To {
                origin: None,
                path: b"/p".to_vec(),
                keep_method: true
            }
        );
    }
}
