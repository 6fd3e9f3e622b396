//! The upstream (`--upstream URL`) and what is forwarded to it: a request
//! for `/p?q` goes to the URL's scheme, host and port, at the URL's path
//! prefix + `/p`, with the URL's own query (if any) before `q`.
//!
//! Headers go both ways as they came, less the hop-by-hop ones (RFC 9110
//! §7.6.1: `connection` and the names it lists, `keep-alive`,
//! `proxy-connection`, `proxy-authenticate`, `proxy-authorization`, `te`,
//! `trailer`, `transfer-encoding`, `upgrade`); `host` is the upstream's;
//! `expect` is answered by the proxy, not forwarded.
//! The client's `accept-encoding` is narrowed to the codings the recording
//! can decode (gzip, deflate, identity), so a compressed response still
//! reaches the client as the upstream sent it and the recording holds its
//! text; with none left the header is dropped (the upstream then sends
//! identity).

use std::str::FromStr;

use base64::Engine as _;
use http::header::{HeaderMap, HeaderValue};
use http::uri::{Authority, Scheme, Uri};

use crate::error::Error;

/// A parsed `--upstream`.
#[derive(Debug, Clone)]
pub struct Upstream {
    scheme: Scheme,
    authority: Authority,
    /// The path prefix, without a trailing `/` (empty for none).
    prefix: String,
    query: Option<String>,
    /// `user:password@` of the URL as a Basic `authorization`, sent when
    /// the client sends none.
    basic: Option<HeaderValue>,
    /// The URL without userinfo and query, as recorded.
    shown: String,
}

impl FromStr for Upstream {
    type Err = Error;

    fn from_str(url: &str) -> Result<Upstream, Error> {
        let bad = |why: &str| Error::Upstream {
            url: without_userinfo(url),
            why: why.to_string(),
        };
        if url.contains('#') {
            return Err(bad("a URL with a #fragment cannot be forwarded to"));
        }
        let uri: Uri = url.parse().map_err(|e| bad(&format!("not a URL ({e})")))?;
        let scheme = match uri.scheme_str() {
            Some("http") => Scheme::HTTP,
            Some("https") => Scheme::HTTPS,
            Some(other) => {
                return Err(bad(&format!(
                    "the scheme must be http or https, not {other}"
                )))
            }
            None => {
                return Err(bad(
                    "give the scheme: http://HOST[:PORT][/PREFIX] or https://…",
                ))
            }
        };
        let full = uri.authority().ok_or_else(|| bad("no host"))?.as_str();
        let (userinfo, hostport) = match full.rsplit_once('@') {
            Some((user, host)) => (Some(user), host),
            None => (None, full),
        };
        if hostport.is_empty() {
            return Err(bad("no host"));
        }
        let authority: Authority = hostport
            .parse()
            .map_err(|e| bad(&format!("bad host ({e})")))?;
        let basic = userinfo
            .map(|u| {
                let encoded = base64::engine::general_purpose::STANDARD.encode(u.as_bytes());
                HeaderValue::from_str(&format!("Basic {encoded}"))
            })
            .transpose()
            .map_err(|_| bad("bad user:password"))?;
        let prefix = uri.path().trim_end_matches('/').to_string();
        let query = uri.query().filter(|q| !q.is_empty()).map(str::to_string);
        let shown = format!("{scheme}://{authority}{prefix}");
        Ok(Upstream {
            scheme,
            authority,
            prefix,
            query,
            basic,
            shown,
        })
    }
}

/// `url` with any `user:password@` cut out, for messages.
fn without_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rsplit_once('@') {
        Some((_, host)) => format!("{scheme}://{host}{}", &rest[end..]),
        None => url.to_string(),
    }
}

impl Upstream {
    /// The URL as recorded (`upstream`): no userinfo, no query.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The host (and port) requests are sent to, for `host`.
    pub fn authority(&self) -> &Authority {
        &self.authority
    }

    /// Where a request for `path` (with `query`) goes.
    pub fn target(&self, path: &str, query: Option<&str>) -> Result<Uri, http::Error> {
        let mut pq = String::with_capacity(self.prefix.len() + path.len() + 16);
        pq.push_str(&self.prefix);
        if !path.starts_with('/') {
            pq.push('/');
        }
        pq.push_str(path);
        let query = match (&self.query, query) {
            (Some(a), Some(b)) => Some(format!("{a}&{b}")),
            (Some(a), None) => Some(a.clone()),
            (None, Some(b)) => Some(b.to_string()),
            (None, None) => None,
        };
        if let Some(q) = query {
            pq.push('?');
            pq.push_str(&q);
        }
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(pq)
            .build()
    }

    /// The headers of a request as forwarded: hop-by-hop ones dropped,
    /// `host` the upstream's, `accept-encoding` narrowed (module docs),
    /// the URL's userinfo as `authorization` when the client sent none.
    pub fn request_headers(&self, from_client: &HeaderMap) -> HeaderMap {
        let mut headers = end_to_end(from_client);
        headers.remove(http::header::HOST);
        // `expect: 100-continue` was answered to the client by the proxy,
        // which reads the body as it passes it on.
        headers.remove(http::header::EXPECT);
        if let Ok(host) = HeaderValue::from_str(self.authority.as_str()) {
            headers.insert(http::header::HOST, host);
        }
        let narrowed = narrowed_accept_encoding(&headers);
        headers.remove(http::header::ACCEPT_ENCODING);
        if let Some(v) = narrowed {
            headers.insert(http::header::ACCEPT_ENCODING, v);
        }
        if let Some(basic) = &self.basic {
            if !headers.contains_key(http::header::AUTHORIZATION) {
                headers.insert(http::header::AUTHORIZATION, basic.clone());
            }
        }
        headers
    }
}

const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// `headers` less the hop-by-hop ones (those listed in `connection` too).
pub fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let listed: Vec<String> = headers
        .get_all(http::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect();
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n) || listed.iter().any(|l| l == n) {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// The codings of `accept-encoding` the recording can decode, with their
/// weights; None when none is left.
fn narrowed_accept_encoding(headers: &HeaderMap) -> Option<HeaderValue> {
    let kept: Vec<String> = headers
        .get_all(http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|item| {
            let coding = item
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            matches!(coding.as_str(), "gzip" | "x-gzip" | "deflate" | "identity")
        })
        .map(str::to_string)
        .collect();
    if kept.is_empty() {
        return None;
    }
    HeaderValue::from_str(&kept.join(", ")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(url: &str) -> Upstream {
        url.parse().unwrap()
    }

    #[test]
    fn targets_are_the_url_plus_the_path() {
        let u = up("https://api.example.com/v1/");
        assert_eq!(
            u.target("/chat/completions", Some("a=1"))
                .unwrap()
                .to_string(),
            "https://api.example.com/v1/chat/completions?a=1"
        );
        assert_eq!(u.shown(), "https://api.example.com/v1");
        let u = up("http://127.0.0.1:9/?api-version=2");
        assert_eq!(
            u.target("/x", Some("b")).unwrap().to_string(),
            "http://127.0.0.1:9/x?api-version=2&b"
        );
        assert_eq!(u.shown(), "http://127.0.0.1:9");
    }

    #[test]
    fn userinfo_is_not_shown_and_bad_urls_are_refused() {
        let u = up("https://me:s3cret@host.example:8443/p");
        assert_eq!(u.shown(), "https://host.example:8443/p");
        let h = u.request_headers(&HeaderMap::new());
        assert!(h.get("authorization").is_some());
        for bad in ["ftp://x", "localhost:8000", "http://", "http://h/#f"] {
            let e = bad.parse::<Upstream>().unwrap_err().to_string();
            assert!(!e.contains("s3cret"), "{e}");
        }
        let e = "ftp://u:s3cret@x/"
            .parse::<Upstream>()
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cret"), "{e}");
    }

    #[test]
    fn hop_by_hop_headers_go_and_accept_encoding_is_narrowed() {
        let mut h = HeaderMap::new();
        h.insert(
            "connection",
            HeaderValue::from_static("keep-alive, x-private"),
        );
        h.insert("x-private", HeaderValue::from_static("1"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert("host", HeaderValue::from_static("127.0.0.1:8642"));
        h.insert(
            "accept-encoding",
            HeaderValue::from_static("gzip, br;q=0.9, deflate;q=0.5, zstd"),
        );
        h.insert("x-upstream-session-id", HeaderValue::from_static("t-1"));
        let out = up("http://up.example:81").request_headers(&h);
        assert!(out.get("connection").is_none() && out.get("x-private").is_none());
        assert!(out.get("keep-alive").is_none());
        assert_eq!(out["host"], "up.example:81");
        assert_eq!(out["accept-encoding"], "gzip, deflate;q=0.5");
        assert_eq!(out["x-upstream-session-id"], "t-1");
        let mut h = HeaderMap::new();
        h.insert("accept-encoding", HeaderValue::from_static("br"));
        assert!(up("http://x")
            .request_headers(&h)
            .get("accept-encoding")
            .is_none());
    }
}
