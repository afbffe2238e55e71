//! The part of a response checks and extractors read, borrowed from the
//! engine's buffers; the body is parsed as JSON at most once, on first use.

use std::cell::OnceCell;
use std::time::Duration;

/// A response as checks see it. Headers and body are empty unless the check
/// set asked for them ([`CheckSet::needs_headers`](crate::CheckSet::needs_headers)).
pub struct ResponseView<'a> {
    /// The status code.
    pub status: u16,
    /// Header names and values, as received.
    pub headers: &'a [(&'a [u8], &'a [u8])],
    /// The body, as received.
    pub body: &'a [u8],
    /// From the request's intended start to the end of the response.
    pub elapsed: Duration,
    /// The body's whole length as framed on the wire (what `body size`
    /// checks), which `body` (kept up to `--capture-max`, or not at all
    /// when no check reads it) may be shorter than.
    pub body_size: u64,
    /// The header fields listed on demand, when they are not in `headers`
    /// (the engine lists them only for a reader that asks: a script's
    /// `response()` that reads its `headers` argument).
    listed: Option<&'a dyn ListFields>,
    json: OnceCell<Option<serde_json::Value>>,
}

/// Header fields handed over one at a time, without a list built first.
pub trait ListFields {
    /// Calls `field` with each header field's name and value, in order.
    fn list(&self, field: &mut dyn FnMut(&[u8], &[u8]));
    /// How many fields [`ListFields::list`] gives (a size hint).
    fn count(&self) -> usize;
}

/// A response's header fields, whichever way the view holds them.
pub struct HeaderFields<'v, 'a> {
    view: &'v ResponseView<'a>,
}

impl HeaderFields<'_, '_> {
    /// Calls `field` with each header field's name and value, in order.
    pub fn for_each(&self, field: &mut dyn FnMut(&[u8], &[u8])) {
        match self.view.listed {
            Some(listed) if self.view.headers.is_empty() => listed.list(field),
            _ => {
                for (name, value) in self.view.headers {
                    field(name, value);
                }
            }
        }
    }

    /// How many fields [`HeaderFields::for_each`] gives (a size hint).
    pub fn count(&self) -> usize {
        match self.view.listed {
            Some(listed) if self.view.headers.is_empty() => listed.count(),
            _ => self.view.headers.len(),
        }
    }
}

impl<'a> ResponseView<'a> {
    /// A view of a response that took `elapsed`.
    pub fn new(
        status: u16,
        headers: &'a [(&'a [u8], &'a [u8])],
        body: &'a [u8],
        elapsed: Duration,
    ) -> ResponseView<'a> {
        ResponseView {
            status,
            headers,
            body,
            elapsed,
            body_size: body.len() as u64,
            listed: None,
            json: OnceCell::new(),
        }
    }

    /// The view with the body's whole length as framed (see [`ResponseView::body_size`]).
    pub fn with_body_size(mut self, body_size: u64) -> Self {
        self.body_size = body_size;
        self
    }

    /// The view whose header fields, when `headers` is empty, are listed on
    /// demand by `listed` ([`ResponseView::fields`]).
    pub fn with_listed_fields(mut self, listed: &'a dyn ListFields) -> Self {
        self.listed = Some(listed);
        self
    }

    /// Every header field, from `headers` or listed on demand.
    pub fn fields(&self) -> HeaderFields<'_, 'a> {
        HeaderFields { view: self }
    }

    /// The first header named `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&'a [u8]> {
        self.headers_named(name).next()
    }

    /// Every header named `name`, in order (Set-Cookie comes many times).
    pub fn headers_named<'n>(&self, name: &'n str) -> impl Iterator<Item = &'a [u8]> + 'n
    where
        'a: 'n,
    {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| *v)
    }

    /// The body as JSON, or None when it is not JSON.
    pub fn json(&self) -> Option<&serde_json::Value> {
        self.json
            .get_or_init(|| serde_json::from_slice(self.body).ok())
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_by_name_and_lazy_json() {
        let headers: [(&[u8], &[u8]); 3] = [
            (b"Set-Cookie", b"a=1"),
            (b"content-type", b"json"),
            (b"set-cookie", b"b=2"),
        ];
        let view = ResponseView::new(200, &headers, b"{\"x\":1}", Duration::ZERO);
        assert_eq!(view.header("Content-Type"), Some(&b"json"[..]));
        assert_eq!(view.headers_named("SET-COOKIE").count(), 2);
        assert_eq!(view.header("missing"), None);
        assert_eq!(view.json().unwrap()["x"], 1);
        let empty = ResponseView::new(204, &[], b"", Duration::ZERO);
        assert!(empty.json().is_none());
    }

    #[test]
    fn fields_come_from_the_list_or_on_demand() {
        struct Two;
        impl ListFields for Two {
            fn list(&self, field: &mut dyn FnMut(&[u8], &[u8])) {
                field(b"a", b"1");
                field(b"B", b"2");
            }
            fn count(&self) -> usize {
                2
            }
        }
        let collect = |view: &ResponseView<'_>| {
            let mut seen = Vec::new();
            view.fields()
                .for_each(&mut |n, v| seen.push((n.to_vec(), v.to_vec())));
            (seen, view.fields().count())
        };
        let listed = ResponseView::new(200, &[], b"", Duration::ZERO).with_listed_fields(&Two);
        assert_eq!(
            collect(&listed),
            (
                vec![
                    (b"a".to_vec(), b"1".to_vec()),
                    (b"B".to_vec(), b"2".to_vec())
                ],
                2
            )
        );
        let kept: [(&[u8], &[u8]); 1] = [(b"x", b"9")];
        let both = ResponseView::new(200, &kept, b"", Duration::ZERO).with_listed_fields(&Two);
        assert_eq!(collect(&both), (vec![(b"x".to_vec(), b"9".to_vec())], 1));
        let none = ResponseView::new(200, &[], b"", Duration::ZERO);
        assert_eq!(collect(&none), (vec![], 0));
    }
}
