//! The Hugging Face `config.json` box: the text as pasted, why it does not
//! import (if it does not), and the last model that did, which stays in use
//! while the user edits the text into something invalid.

use crate::i18n::{Key, Lang, t, tf};
use crate::prefs::Units;
use crate::present;
use std::rc::Rc;
use vramfit_core::Error;
use vramfit_core::error::NotLlamaStyle;
use vramfit_core::hf::{Assumption, Imported, import, supported};

/// Largest file accepted by drop or file choice; real `config.json` files
/// are a few kilobytes, so anything this large is the wrong file.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Why a `config.json` did not import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportError {
    /// The core rejected the text.
    Core(Error),
    /// A dropped or chosen file is larger than [`MAX_FILE_BYTES`] (its size).
    TooLarge(u64),
    /// A dropped or chosen file could not be read as text.
    Unreadable,
    /// A model's `config.json` could not be fetched from the Hub.
    Hub {
        /// The model id as typed (`org/model`).
        id: String,
        /// What went wrong.
        error: HubError,
    },
}

/// Why the Hugging Face Hub did not give a model's `config.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HubError {
    /// No answer: offline, or the request was blocked.
    Offline,
    /// 401 or 403: a gated or private model (the Hub also answers 401 for
    /// a repository that does not exist, so as not to reveal private ones).
    Refused(u16),
    /// 404: the repository has no `config.json` on its main branch.
    NotFound,
    /// Any other status.
    Status(u16),
}

impl HubError {
    /// The error an HTTP status other than 200 means.
    pub fn from_status(status: u16) -> HubError {
        match status {
            401 | 403 => HubError::Refused(status),
            404 => HubError::NotFound,
            other => HubError::Status(other),
        }
    }
}

/// The only origin the page fetches from (the page's CSP allows it in
/// `connect-src`, and nothing else beyond the page's own).
pub const HUB_ORIGIN: &str = "https://huggingface.co";

/// The model id in `text` if it reads as a Hub repository id,
/// `org/model`: two parts of letters, digits, `-`, `_` and `.`, each at most
/// 96 long, neither starting with `-` or `.` nor holding `--` or `..`
/// (the Hub's own rules, `huggingface_hub`'s `validate_repo_id`).
pub fn hub_id(text: &str) -> Option<&str> {
    let id = text.trim();
    let (org, name) = id.split_once('/')?;
    let part_ok = |p: &str| {
        (1..=96).contains(&p.len())
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && !p.starts_with(['-', '.'])
            && !p.contains("--")
            && !p.contains("..")
    };
    (part_ok(org) && part_ok(name)).then_some(id)
}

/// Where the Hub serves a model's `config.json` (its main branch).
pub fn hub_config_url(id: &str) -> String {
    format!("{HUB_ORIGIN}/{id}/resolve/main/config.json")
}

impl ImportError {
    /// The message shown under the box, in `lang`. Core details that quote
    /// the JSON parser stay in English after a translated explanation.
    pub fn message(&self, lang: Lang, units: Units) -> String {
        match self {
            ImportError::Core(Error::ConfigJson(why)) => tf(lang, Key::ImportNotJson, &[why]),
            ImportError::Core(Error::UnsupportedModelType {
                model_type,
                why,
                supported,
            }) => tf(
                lang,
                Key::ImportUnsupported,
                &[model_type, supported, &not_llama_style(why, lang)],
            ),
            ImportError::Core(Error::NestedConfig { model_type, part }) => {
                tf(lang, Key::ImportNested, &[model_type, part])
            }
            ImportError::Core(Error::MissingField { model_type, field }) => {
                tf(lang, Key::ImportMissing, &[model_type, field])
            }
            ImportError::Core(Error::InvalidModel(why)) => tf(lang, Key::ImportInvalid, &[why]),
            ImportError::Core(other) => tf(
                lang,
                Key::EstimatorRejected,
                &[&crate::messages::core_error(other, lang)],
            ),
            ImportError::TooLarge(size) => tf(
                lang,
                Key::ImportTooLarge,
                &[&present::bytes(vramfit_core::Bytes(*size), units)],
            ),
            ImportError::Unreadable => t(lang, Key::ImportUnreadable).to_string(),
            ImportError::Hub { id, error } => match error {
                HubError::Offline => tf(lang, Key::ImportHubOffline, &[id]),
                HubError::Refused(status) => {
                    tf(lang, Key::ImportHubRefused, &[id, &status.to_string()])
                }
                HubError::NotFound => tf(lang, Key::ImportHubNotFound, &[id]),
                HubError::Status(status) => {
                    tf(lang, Key::ImportHubStatus, &[id, &status.to_string()])
                }
            },
        }
    }
}

/// Why an unknown `model_type` is not read as a Llama-style decoder, in `lang`.
fn not_llama_style(why: &NotLlamaStyle, lang: Lang) -> String {
    match why {
        NotLlamaStyle::Missing(fields) => tf(lang, Key::NotLlamaMissing, &[&fields.join(", ")]),
        NotLlamaStyle::Experts(field) => tf(lang, Key::NotLlamaExperts, &[field]),
        NotLlamaStyle::LatentAttention => t(lang, Key::NotLlamaLatent).to_string(),
        NotLlamaStyle::OtherLayers(which) => tf(lang, Key::NotLlamaOtherLayers, &[which]),
        NotLlamaStyle::UngatedMlp(act) => tf(lang, Key::NotLlamaUngatedMlp, &[act]),
        NotLlamaStyle::Encoder(which) => tf(lang, Key::NotLlamaEncoder, &[which]),
        NotLlamaStyle::Contradictory(why) => tf(lang, Key::NotLlamaContradictory, &[why]),
    }
}

/// One assumption of a Llama-style reading, in `lang`.
fn assumption(a: &Assumption, lang: Lang) -> String {
    match a {
        Assumption::LlamaLayout { model_type } => tf(lang, Key::AssumeLayout, &[model_type]),
        Assumption::HeadDim(d) => tf(lang, Key::AssumeHeadDim, &[&d.to_string()]),
        Assumption::KvHeads(n) => tf(lang, Key::AssumeKvHeads, &[&n.to_string()]),
        Assumption::UntiedHead => t(lang, Key::AssumeUntied).to_string(),
        Assumption::Ignored(fields) => tf(lang, Key::AssumeIgnored, &[&fields.join(", ")]),
        Assumption::QwenHalvedMlp(width) => tf(lang, Key::AssumeQwenMlp, &[&width.to_string()]),
        Assumption::LanguageModelOnly {
            model_type,
            part,
            text_model_type,
        } => tf(
            lang,
            Key::ImportLanguageModel,
            &[model_type, part, text_model_type],
        ),
        Assumption::EncodersFrozen {
            model_type,
            part,
            text_model_type,
            params,
            kind,
        } => tf(
            lang,
            Key::ImportEncoders,
            &[
                model_type,
                part,
                text_model_type,
                kind,
                &present::count(*params, lang),
            ],
        ),
    }
}

/// The state of the import box.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportState {
    /// The text as pasted or read from a file.
    pub text: String,
    /// Why `text` does not import; `None` when it does or is empty.
    pub error: Option<ImportError>,
    /// The last model that imported.
    pub model: Option<Rc<Imported>>,
    /// The text `model` was imported from (what a share link carries).
    pub valid_text: String,
    /// Its parameter count.
    pub parameters: u64,
}

/// How the line under the import box reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Help (nothing imported yet).
    Hint,
    /// A model is imported from the current text.
    Ok,
    /// A model is imported, read with assumptions the user should check.
    Warn,
    /// The current text does not import.
    Error,
}

impl ImportState {
    /// Takes new text; returns whether it imported a model (which then
    /// replaces the previous one). Empty text clears the message only.
    pub fn set_text(&mut self, text: String) -> bool {
        let imported = if text.trim().is_empty() || hub_id(&text).is_some() {
            // A Hub id is fetched on request; until then nothing is wrong.
            self.error = None;
            false
        } else {
            match import(&text) {
                Ok(m) => {
                    self.parameters = m.spec.parameter_count().unwrap_or(0);
                    self.model = Some(Rc::new(m));
                    self.valid_text.clone_from(&text);
                    self.error = None;
                    true
                }
                Err(e) => {
                    self.error = Some(ImportError::Core(e));
                    false
                }
            }
        };
        self.text = text;
        imported
    }

    /// Records a file that could not be used; the previous model stays.
    pub fn fail(&mut self, error: ImportError) {
        self.error = Some(error);
    }

    /// The line under the box: why the text does not import (and which
    /// model is still used), what was imported, or which types import.
    pub fn status(&self, lang: Lang, units: Units) -> (Tone, String) {
        let name = self.model.as_ref().map(|m| m.name.as_str());
        if let (None, Some(id)) = (&self.error, hub_id(&self.text)) {
            return (Tone::Hint, tf(lang, Key::ImportHubOffer, &[id]));
        }
        match (&self.error, name) {
            (Some(e), Some(name)) => (
                Tone::Error,
                format!(
                    "{} {}",
                    e.message(lang, units),
                    tf(lang, Key::ImportKept, &[name])
                ),
            ),
            (Some(e), None) => (Tone::Error, e.message(lang, units)),
            (None, Some(name)) => {
                let ok = tf(
                    lang,
                    Key::ImportOk,
                    &[name, &present::count(self.parameters, lang)],
                );
                let assumed = self.model.as_ref().map_or(&[][..], |m| &m.assumptions[..]);
                if assumed.is_empty() {
                    return (Tone::Ok, ok);
                }
                let sep = match lang {
                    Lang::En => "; ",
                    Lang::Zh => "；",
                };
                // A multimodal config's language model is said first; the
                // Llama-style reading's assumptions follow, if any.
                let (multimodal, llama): (Vec<_>, Vec<_>) = assumed.iter().partition(|a| {
                    matches!(
                        a,
                        Assumption::LanguageModelOnly { .. } | Assumption::EncodersFrozen { .. }
                    )
                });
                let mut text = ok;
                for a in multimodal {
                    text = format!("{text} {}", assumption(a, lang));
                }
                if !llama.is_empty() {
                    let list: Vec<String> = llama.iter().map(|a| assumption(a, lang)).collect();
                    text = format!(
                        "{text} {}",
                        tf(lang, Key::ImportAssumed, &[&list.join(sep)])
                    );
                }
                (Tone::Warn, text)
            }
            (None, None) => (Tone::Hint, tf(lang, Key::ImportHint, &[&supported()])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LLAMA: &str = r#"{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
        "num_hidden_layers": 32, "num_key_value_heads": 32, "vocab_size": 32000, "_name_or_path": "meta-llama/Llama-2-7b-hf"}"#;

    #[test]
    fn a_valid_config_imports_and_an_invalid_one_keeps_it() {
        let mut s = ImportState::default();
        assert!(s.set_text(LLAMA.to_string()));
        let name = s.model.as_ref().map(|m| m.name.clone());
        assert_eq!(name.as_deref(), Some("meta-llama/Llama-2-7b-hf"));
        assert!(!s.set_text("{\"model_type\": \"llama\"".to_string()));
        let message = s
            .error
            .as_ref()
            .map(|e| e.message(Lang::En, Units::Binary))
            .unwrap_or_default();
        assert!(message.starts_with("This is not valid JSON: "), "{message}");
        assert_eq!(
            s.model.as_ref().map(|m| m.name.clone()),
            name,
            "the last valid import is kept"
        );
        let (tone, line) = s.status(Lang::En, Units::Binary);
        assert_eq!(tone, Tone::Error);
        assert!(
            line.ends_with("Still using the last valid import, meta-llama/Llama-2-7b-hf."),
            "{line}"
        );
        assert!(!s.set_text("  ".to_string()));
        assert_eq!(s.error, None);
        assert_eq!(
            s.status(Lang::En, Units::Binary),
            (
                Tone::Ok,
                "Imported meta-llama/Llama-2-7b-hf: 6.74B parameters.".to_string()
            )
        );
        assert_eq!(
            ImportState::default().status(Lang::Zh, Units::Binary).0,
            Tone::Hint
        );
    }

    #[test]
    fn an_unknown_decoder_imports_with_its_assumptions_shown() {
        let mut s = ImportState::default();
        let unknown = LLAMA.replace("\"llama\"", "\"internlm3\"");
        assert!(s.set_text(unknown));
        let (tone, line) = s.status(Lang::En, Units::Binary);
        assert_eq!(tone, Tone::Warn);
        assert!(
            line.starts_with("Imported meta-llama/Llama-2-7b-hf: 6.74B parameters. Read as a Llama-style decoder; check these assumptions: model_type “internlm3” is not one vramfit knows"),
            "{line}"
        );
        assert!(
            line.contains(
                "; head_dim = hidden_size / num_attention_heads = 128; a separate LM head"
            ),
            "{line}"
        );
        let (_, zh) = s.status(Lang::Zh, Units::Binary);
        assert!(
            zh.contains("已按 Llama 式解码器读取") && zh.contains("；"),
            "{zh}"
        );
    }

    #[test]
    fn messages_name_the_problem_in_both_languages() {
        let mut s = ImportState::default();
        s.set_text(r#"{"model_type": "rwkv", "hidden_size": 768}"#.to_string());
        let e = s.error.clone().unwrap_or(ImportError::Unreadable);
        assert_eq!(
            e.message(Lang::En, Units::Binary),
            format!(
                "model_type “rwkv” is not supported: it lacks vocab_size, num_hidden_layers, num_attention_heads, intermediate_size, which a Llama-style decoder is read from. Supported are {}.",
                supported()
            )
        );
        assert!(
            e.message(Lang::Zh, Units::Binary)
                .starts_with("不支持 model_type“rwkv”：缺少 vocab_size")
        );
        // A multimodal config whose language model no family reads.
        s.set_text(
            r#"{"model_type": "glm4v_moe", "text_config": {"model_type": "glm4v_moe_text"}}"#
                .to_string(),
        );
        let nested = s
            .error
            .as_ref()
            .map(|e| e.message(Lang::Zh, Units::Binary))
            .unwrap_or_default();
        assert!(nested.contains("“text_config”"), "{nested}");
        // One whose language model a family reads: estimated, the encoders named as not counted.
        s.set_text(
            r#"{"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
            "text_config": {"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096,
            "num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": 11008}}"#
                .to_string(),
        );
        let (_, en) = s.status(Lang::En, Units::Binary);
        assert!(
            en.starts_with("Imported LlavaForConditionalGeneration: 6.74B parameters. This llava config is multimodal: its language model (“text_config”, model_type “llama”) is estimated; the vision and audio encoders are not counted."),
            "{en}"
        );
        let (_, zh) = s.status(Lang::Zh, Units::Binary);
        assert!(zh.contains("此 llava 配置是多模态模型"), "{zh}");
        // With its vision config: the encoder is counted, and said to be.
        s.set_text(
            r#"{"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
            "text_config": {"model_type": "llama", "vocab_size": 32064, "hidden_size": 4096,
            "num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": 11008},
            "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
            "model_type": "clip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 24,
            "patch_size": 14}}"#
                .to_string(),
        );
        let (tone, en) = s.status(Lang::En, Units::Binary);
        assert_eq!(tone, Tone::Warn);
        assert!(
            en.starts_with("Imported LlavaForConditionalGeneration: 7.06B parameters. This llava config is multimodal: its language model (“text_config”, model_type “llama”) is estimated with its encoders (clip_vision_model, 324M parameters) held as frozen 16-bit weights"),
            "{en}"
        );
        let (_, zh) = s.status(Lang::Zh, Units::Binary);
        assert!(
            zh.contains("编码器（clip_vision_model，3.24 亿参数）"),
            "{zh}"
        );
        s.set_text(r#"{"model_type": "llama", "vocab_size": 32000}"#.to_string());
        let m = s
            .error
            .as_ref()
            .map(|e| e.message(Lang::En, Units::Binary))
            .unwrap_or_default();
        assert!(
            m.starts_with("This llama config lacks the required field “"),
            "{m}"
        );
        assert_eq!(
            ImportError::TooLarge(5 << 30)
                .message(Lang::En, Units::Binary)
                .split(';')
                .next(),
            Some("That file is 5.00 GiB")
        );
    }

    #[test]
    fn a_hub_id_is_offered_for_fetching_and_json_is_not() {
        assert_eq!(hub_id(" Qwen/Qwen3-8B\n"), Some("Qwen/Qwen3-8B"));
        assert_eq!(
            hub_id("meta-llama/Llama-3.1-8B"),
            Some("meta-llama/Llama-3.1-8B")
        );
        for not_an_id in [
            "{\"model_type\": \"llama\"}",
            "Qwen3-8B",
            "a/b/c",
            "a/../b",
            "-x/y",
            "a--b/c",
            "a b/c",
            "/x",
            "x/",
        ] {
            assert_eq!(hub_id(not_an_id), None, "{not_an_id}");
        }
        assert_eq!(
            hub_config_url("Qwen/Qwen3-8B"),
            "https://huggingface.co/Qwen/Qwen3-8B/resolve/main/config.json"
        );
        let mut s = ImportState::default();
        assert!(!s.set_text("Qwen/Qwen3-8B".to_string()));
        assert_eq!(s.error, None, "an id is no parse error");
        let (tone, line) = s.status(Lang::En, Units::default());
        assert_eq!(tone, Tone::Hint);
        assert!(
            line.starts_with("Qwen/Qwen3-8B looks like a model on the Hugging Face Hub"),
            "{line}"
        );
        assert!(line.contains("from your browser"), "{line}");
        let (_, zh) = s.status(Lang::Zh, Units::default());
        assert!(zh.contains("浏览器"), "{zh}");
    }

    #[test]
    fn hub_failures_say_what_happened_in_both_languages_and_keep_the_box() {
        assert_eq!(HubError::from_status(401), HubError::Refused(401));
        assert_eq!(HubError::from_status(403), HubError::Refused(403));
        assert_eq!(HubError::from_status(404), HubError::NotFound);
        assert_eq!(HubError::from_status(500), HubError::Status(500));
        let mut s = ImportState::default();
        s.set_text("meta-llama/Llama-3.1-8B".to_string());
        let cases = [
            (
                HubError::Offline,
                "Could not reach huggingface.co",
                "无法连接",
            ),
            (HubError::Refused(401), "gated or private", "需要授权"),
            (HubError::NotFound, "HTTP 404", "HTTP 404"),
            (HubError::Status(503), "HTTP 503", "HTTP 503"),
        ];
        for (error, en, zh) in cases {
            s.fail(ImportError::Hub {
                id: "meta-llama/Llama-3.1-8B".to_string(),
                error,
            });
            let (tone, line) = s.status(Lang::En, Units::default());
            assert_eq!(tone, Tone::Error);
            assert!(
                line.contains(en) && line.contains("meta-llama/Llama-3.1-8B"),
                "{line}"
            );
            let (_, line) = s.status(Lang::Zh, Units::default());
            assert!(line.contains(zh), "{line}");
            // The text stays for the user to replace with a pasted config.json.
            assert_eq!(s.text, "meta-llama/Llama-3.1-8B");
        }
    }
}
