//! Share links: everything that decides an estimate — model (a preset or a
//! pasted `config.json`), GPU and the whole [`TrainConfig`] — as a short,
//! readable URL query, shared by the web page, the embeddable widget and the
//! CLI (`vramfit estimate --url` / `--from-url`), so a link gives the same
//! numbers everywhere.
//!
//! The format is a stable interface (documented in the README):
//! `?v=1&m=bert-large&b=8&s=512&p=amp-bf16&o=adamw&c=full&g=rtx-3060-12gb`.
//! `v` is the format version, every other key is optional and its absence
//! means that version's default ([`ShareState::default`]); [`KEYS`] lists
//! them with their CLI flags. Values are the CLI's ids; switches are `1`/`0`;
//! a `config.json` travels packed (see [`pack_config`]).
//!
//! Decoding never fails: unknown keys are ignored (other front ends add their
//! own, like the page's `lang`), and a value that cannot be used keeps the
//! default and yields a [`Warning`] naming the key and why. The codec is
//! written by hand, not with serde: serde rejects a whole struct for one bad
//! field, where a link must keep every good one.

mod keys;
mod pack;
mod query;
mod warning;

pub use keys::{KEYS, Key};
pub use pack::{ConfigFault, MAX_CONFIG_BYTES, pack_config, reduce_config, unpack_config};
pub use query::{parse_query, percent_encode, query_part};
pub use warning::{Reason, Warning};

use crate::config::{Precision, TrainConfig};
use crate::engines::Serving;
use warning::quote;

/// The format version this code writes; links without `v` are read as this version.
pub const VERSION: u32 = 1;

/// Where the published calculator lives, for links made outside a browser (the CLI).
pub const DEFAULT_BASE_URL: &str = "https://vramfit.github.io/vramfit/";

/// The model id that means "the `config.json` in `j`".
pub const IMPORTED_MODEL: &str = "hf-import";

/// Longest query read; the rest of a longer link is ignored with a warning.
pub const MAX_QUERY_BYTES: usize = 96 * 1024;

/// Everything a share link carries.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareState {
    /// A model preset id, or [`IMPORTED_MODEL`] for `config_json` (key `m`).
    pub model: String,
    /// A pasted Hugging Face `config.json` (key `j`).
    pub config_json: Option<String>,
    /// A GPU preset id (key `g`).
    pub gpu: String,
    /// The training configuration (keys `b`, `s`, `p`, ... in [`KEYS`]).
    pub train: TrainConfig,
    /// The serving engine and its settings (keys `en`, `kv`, `cc`, `gu`,
    /// `gl`; `w` names a serving format too).
    pub serve: Serving,
}

impl Default for ShareState {
    /// What an omitted key means in version 1 — the page's first screen:
    /// GPT-2, batch 8 of 512 tokens, AMP bf16, AdamW, on an RTX 4090; every
    /// other setting as [`TrainConfig::default`] had it when version 1 was
    /// published (a test pins these values: changing them would change old links).
    fn default() -> Self {
        ShareState {
            model: "gpt2".to_string(),
            config_json: None,
            gpu: "rtx-4090".to_string(),
            train: TrainConfig {
                precision: Precision::AmpBf16,
                ..TrainConfig::default()
            },
            serve: Serving::default(),
        }
    }
}

/// A decoded link: the state and what was ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    /// The state, with defaults wherever the link had nothing usable.
    pub state: ShareState,
    /// What was ignored, in the order met.
    pub warnings: Vec<Warning>,
}

/// One non-default setting of a state: its key, CLI flag and URL value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The key in the query.
    pub key: &'static str,
    /// The `vramfit estimate` flag.
    pub flag: &'static str,
    /// The value as written in the URL.
    pub value: String,
}

impl Setting {
    /// The setting as `vramfit estimate` arguments (`--sp on`, `--ddp-bucket-view`).
    pub fn cli(&self) -> String {
        match (self.key, self.value.as_str()) {
            ("bv", _) => self.flag.to_string(),
            ("sp" | "lf", "1") => format!("{} on", self.flag),
            ("sp" | "lf", _) => format!("{} off", self.flag),
            _ => format!("{} {}", self.flag, self.value),
        }
    }
}

impl ShareState {
    /// The settings that differ from the defaults, in [`KEYS`] order (the
    /// model always when a `config.json` rides along with another model).
    pub fn settings(&self) -> Vec<Setting> {
        let default = ShareState::default();
        KEYS.iter()
            .filter_map(|k| {
                let value = (k.get)(self);
                let keep_model =
                    k.key == "m" && self.config_json.is_some() && self.model != IMPORTED_MODEL;
                let implied =
                    k.key == "m" && self.model == IMPORTED_MODEL && self.config_json.is_some();
                ((value != (k.get)(&default) || keep_model) && !implied).then_some(Setting {
                    key: k.key,
                    flag: k.flag,
                    value,
                })
            })
            .collect()
    }

    /// The query string (without `?`): `v=1`, then each non-default key, then `j`.
    ///
    /// # Example
    /// ```
    /// use vramfit_core::share::{ShareState, decode};
    /// let mut s = ShareState { model: "bert-large".into(), gpu: "rtx-3060-12gb".into(), ..ShareState::default() };
    /// s.train.checkpointing = "full".parse().unwrap();
    /// assert_eq!(s.to_query(), "v=1&m=bert-large&g=rtx-3060-12gb&c=full");
    /// assert_eq!(decode(&s.to_query()).state, s);
    /// ```
    pub fn to_query(&self) -> String {
        let mut q = format!("v={VERSION}");
        for s in self.settings() {
            q.push('&');
            q.push_str(s.key);
            q.push('=');
            q.push_str(&percent_encode(&s.value));
        }
        if let Some(json) = &self.config_json {
            q.push_str("&j=");
            q.push_str(&pack_config(json));
        }
        q
    }

    /// The full link: `base` (ending in `/` or a page name) followed by the query.
    pub fn to_url(&self, base: &str) -> String {
        format!("{base}?{}", self.to_query())
    }
}

/// Reads a link (a full URL, a `?query` or a bare query). Never fails: see
/// the [module documentation](self).
///
/// # Example
/// ```
/// use vramfit_core::share::{Reason, decode};
/// let d = decode("https://vramfit.github.io/vramfit/?v=1&m=resnet50&b=abc&zz=1&i=256");
/// assert_eq!((d.state.model.as_str(), d.state.train.batch, d.state.train.image), ("resnet50", 8, 256));
/// assert_eq!(d.warnings.len(), 1);
/// assert_eq!(d.warnings[0].key, "b");
/// assert!(matches!(d.warnings[0].reason, Reason::Count { min: 1, .. }));
/// assert_eq!(d.warnings[0].to_string(), "ignored b=abc: expected a whole number in 1..=16777216 (using 8)");
/// ```
pub fn decode(link: &str) -> Decoded {
    let mut query = query_part(link);
    let mut warnings = Vec::new();
    if query.len() > MAX_QUERY_BYTES {
        let mut end = MAX_QUERY_BYTES;
        while !query.is_char_boundary(end) {
            end -= 1;
        }
        // Drop the pair cut in half too.
        let kept = query.get(..end).unwrap_or_default();
        query = kept.rsplit_once('&').map_or("", |(before, _)| before);
        warnings.push(Warning {
            key: String::new(),
            value: String::new(),
            reason: Reason::TooLong,
            fallback: String::new(),
        });
    }
    decode_pairs(&parse_query(query), warnings)
}

/// [`decode`] for pairs already split (the page reads them once for its own keys too).
pub fn decode_pairs(pairs: &[(String, String)], mut warnings: Vec<Warning>) -> Decoded {
    let default = ShareState::default();
    let mut state = ShareState::default();
    let mut seen: Vec<&str> = Vec::new();
    let mut warn = |key: &str, value: &str, reason, fallback: String| {
        warnings.push(Warning {
            key: key.to_string(),
            value: quote(value),
            reason,
            fallback,
        });
    };
    for (key, value) in pairs {
        let key = key.trim();
        let known = KEYS.iter().find(|k| k.key == key);
        if known.is_none() && !["v", "j"].contains(&key) {
            continue;
        }
        if seen.contains(&key) {
            warn(key, value, Reason::Repeated, String::new());
            continue;
        }
        seen.push(key);
        match (key, known) {
            ("v", _) => match value.trim().parse::<u64>() {
                Ok(v) if v > u64::from(VERSION) => {
                    warn(key, value, Reason::NewerVersion, String::new())
                }
                Ok(v) if v >= 1 => {}
                _ => warn(
                    key,
                    value,
                    Reason::Count {
                        min: 1,
                        max: u64::from(VERSION),
                    },
                    VERSION.to_string(),
                ),
            },
            ("j", _) => match unpack_config(value) {
                Ok(text) => state.config_json = Some(text),
                Err(why) => warn(key, value, Reason::Config(why), String::new()),
            },
            (_, Some(k)) => {
                if let Err(reason) = (k.set)(&mut state, value) {
                    warn(key, value, reason, (k.get)(&default));
                }
            }
            _ => {}
        }
    }
    if state.config_json.is_some() && !seen.contains(&"m") {
        state.model = IMPORTED_MODEL.to_string();
    }
    if state.model == IMPORTED_MODEL && state.config_json.is_none() {
        warn("m", IMPORTED_MODEL, Reason::NoConfig, default.model.clone());
        state.model = default.model;
    }
    Decoded { state, warnings }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::share::warning::MAX_QUOTED_CHARS;

    #[test]
    fn defaults_write_only_the_version() {
        assert_eq!(ShareState::default().to_query(), "v=1");
        assert_eq!(decode("").state, ShareState::default());
        assert_eq!(decode("v=1").warnings, vec![]);
    }

    #[test]
    fn keys_are_unique_and_flags_name_cli_flags() {
        for (i, k) in KEYS.iter().enumerate() {
            assert!(
                KEYS.iter()
                    .skip(i + 1)
                    .all(|o| o.key != k.key && o.flag != k.flag),
                "{k:?}"
            );
            assert!(k.flag.starts_with("--"), "{k:?}");
            assert!(
                !["v", "j", "lang", "theme", "units", "lock", "curve"].contains(&k.key),
                "{k:?} clashes"
            );
        }
    }

    #[test]
    fn settings_render_as_cli_arguments() {
        let mut s = ShareState::default();
        s.train.parallel.sp = true;
        s.train.parallel.tp = 2;
        s.train.parallel.bucket_view = true;
        s.train.lora_fp32 = false;
        let args: Vec<String> = s.settings().iter().map(Setting::cli).collect();
        assert_eq!(
            args,
            ["--lora-fp32 off", "--tp 2", "--sp on", "--ddp-bucket-view"]
        );
    }

    #[test]
    fn long_values_are_shortened_in_warnings() {
        let d = decode(&format!("b={}", "9".repeat(500)));
        assert_eq!(
            d.warnings.first().map(|w| w.value.chars().count()),
            Some(MAX_QUOTED_CHARS + 1)
        );
    }
}
