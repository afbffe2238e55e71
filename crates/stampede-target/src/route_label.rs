//! The target's routes, named once: the built-in pages, each test route by
//! the first segment of its path (routes.rs dispatches on [`Route`], so a
//! new route is added here and given its arm there), static files, and
//! everything else. The route a request was dispatched to travels with its
//! [`crate::reply::Outcome`] and labels its counter in `serve --metrics`
//! (`stampede_target_route_requests{route,code}`): by name, not by its
//! argument (`/delay/20` and `/delay/300` are both `/delay`), so the label
//! set stays small. Counted only when the server is asked to
//! ([`crate::Config::count_routes`]).

/// Declares [`Route`], its labels [`NAMES`] and the test routes' path
/// segments, from one list.
macro_rules! routes {
    (
        pages: $page:ident => $page_label:literal,
        tests: { $($test:ident => $segment:literal,)* },
        rest: { $($rest:ident => $rest_label:literal,)* }
    ) => {
        /// The routes, in the order of [`NAMES`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Route {
            $page,
            $($test,)*
            $($rest,)*
        }

        /// Routes counted apart.
        pub(crate) const ROUTES: usize = [$page_label, $($segment,)* $($rest_label,)*].len();

        /// The label of each route, indexed by `Route as usize`.
        pub const NAMES: [&str; ROUTES] =
            [$page_label, $(concat!("/", $segment),)* $($rest_label,)*];

        impl Route {
            /// The test route whose path starts with `/{segment}`, if any.
            #[inline]
            pub(crate) fn of_segment(segment: &str) -> Option<Route> {
                match segment {
                    $($segment => Some(Route::$test),)*
                    _ => None,
                }
            }
        }
    };
}

routes! {
    pages: Page => "/",
    tests: {
        Bytes => "bytes",
        Chunked => "chunked",
        Delay => "delay",
        Cpu => "cpu",
        Block => "block",
        Status => "status",
        Echo => "echo",
        Stats => "stats",
        Redirect => "redirect",
        RedirectTo => "redirect-to",
        Login => "login",
        Me => "me",
        Json => "json",
        Gzip => "gzip",
        Deflate => "deflate",
        Br => "br",
        Zstd => "zstd",
        Sse => "sse",
        Stream => "stream",
        Ws => "ws",
    },
    rest: {
        Files => "files",
        Other => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_route_has_its_label() {
        assert_eq!(ROUTES, 23);
        assert_eq!(NAMES[Route::Ws as usize], "/ws");
        assert_eq!(NAMES[Route::Block as usize], "/block");
        assert_eq!(NAMES[Route::Sse as usize], "/sse");
        assert_eq!(NAMES[Route::Page as usize], "/");
        assert_eq!(Route::of_segment("delay"), Some(Route::Delay));
        assert_eq!(NAMES[Route::Delay as usize], "/delay");
        assert_eq!(Route::of_segment("redirect-to"), Some(Route::RedirectTo));
        assert_eq!(NAMES[Route::RedirectTo as usize], "/redirect-to");
        assert_eq!(NAMES[Route::Zstd as usize], "/zstd");
        assert_eq!(Route::of_segment("nothing"), None);
        assert_eq!(Route::of_segment("files"), None);
        assert_eq!(NAMES[Route::Other as usize], "other");
        assert_eq!(NAMES[Route::Files as usize], "files");
    }
}
