//! Reading a Hugging Face `config.json`'s fields: whole numbers, strings,
//! lists and flags, with the messages every family's reader shares.

use crate::error::Error;
use serde_json::{Map, Value};

/// The fields vLLM reads a model's length from (`possible_keys` in
/// `_get_and_verify_max_len`).
const CONTEXT_KEYS: [&str; 8] = [
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
];

/// The second names `transformers` gives a field, per `model_type`: each
/// config class's `attribute_map` (read from `transformers` 5.17), under
/// which a `config.json` may carry either name. `save_pretrained` writes the
/// canonical one, so Qwen3-MoE's published `num_experts` comes back as
/// `num_local_experts` from `transformers` 5.
const ATTRIBUTE_MAPS: [(&str, &[(&str, &str)]); 15] = [
    ("deepseek_v2", &[("num_experts", "n_routed_experts")]),
    (
        "deepseek_v3",
        &[
            ("num_local_experts", "n_routed_experts"),
            ("num_mtp_layers", "num_nextn_predict_layers"),
        ],
    ),
    (
        "distilbert",
        &[
            ("hidden_size", "dim"),
            ("num_attention_heads", "n_heads"),
            ("num_hidden_layers", "n_layers"),
        ],
    ),
    (
        "ernie4_5_moe",
        &[
            ("num_experts", "moe_num_experts"),
            ("num_experts_per_tok", "moe_k"),
        ],
    ),
    (
        "glm4_moe_lite",
        &[
            ("num_local_experts", "n_routed_experts"),
            ("head_dim", "qk_rope_head_dim"),
        ],
    ),
    (
        "gpt2",
        &[
            ("hidden_size", "n_embd"),
            ("max_position_embeddings", "n_positions"),
            ("num_attention_heads", "n_head"),
            ("num_hidden_layers", "n_layer"),
        ],
    ),
    (
        "gpt_bigcode",
        &[
            ("hidden_size", "n_embd"),
            ("max_position_embeddings", "n_positions"),
            ("num_attention_heads", "n_head"),
            ("num_hidden_layers", "n_layer"),
        ],
    ),
    ("gpt_oss", &[("num_experts", "num_local_experts")]),
    ("granitemoehybrid", &[("layer_types", "layers_block_type")]),
    ("minimax_m2", &[("num_experts", "num_local_experts")]),
    ("mixtral", &[("num_experts", "num_local_experts")]),
    (
        "nemotron_h",
        &[
            ("layer_types", "layers_block_type"),
            ("num_local_experts", "n_routed_experts"),
        ],
    ),
    ("olmoe", &[("num_local_experts", "num_experts")]),
    ("qwen3_moe", &[("num_experts", "num_local_experts")]),
    (
        "t5",
        &[
            ("hidden_size", "d_model"),
            ("num_attention_heads", "num_heads"),
            ("num_hidden_layers", "num_layers"),
            ("head_dim", "d_kv"),
        ],
    ),
];

/// `map` with each of its `model_type`'s second names filled in from the
/// other name where only one is set (non-null), as `transformers` reads
/// them: both name the same attribute. Where both are set, each keeps its
/// own value.
pub fn with_attribute_aliases(model_type: &str, map: &Map<String, Value>) -> Map<String, Value> {
    let mut out = map.clone();
    let pairs = ATTRIBUTE_MAPS
        .iter()
        .find(|(t, _)| *t == model_type)
        .map_or(&[][..], |(_, pairs)| *pairs);
    let set = |m: &Map<String, Value>, k: &str| m.get(k).is_some_and(|v| !v.is_null());
    for (alias, canonical) in pairs {
        for (from, to) in [(alias, canonical), (canonical, alias)] {
            if set(map, from) && !set(map, to) {
                out.insert((*to).to_owned(), map[*from].clone());
            }
        }
    }
    out
}

/// The fields of a Hugging Face `config.json` object, read with the checks
/// and messages every family shares.
pub struct Fields<'a> {
    /// The object.
    pub map: &'a Map<String, Value>,
    /// Its `model_type`.
    pub model_type: String,
}

impl Fields<'_> {
    /// A whole number, `None` when absent or null.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] for a value that is not a non-negative whole number.
    pub fn opt_u64(&self, key: &'static str) -> Result<Option<u64>, Error> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                Error::InvalidModel(format!(
                    "config.json field '{key}' must be a non-negative whole number, got {v}"
                ))
            }),
        }
    }

    /// `num_attention_heads`, `default` when absent: at least one, which
    /// every head width is divided by.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] for 0, as [`Fields::opt_u64`] otherwise.
    pub fn heads_or(&self, default: u64) -> Result<u64, Error> {
        match self.opt_u64("num_attention_heads")?.unwrap_or(default) {
            0 => Err(Error::InvalidModel(
                "num_attention_heads must be at least 1".into(),
            )),
            heads => Ok(heads),
        }
    }

    /// A required whole number.
    ///
    /// # Errors
    /// [`Error::MissingField`] when absent, as [`Fields::opt_u64`] otherwise.
    pub fn u64(&self, key: &'static str) -> Result<u64, Error> {
        self.opt_u64(key)?.ok_or_else(|| Error::MissingField {
            model_type: self.model_type.clone(),
            field: key,
        })
    }

    /// A number, or `default` when absent or not a number.
    pub fn f64_or(&self, key: &str, default: f64) -> f64 {
        self.map.get(key).and_then(Value::as_f64).unwrap_or(default)
    }

    /// A string, or `default` when absent or null.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] for a value that is not a string.
    pub fn str_or<'s>(&'s self, key: &'static str, default: &'s str) -> Result<&'s str, Error> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::String(s)) => Ok(s),
            Some(v) => Err(Error::InvalidModel(format!(
                "config.json field '{key}' must be a string, got {v}"
            ))),
        }
    }

    /// A list of whole numbers (at most [`crate::models::MAX_LAYERS`] of them).
    ///
    /// # Errors
    /// [`Error::MissingField`] when absent, [`Error::InvalidModel`] when malformed or too long.
    pub fn u64_list(&self, key: &'static str) -> Result<Vec<u64>, Error> {
        let bad = || {
            Error::InvalidModel(format!(
                "config.json field '{key}' must be a list of non-negative whole numbers"
            ))
        };
        let list = self.map.get(key).ok_or_else(|| Error::MissingField {
            model_type: self.model_type.clone(),
            field: key,
        })?;
        let items = list.as_array().ok_or_else(bad)?;
        if items.len() as u64 > crate::models::MAX_LAYERS {
            return Err(Error::InvalidModel(format!(
                "config.json field '{key}' lists {} entries, more than {}",
                items.len(),
                crate::models::MAX_LAYERS
            )));
        }
        items.iter().map(|v| v.as_u64().ok_or_else(bad)).collect()
    }

    /// A number in the rotary embedding's parameters: `rope_scaling` when it
    /// is a non-empty object, else `rope_parameters` (`transformers`'
    /// `convert_rope_params_to_dict`); `None` when absent or not a number.
    pub fn rope_f64(&self, key: &str) -> Option<f64> {
        let object = |name: &str| {
            self.map
                .get(name)
                .and_then(Value::as_object)
                .filter(|o| !o.is_empty())
        };
        object("rope_scaling")
            .or_else(|| object("rope_parameters"))
            .and_then(|o| o.get(key))
            .and_then(Value::as_f64)
    }

    /// The longest context the configuration supports, 0 when it names
    /// none: as vLLM derives `max_model_len` (`vllm/config/model.py`,
    /// `_get_and_verify_max_len`), the smallest of the length fields
    /// present, times the rope scaling `factor` unless the scaling is one
    /// that keeps the configured length (`llama3`, `longrope`, `su`); YaRN
    /// stretches its `original_max_position_embeddings`.
    pub fn context_limit(&self) -> u64 {
        let base = CONTEXT_KEYS
            .iter()
            .filter_map(|k| self.map.get(*k).and_then(Value::as_u64))
            .filter(|&n| n > 0)
            .min();
        let Some(base) = base else { return 0 };
        let rope = ["rope_scaling", "rope_parameters"]
            .iter()
            .find_map(|k| self.map.get(*k).and_then(Value::as_object));
        let kind = rope
            .and_then(|o| o.get("rope_type").or_else(|| o.get("type")))
            .and_then(Value::as_str)
            .unwrap_or("default");
        let factor = self
            .rope_f64("factor")
            .filter(|f| f.is_finite() && *f >= 1.0);
        match (kind, factor) {
            ("llama3" | "longrope" | "su" | "default" | "mrope", _) | (_, None) => base,
            (kind, Some(factor)) => {
                let stretched = match kind {
                    "yarn" => self
                        .rope_f64("original_max_position_embeddings")
                        .filter(|n| *n >= 1.0)
                        .unwrap_or(base as f64),
                    _ => base as f64,
                };
                // Saturating: a factor that overflows u64 names no limit worth keeping.
                (stretched * factor).min(u64::MAX as f64) as u64
            }
        }
    }

    /// A boolean, or `default` when absent or not a boolean.
    pub fn bool_or(&self, key: &str, default: bool) -> bool {
        self.map
            .get(key)
            .and_then(Value::as_bool)
            .unwrap_or(default)
    }

    /// Whether an optional number is set: `default` when absent, `false`
    /// when null (Gemma 2's soft-capping fields: absent is the config
    /// class's default, `null` turns it off).
    ///
    /// # Errors
    /// [`Error::InvalidModel`] for a value that is neither a number nor null.
    pub fn number_set(&self, key: &'static str, default: bool) -> Result<bool, Error> {
        match self.map.get(key) {
            None => Ok(default),
            Some(Value::Null) => Ok(false),
            Some(Value::Number(_)) => Ok(true),
            Some(v) => Err(Error::InvalidModel(format!(
                "config.json field '{key}' must be a number or null, got {v}"
            ))),
        }
    }

    /// A list of strings, `None` when absent or null.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] for anything else, or a list longer than
    /// [`crate::models::MAX_LAYERS`].
    pub fn opt_str_list(&self, key: &'static str) -> Result<Option<Vec<&str>>, Error> {
        let bad = || {
            Error::InvalidModel(format!(
                "config.json field '{key}' must be a list of strings of at most {} entries",
                crate::models::MAX_LAYERS
            ))
        };
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) if items.len() as u64 <= crate::models::MAX_LAYERS => items
                .iter()
                .map(|v| v.as_str().ok_or_else(bad))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(bad()),
        }
    }

    /// The `architectures` list (empty when absent).
    pub fn architectures(&self) -> Vec<String> {
        self.map
            .get("architectures")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}
