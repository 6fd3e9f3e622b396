//! What counts as a credential, so it is never written to a recording:
//! header names (the header is dropped and its name listed in
//! `redacted`) and query parameter names (the value becomes `REDACTED`).

/// Headers that carry credentials by name.
const EXACT: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "cookie",
    "set-cookie",
    "x-goog-api-key",
];

/// A name holding one of these is taken for a credential.
const PARTS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "auth",
    "key",
    "signature",
    "credential",
    "cookie",
];

/// Names that hold one of [`PARTS`] but carry no secret: the SDKs' own
/// headers (`x-stainless-*`) and the providers' rate-limit counters
/// (`x-ratelimit-remaining-tokens`, `anthropic-ratelimit-tokens-limit`).
const ALLOWED_PREFIXES: &[&str] = &["x-stainless-", "x-ratelimit-", "anthropic-ratelimit-"];

/// Whether a header (its name, any case) is a credential.
pub fn is_credential_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    if EXACT.contains(&name.as_str()) {
        return true;
    }
    if ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return false;
    }
    PARTS.iter().any(|p| name.contains(p))
}

/// Whether a query parameter (its name, any case) is a credential.
pub fn is_credential_param(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "sig" | "code") || PARTS.iter().any(|p| name.contains(p))
}

/// The query with credential-named parameters' values replaced by
/// `REDACTED` (the rest verbatim).
pub fn query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if is_credential_param(&percent_decoded(name)) => {
                format!("{name}=REDACTED")
            }
            _ => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// A parameter name with `%XX` and `+` decoded (lossily), so `api%5Fkey`
/// is caught as `api_key`.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while k < bytes.len() {
        match bytes[k] {
            b'%' if k + 2 < bytes.len() => match (hex(bytes[k + 1]), hex(bytes[k + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    k += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        k += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_named_and_counters_are_not() {
        for secret in [
            "Authorization",
            "x-api-key",
            "api-key",
            "cookie",
            "set-cookie",
            "x-goog-api-key",
            "x-auth-token",
            "openai-secret",
            "x-amz-security-token",
            "idempotency-key",
        ] {
            assert!(is_credential_header(secret), "{secret}");
        }
        for plain in [
            "content-type",
            "x-upstream-session-id",
            "x-stainless-retry-count",
            "x-ratelimit-remaining-tokens",
            "anthropic-ratelimit-tokens-limit",
            "anthropic-version",
            "keep-alive",
            "openai-organization",
        ] {
            assert!(!is_credential_header(plain), "{plain}");
        }
    }

    #[test]
    fn credential_query_values_are_replaced() {
        assert_eq!(
            query("api-version=2024&key=abc&API%5FKEY=x&token&b=2"),
            "api-version=2024&key=REDACTED&API%5FKEY=REDACTED&token&b=2"
        );
        assert_eq!(query("a=1"), "a=1");
        assert_eq!(percent_decoded("a%2"), "a%2");
    }
}
