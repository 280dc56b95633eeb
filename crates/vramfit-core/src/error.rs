//! The errors the core reports. Each names what was wrong and what is accepted.

use thiserror::Error;

/// Everything that can go wrong while building a model or estimating.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// A value is not one of a fixed set of choices.
    #[error("invalid {field} '{value}': expected one of {accepted}")]
    InvalidChoice {
        /// The field or flag name.
        field: &'static str,
        /// What was given.
        value: String,
        /// The accepted values, `|`-separated.
        accepted: String,
    },
    /// A number is outside its accepted range.
    #[error("{field} = {value} is out of range: expected {min}..={max}")]
    OutOfRange {
        /// The field or flag name.
        field: &'static str,
        /// What was given.
        value: String,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// No model preset has this id.
    #[error(
        "unknown model '{0}': run `vramfit presets` for the list, or pass a Hugging Face config.json"
    )]
    UnknownModel(String),
    /// No GPU preset has this id.
    #[error(
        "unknown GPU '{0}': run `vramfit presets` for the list, or give custom-<GiB> for a GPU by its memory (1 to 4096 GiB)"
    )]
    UnknownGpu(String),
    /// A Hugging Face `config.json` could not be parsed as JSON.
    #[error("config.json is not valid JSON: {0}")]
    ConfigJson(String),
    /// A Hugging Face `config.json` has a `model_type` we do not lower.
    #[error("unsupported model_type '{model_type}': supported are {supported}")]
    UnsupportedModelType {
        /// The `model_type` found.
        model_type: String,
        /// The supported types, comma-separated.
        supported: String,
    },
    /// A Hugging Face `config.json` lacks a field the model needs.
    #[error("config.json (model_type '{model_type}') is missing required field '{field}'")]
    MissingField {
        /// The `model_type` of the config.
        model_type: String,
        /// The missing field.
        field: &'static str,
    },
    /// A model's dimensions are inconsistent (e.g. heads do not divide hidden).
    #[error("invalid model: {0}")]
    InvalidModel(String),
    /// The input does not apply to this model (e.g. an image size for a text model).
    #[error("{0}")]
    NotApplicable(String),
    /// A size the model and configuration imply (a tensor, a parameter, a
    /// count of layers) is beyond a limit that keeps every byte count exact in
    /// 64 bits and every estimate fast. The limits are far beyond any GPU.
    #[error("{what} is too large: {value} is more than the limit of {limit}")]
    TooLarge {
        /// What was too large, e.g. "attention scores per sample (heads × seq × seq)".
        what: String,
        /// Its size (or "more than 2^64" when it overflows).
        value: String,
        /// The limit, e.g. "2^56 elements".
        limit: String,
    },
}

/// Checks `min <= value <= max` for the named field.
///
/// # Errors
/// [`Error::OutOfRange`] when it is not.
pub fn check_range(field: &'static str, value: u64, min: u64, max: u64) -> Result<(), Error> {
    if value < min || value > max {
        return Err(Error::OutOfRange {
            field,
            value: value.to_string(),
            min,
            max,
        });
    }
    Ok(())
}
