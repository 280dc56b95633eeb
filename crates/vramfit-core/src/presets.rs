//! Built-in model presets: every family's ([`crate::models::FAMILIES`]).
//! Dimensions are the published ones (torchvision definitions, Hugging Face
//! `config.json` files); parameter counts are tested against
//! `tests/reference/param_counts.csv`, produced by instantiating the real
//! models with torch / torchvision / transformers.

use crate::error::Error;
use crate::models::PRESET_LISTS;

pub use crate::models::llama::spec as llama;
pub use crate::models::{Group, ModelPreset};

/// All model presets, grouped by family in display order.
pub fn model_presets() -> Vec<ModelPreset> {
    PRESET_LISTS.iter().flat_map(|presets| presets()).collect()
}

/// Looks a model preset up by id.
///
/// # Errors
/// [`Error::UnknownModel`] when no preset has this id.
pub fn model_preset(id: &str) -> Result<ModelPreset, Error> {
    model_presets()
        .into_iter()
        .find(|p| p.id == id)
        .ok_or_else(|| Error::UnknownModel(id.to_string()))
}
