//! Share links: everything that decides an estimate — model (a preset or a
//! pasted `config.json`), GPU and the whole [`TrainConfig`] — as a short,
//! readable URL query, shared by the web page, the embeddable widget and the
//! CLI (`vramfit estimate --url` / `--from-url`), so a link gives the same
//! numbers everywhere.
//!
//! The format is a stable interface (documented in the README):
//! `?v=2&m=bert-large&b=8&s=512&p=amp-bf16&o=adamw&c=full&g=rtx-3060-12gb`.
//! `v` is the format version, every other key is optional and its absence
//! means that version's default ([`ShareState::of_version`]); [`KEYS`] lists
//! them with their CLI flags. Values are the CLI's ids; switches are `1`/`0`;
//! a `config.json` travels packed (see [`pack_config`]).
//!
//! Version 2 changed two defaults, so a version-1 link keeps its own:
//! attention (`at`) is SDPA, as `transformers` runs it unless told
//! otherwise, where version 1 meant eager; and LoRA's frozen base (`lb`) is
//! in the compute type under AMP, where version 1 kept it in fp32.
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
pub use warning::{Reason, Warning, drop_expert_split};

use crate::config::{Attention, LoraBase, Precision, TrainConfig};
use crate::engines::Serving;
use warning::quote;

/// The format version this code writes. A link with settings but without
/// `v` is read as version 1 (what every link meant before `v` could be 2);
/// one with no setting at all (the page's bare address) as this version.
pub const VERSION: u32 = 2;

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
    /// What an omitted key means in the current version ([`VERSION`]) — the
    /// page's first screen: GPT-2, batch 8 of 512 tokens, AMP bf16, AdamW,
    /// SDPA attention, on an RTX 4090 (see [`ShareState::of_version`]).
    fn default() -> Self {
        ShareState::of_version(VERSION)
    }
}

impl ShareState {
    /// What an omitted key means in a link of format `version` (tests pin
    /// these values: changing one would change what old links say).
    ///
    /// - Version 1: GPT-2, batch 8 of 512 tokens, AMP bf16, AdamW, eager
    ///   attention, on an RTX 4090; every other setting as
    ///   [`TrainConfig::default`] had it when version 1 was published. Its
    ///   LoRA and QLoRA kept the frozen base in fp32 under AMP: [`decode`]
    ///   sets [`LoraBase::Fp32`] for a version-1 link in those modes, since
    ///   the mode and precision come from other keys.
    /// - Version 2 (and any later one this code does not know, which
    ///   decoding refuses with a warning): as version 1 but SDPA attention
    ///   and LoRA's base in the compute type ([`LoraBase::Compute`]).
    pub fn of_version(version: u32) -> ShareState {
        let attention = if version <= 1 {
            Attention::Eager
        } else {
            Attention::Sdpa
        };
        ShareState {
            model: "gpt2".to_string(),
            config_json: None,
            gpu: "rtx-4090".to_string(),
            train: TrainConfig {
                precision: Precision::AmpBf16,
                attention,
                lora_base: LoraBase::Compute,
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
    /// assert_eq!(s.to_query(), "v=2&m=bert-large&g=rtx-3060-12gb&c=full");
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
/// let d = decode("https://vramfit.github.io/vramfit/?v=2&m=resnet50&b=abc&zz=1&i=256");
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
    let version = link_version(pairs);
    let default = ShareState::of_version(version);
    let mut state = default.clone();
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
    // Version 1 kept LoRA's base in fp32 under AMP; only there does it matter.
    let version_1_base = TrainConfig {
        lora_base: LoraBase::Fp32,
        ..state.train
    };
    if version == 1 && !seen.contains(&"lb") {
        state.train.lora_base = version_1_base.lora_base_if_it_matters();
    }
    Decoded { state, warnings }
}

/// The format version whose defaults a link's omitted keys take: its `v`
/// when that is a version this code knows (the first `v`; a repeated one is
/// ignored with a warning), otherwise the current one — except a link with
/// settings but no `v` at all, which is version 1 (the README's rule since
/// version 1).
fn link_version(pairs: &[(String, String)]) -> u32 {
    match pairs.iter().find(|(k, _)| k.trim() == "v") {
        Some((_, v)) => match v.trim().parse::<u32>() {
            Ok(v) if (1..=VERSION).contains(&v) => v,
            _ => VERSION,
        },
        None => {
            let settings = pairs
                .iter()
                .any(|(k, _)| k.trim() == "j" || KEYS.iter().any(|key| key.key == k.trim()));
            if settings { 1 } else { VERSION }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::share::warning::MAX_QUOTED_CHARS;

    #[test]
    fn defaults_write_only_the_version() {
        assert_eq!(ShareState::default().to_query(), "v=2");
        assert_eq!(decode("").state, ShareState::default());
        assert_eq!(decode("v=2").warnings, vec![]);
        assert_eq!(decode("v=1").warnings, vec![]);
    }

    #[test]
    fn a_version_1_link_keeps_eager_attention_and_an_fp32_lora_base() {
        let old = decode("v=1&m=llama-2-7b&mo=finetune-lora").state;
        assert_eq!(old.train.attention, Attention::Eager);
        assert_eq!(old.train.lora_base, LoraBase::Fp32);
        assert_eq!(
            old.to_query(),
            "v=2&m=llama-2-7b&at=eager&mo=finetune-lora&lb=fp32"
        );
        assert_eq!(decode(&old.to_query()).state, old);
        // Where the base's type changes nothing, the link written back says nothing of it.
        assert_eq!(
            decode("v=1&m=resnet50").state.to_query(),
            "v=2&m=resnet50&at=eager"
        );
        // Settings without `v` are version 1; a bare address is the current first screen.
        assert_eq!(decode("m=gpt2").state.train.attention, Attention::Eager);
        assert_eq!(decode("lang=zh-CN").state, ShareState::default());
        let new = decode("v=2&m=llama-2-7b&mo=finetune-lora").state;
        assert_eq!(
            (new.train.attention, new.train.lora_base),
            (Attention::Sdpa, LoraBase::Compute)
        );
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
