//! The compact, URL-safe form of a pasted Hugging Face `config.json` (the
//! value of the `j` key).
//!
//! Packing has three steps, each small enough to need no compression crate:
//! 1. *Reduce*: keys whose removal leaves [`hf::import`]'s result unchanged
//!    (`torch_dtype`, `bos_token_id`, `transformers_version`, ...) are
//!    dropped, so the link carries exactly what the estimate reads. Text that
//!    does not import is kept as it is.
//! 2. *Substitute*: the JSON is minified and frequent `config.json` keys and
//!    `model_type` values become one byte each (the [`DICTIONARY`] below).
//! 3. *Encode*: the bytes in base64url without padding, after a one-character
//!    format tag (`1`).
//!
//! A Llama-2-7B `config.json` of 600 bytes becomes about 90 characters.
//! A hand-written link may also carry plain JSON (`j={"model_type":...}`,
//! percent-encoded); unpacking accepts both.

use crate::hf;
use serde_json::Value;
use std::fmt;

/// The format tag of packed configs: base64url of the dictionary-substituted text.
const TAG: char = '1';

/// Longest unpacked text accepted (real `config.json` files are a few KiB).
pub const MAX_CONFIG_BYTES: usize = 64 * 1024;

/// Reduction removes keys one at a time; beyond this many keys the text is
/// only minified (each removal re-imports the model).
const MAX_REDUCED_KEYS: usize = 256;

/// Byte `i + 1` stands for entry `i`. Bytes 1 to 31 never occur in minified
/// JSON (control characters inside strings are escaped), and any that occur
/// in other text are escaped with a 0 byte. Frozen for tag `1`: a new
/// dictionary needs a new tag, or old links would change meaning.
const DICTIONARY: [&str; 31] = [
    "\"model_type\":",
    "\"hidden_size\":",
    "\"intermediate_size\":",
    "\"num_attention_heads\":",
    "\"num_hidden_layers\":",
    "\"num_key_value_heads\":",
    "\"vocab_size\":",
    "\"max_position_embeddings\":",
    "\"_name_or_path\":",
    "\"tie_word_embeddings\":",
    "\"n_embd\":",
    "\"n_layer\":",
    "\"n_head\":",
    "\"n_positions\":",
    "\"n_inner\":",
    "\"type_vocab_size\":",
    "\"head_dim\":",
    "\"attention_bias\":",
    "\"architectures\":",
    "\"hidden_dropout_prob\":",
    "\"attention_probs_dropout_prob\":",
    "\"attention_dropout\":",
    "\"resid_pdrop\":",
    "\"attn_pdrop\":",
    "\"num_labels\":",
    "\"id2label\":",
    "\"llama\"",
    "\"mistral\"",
    "\"qwen2\"",
    "\"bert\"",
    "\"gpt2\"",
];

/// The text a link should carry for `text`: minified, with the keys the
/// import does not read removed; `text` unchanged when it does not import.
///
/// # Example
/// ```
/// let json = r#"{ "model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
///                 "vocab_size": 50257, "torch_dtype": "float32" }"#;
/// assert_eq!(vramfit_core::share::reduce_config(json),
///            r#"{"model_type":"gpt2","n_embd":768,"n_head":12,"n_layer":12,"vocab_size":50257}"#);
/// ```
pub fn reduce_config(text: &str) -> String {
    let Ok(original) = hf::import(text) else {
        return text.to_string();
    };
    let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(text) else {
        return text.to_string();
    };
    if map.len() <= MAX_REDUCED_KEYS {
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            let Some(value) = map.remove(&key) else {
                continue;
            };
            let without = Value::Object(map.clone()).to_string();
            if hf::import(&without).ok().as_ref() != Some(&original) {
                map.insert(key, value);
            }
        }
    }
    Value::Object(map).to_string()
}

/// Packs `text` (reduced first, see [`reduce_config`]) into the `j` value.
pub fn pack_config(text: &str) -> String {
    let reduced = reduce_config(text);
    let mut bytes = Vec::with_capacity(reduced.len());
    let mut rest = reduced.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if let Some((code, entry)) = DICTIONARY
            .iter()
            .enumerate()
            .find(|(_, e)| rest.starts_with(e.as_bytes()))
        {
            // At most 31 entries: the code fits a byte.
            bytes.push(u8::try_from(code + 1).unwrap_or(0));
            rest = rest.get(entry.len()..).unwrap_or_default();
            continue;
        }
        if first < 32 {
            bytes.push(0);
        }
        bytes.push(first);
        rest = tail;
    }
    let mut out = String::with_capacity(1 + bytes.len().div_ceil(3) * 4);
    out.push(TAG);
    base64url(&bytes, &mut out);
    out
}

/// Why a `j` value cannot be read as a `config.json`: data for the front
/// ends to word, with an English [`fmt::Display`] (the CLI's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigFault {
    /// Neither packed text (starting with the tag `1`) nor JSON.
    UnknownFormat,
    /// Longer than [`MAX_CONFIG_BYTES`], packed or unpacked.
    TooLong,
    /// The packed text is not base64url.
    NotBase64,
    /// The packed bytes end inside an escape.
    EndsInEscape,
    /// The unpacked bytes are not UTF-8 text.
    NotUtf8,
}

impl fmt::Display for ConfigFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigFault::UnknownFormat => {
                f.write_str("unknown format: expected packed text starting with 1, or JSON")
            }
            ConfigFault::TooLong => write!(f, "longer than {MAX_CONFIG_BYTES} bytes"),
            ConfigFault::NotBase64 => f.write_str("not base64url (A-Z a-z 0-9 - _)"),
            ConfigFault::EndsInEscape => f.write_str("it ends inside an escape"),
            ConfigFault::NotUtf8 => f.write_str("not UTF-8 text"),
        }
    }
}

/// The `config.json` text of a `j` value: packed (tag `1`) or plain JSON.
///
/// # Errors
/// Why the value cannot be read ([`ConfigFault`]).
pub fn unpack_config(value: &str) -> Result<String, ConfigFault> {
    let value = value.trim();
    if value.starts_with('{') {
        return if value.len() > MAX_CONFIG_BYTES {
            Err(ConfigFault::TooLong)
        } else {
            Ok(value.to_string())
        };
    }
    let Some(body) = value.strip_prefix(TAG) else {
        return Err(ConfigFault::UnknownFormat);
    };
    if body.len() > MAX_CONFIG_BYTES {
        return Err(ConfigFault::TooLong);
    }
    let bytes = from_base64url(body).ok_or(ConfigFault::NotBase64)?;
    let mut text = Vec::with_capacity(bytes.len() * 2);
    let mut it = bytes.iter();
    while let Some(&b) = it.next() {
        match b {
            0 => text.push(*it.next().ok_or(ConfigFault::EndsInEscape)?),
            1..=31 => text.extend_from_slice(
                DICTIONARY
                    .get(usize::from(b - 1))
                    .map_or(&[][..], |e| e.as_bytes()),
            ),
            _ => text.push(b),
        }
        if text.len() > MAX_CONFIG_BYTES {
            return Err(ConfigFault::TooLong);
        }
    }
    String::from_utf8(text).map_err(|_| ConfigFault::NotUtf8)
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url(bytes: &[u8], out: &mut String) {
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            // Six bits index the 64 characters.
            out.push(
                ALPHABET
                    .get((n >> (18 - 6 * i) & 63) as usize)
                    .map_or('A', |c| char::from(*c)),
            );
        }
    }
}

fn from_base64url(s: &str) -> Option<Vec<u8>> {
    let sextet = |c: u8| ALPHABET.iter().position(|&a| a == c).map(|p| p as u32);
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.as_bytes().chunks(4) {
        // A lone character carries fewer than 8 bits: not valid base64.
        if chunk.len() == 1 {
            return None;
        }
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= sextet(c)? << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i) & 255) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips_every_length() {
        for len in 0..40u8 {
            let bytes: Vec<u8> = (0..len)
                .map(|i| i.wrapping_mul(97).wrapping_add(len))
                .collect();
            let mut s = String::new();
            base64url(&bytes, &mut s);
            assert!(s.bytes().all(|b| ALPHABET.contains(&b)), "{s}");
            assert_eq!(from_base64url(&s), Some(bytes), "length {len}");
        }
        assert_eq!(from_base64url("A"), None);
        assert_eq!(from_base64url("A=="), None);
    }

    #[test]
    fn any_text_survives_packing_when_it_does_not_import() {
        for text in [
            "",
            "{",
            "\u{1}\u{0}\u{1f}x",
            "\"model_type\":\u{1}",
            "显存 {\"a\":1}",
        ] {
            assert_eq!(
                unpack_config(&pack_config(text)).as_deref(),
                Ok(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn garbage_is_refused_with_a_reason() {
        assert!(unpack_config("2abc").is_err());
        assert!(unpack_config("1***").is_err());
        assert_eq!(unpack_config("1QQ").as_deref(), Ok("A"));
        assert!(unpack_config("1AAA").is_ok());
        assert!(unpack_config("1/w").is_err());
        // A lone escape byte at the end.
        let mut s = String::from("1");
        base64url(&[b'x', 0], &mut s);
        assert_eq!(
            unpack_config(&s).map_err(|e| e.to_string()),
            Err("it ends inside an escape".to_string())
        );
        // Dictionary bombs stop at the size limit.
        let mut bomb = String::from("1");
        base64url(&vec![21u8; 40_000], &mut bomb);
        assert!(unpack_config(&bomb).is_err());
    }

    #[test]
    fn each_fault_is_named_and_worded_as_before() {
        let mut escape = String::from("1");
        base64url(&[b'x', 0], &mut escape);
        let mut bomb = String::from("1");
        base64url(&vec![21u8; 40_000], &mut bomb);
        let mut latin1 = String::from("1");
        base64url(&[0xe9, b'!'], &mut latin1);
        for (value, fault, words) in [
            (
                "2abc",
                ConfigFault::UnknownFormat,
                "unknown format: expected packed text starting with 1, or JSON",
            ),
            (
                "1***",
                ConfigFault::NotBase64,
                "not base64url (A-Z a-z 0-9 - _)",
            ),
            (
                &escape,
                ConfigFault::EndsInEscape,
                "it ends inside an escape",
            ),
            (&bomb, ConfigFault::TooLong, "longer than 65536 bytes"),
            (&latin1, ConfigFault::NotUtf8, "not UTF-8 text"),
        ] {
            assert_eq!(unpack_config(value), Err(fault), "{value}");
            assert_eq!(fault.to_string(), words);
        }
    }
}
