//! Query-string text: splitting a link into key/value pairs with
//! percent-decoding (as `URLSearchParams` reads it: `+` is a space, a bad
//! `%` escape stays as it is, invalid UTF-8 becomes U+FFFD), and
//! percent-encoding a value so that it survives any URL parser.

/// The query of a link: what follows the first `?` (up to a `#`), or the
/// whole text when it has no `?` and is not a URL (a bare `b=8&s=512`).
pub fn query_part(link: &str) -> &str {
    let link = link.trim();
    let query = match link.split_once('?') {
        Some((_, q)) => q,
        None if link.contains("://") => "",
        None => link,
    };
    query.split_once('#').map_or(query, |(q, _)| q)
}

/// Splits a query string into percent-decoded `(key, value)` pairs, in
/// order, duplicates kept; a pair without `=` has an empty value, and empty
/// pieces (`a=1&&b=2`) are skipped.
///
/// # Example
/// ```
/// use vramfit_core::share::parse_query;
/// let pairs = parse_query("m=gpt2&of=optimizer%2Bparams&x&&s=a+b");
/// assert_eq!(pairs[1], ("of".to_string(), "optimizer+params".to_string()));
/// assert_eq!(pairs[2], ("x".to_string(), String::new()));
/// assert_eq!(pairs[3], ("s".to_string(), "a b".to_string()));
/// ```
pub fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|piece| !piece.is_empty())
        .map(|piece| {
            let (k, v) = piece.split_once('=').unwrap_or((piece, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Percent-decodes one component; `+` is a space.
pub fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1)
                    .and_then(|h| hex_value(*h))
                    .zip(bytes.get(i + 2).and_then(|l| hex_value(*l)));
                if let Some((h, l)) = hex {
                    out.push(h << 4 | l);
                    i += 3;
                    continue;
                }
                out.push(b'%');
            }
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Percent-encodes a value for a query string: letters, digits and `-._~,`
/// stay as they are, everything else (`+` included) becomes `%XX`.
///
/// # Example
/// ```
/// assert_eq!(vramfit_core::share::percent_encode("optimizer+params"), "optimizer%2Bparams");
/// assert_eq!(vramfit_core::share::percent_encode("every-2"), "every-2");
/// ```
pub fn percent_encode(s: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b',') {
            out.push(char::from(b));
        } else {
            out.push('%');
            for nibble in [b >> 4, b & 15] {
                out.push(HEX.get(usize::from(nibble)).map_or('0', |h| char::from(*h)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_is_found_in_links_and_bare_text() {
        assert_eq!(query_part("https://x.org/vramfit/?b=8&s=1#top"), "b=8&s=1");
        assert_eq!(query_part("  ?b=8 "), "b=8");
        assert_eq!(query_part("b=8"), "b=8");
        assert_eq!(query_part("https://x.org/vramfit/"), "");
        assert_eq!(query_part("https://x.org/?a=1?b=2"), "a=1?b=2");
    }

    #[test]
    fn bad_escapes_and_bytes_never_fail() {
        assert_eq!(decode("%zz%4"), "%zz%4");
        assert_eq!(decode("%ff"), "\u{fffd}");
        assert_eq!(decode("%E6%98%BE"), "显");
        let all: String = (0u8..128).map(char::from).chain("显存".chars()).collect();
        assert_eq!(decode(&percent_encode(&all)), all);
    }
}
