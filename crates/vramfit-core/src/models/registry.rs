//! The registry of model families. The `config.json` import, the preset
//! list, the command line, share links (which carry the pasted
//! `config.json` itself) and the page's model list all read [`FAMILIES`],
//! so adding a family is its module (see [`super::family`]), its tests and
//! one line here.

use super::family::{Family, Import, ModelPreset};
use super::{
    bamba, bert, cnn, cohere, convnext, deepseek, dots1, efficientnet, ernie, exaone4, gemma,
    gemma4, glm4, glm4_moe, gpt_bigcode, gpt_neox, gpt_oss, gpt2, granite, granite_moe, hunyuan,
    llama, llama4, minimax_m2, mixtral, mobilenet_v3, nemotron_h, olmo2, olmoe, opt, phi, phi3,
    qwen_moe, qwen3, qwen3_5, regnet, relu2, seed_oss, smollm3, stablelm, starcoder2, t5, vit,
    vit_hf,
};

/// Every family, in the order their presets are listed.
pub const FAMILIES: [Family; 48] = [
    cnn::RESNET,
    cnn::VGG,
    cnn::MOBILENET_V2,
    mobilenet_v3::FAMILY,
    efficientnet::FAMILY,
    regnet::FAMILY,
    convnext::FAMILY,
    vit::VIT,
    vit_hf::FAMILY,
    vit::MLP,
    bert::FAMILY,
    gpt2::FAMILY,
    gpt_bigcode::FAMILY,
    opt::FAMILY,
    llama::FAMILY,
    mixtral::FAMILY,
    llama4::FAMILY,
    qwen3::FAMILY,
    qwen_moe::FAMILY,
    qwen3_5::FAMILY,
    olmo2::FAMILY,
    olmoe::FAMILY,
    gemma::FAMILY,
    gemma4::FAMILY,
    gpt_neox::FAMILY,
    phi::FAMILY,
    phi3::FAMILY,
    granite::FAMILY,
    granite_moe::FAMILY,
    bamba::FAMILY,
    nemotron_h::FAMILY,
    cohere::FAMILY,
    relu2::ARCEE,
    relu2::NEMOTRON,
    hunyuan::FAMILY,
    seed_oss::FAMILY,
    smollm3::FAMILY,
    stablelm::FAMILY,
    starcoder2::FAMILY,
    deepseek::FAMILY,
    ernie::FAMILY,
    exaone4::FAMILY,
    glm4::FAMILY,
    glm4_moe::FAMILY,
    dots1::FAMILY,
    minimax_m2::FAMILY,
    gpt_oss::FAMILY,
    t5::FAMILY,
];

/// Every family's preset list, in [`FAMILIES`]' order: what lists the
/// presets reads this, so a program that never imports a `config.json` (the
/// page's first-edit module) carries no reader.
pub const PRESET_LISTS: [fn() -> Vec<ModelPreset>; FAMILIES.len()] = preset_lists();

// Evaluated while compiling (it initializes a constant): an index out of
// bounds would fail the build, never a running program.
#[allow(clippy::indexing_slicing)]
const fn preset_lists() -> [fn() -> Vec<ModelPreset>; FAMILIES.len()] {
    let mut lists = [FAMILIES[0].presets; FAMILIES.len()];
    let mut i = 0;
    while i < FAMILIES.len() {
        lists[i] = FAMILIES[i].presets;
        i += 1;
    }
    lists
}

/// The reader of a `model_type`, if a family imports it.
pub fn import_of(model_type: &str) -> Option<Import> {
    FAMILIES
        .iter()
        .flat_map(|f| f.imports)
        .find(|i| i.model_type == model_type)
        .copied()
}

/// The `model_type`s that can be imported, comma-separated, in registry order.
pub fn supported_model_types() -> String {
    let types: Vec<&str> = FAMILIES
        .iter()
        .flat_map(|f| f.imports)
        .map(|i| i.model_type)
        .collect();
    types.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_type_is_read_by_one_family() {
        let types: Vec<&str> = FAMILIES
            .iter()
            .flat_map(|f| f.imports)
            .map(|i| i.model_type)
            .collect();
        let mut unique = types.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), types.len(), "{types:?}");
        for t in types {
            assert_eq!(import_of(t).map(|i| i.model_type), Some(t));
        }
        assert!(import_of("rwkv").is_none());
    }

    #[test]
    fn preset_ids_are_unique_across_families() {
        let presets: Vec<ModelPreset> = FAMILIES.iter().flat_map(|f| (f.presets)()).collect();
        let mut ids: Vec<&str> = presets.iter().map(|p| p.id).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }
}
