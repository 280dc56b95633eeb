//! The choices offered by the form: model and GPU presets from the core,
//! loaded once, and the option lists built from them in the chosen language
//! and units (grouped for `<optgroup>`s).

use crate::i18n::{Key, Lang, t};
use crate::inputs::{CheckpointChoice, IMPORTED_MODEL};
use crate::labels;
use crate::prefs::Units;
use crate::present;
use vramfit_core::{
    Attention, GpuPreset, ModelPreset, Optimizer, Precision, gpu_presets, model_presets,
};

/// One `<option>`: the value sent back on change and the text shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The stable id (preset id or enum id).
    pub value: String,
    /// What the user reads.
    pub label: String,
}

/// One `<optgroup>`. A group with an empty label renders as plain options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChoiceGroup {
    /// The group heading (model family, GPU vendor), or empty.
    pub label: String,
    /// The options, in preset order.
    pub choices: Vec<Choice>,
}

/// The groups narrowed to the choices matching `query`: every
/// whitespace-separated term must appear (ignoring case) in the choice's
/// label, id or group heading (ASCII letters compared without case: model
/// and GPU names are ASCII, and Unicode case tables would add kilobytes to
/// the page). The `keep` value always stays (so the list
/// still shows what is selected); empty groups are dropped.
pub fn filter_groups(groups: &[ChoiceGroup], query: &str, keep: &str) -> Vec<ChoiceGroup> {
    let terms = search_terms(query);
    if terms.is_empty() {
        return groups.to_vec();
    }
    groups
        .iter()
        .filter_map(|g| {
            let choices: Vec<Choice> = g
                .choices
                .iter()
                .filter(|c| c.value == keep || matches(c, &g.label, &terms))
                .cloned()
                .collect();
            (!choices.is_empty()).then(|| ChoiceGroup {
                label: g.label.clone(),
                choices,
            })
        })
        .collect()
}

/// Whether a search for `query` finds nothing: not even the selected
/// choice, which [`filter_groups`] keeps whether it matches or not (a search
/// that finds only the selected model found it).
pub fn finds_nothing(groups: &[ChoiceGroup], query: &str) -> bool {
    let terms = search_terms(query);
    !terms.is_empty()
        && !groups
            .iter()
            .any(|g| g.choices.iter().any(|c| matches(c, &g.label, &terms)))
}

/// The query's terms, lowercased (ASCII, see [`filter_groups`]).
fn search_terms(query: &str) -> Vec<String> {
    query
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Whether every term appears in the choice's label, id or group heading.
fn matches(c: &Choice, heading: &str, terms: &[String]) -> bool {
    let text = format!(
        "{} {} {}",
        c.label.to_ascii_lowercase(),
        c.value.to_ascii_lowercase(),
        heading.to_ascii_lowercase()
    );
    terms.iter().all(|t| text.contains(t.as_str()))
}

/// Every preset the page offers.
#[derive(Clone, Debug, PartialEq)]
pub struct Catalog {
    /// Model presets, in the core's display order.
    pub models: Vec<ModelPreset>,
    /// GPU presets, in the core's display order.
    pub gpus: Vec<GpuPreset>,
}

impl Catalog {
    /// Loads the presets from the core.
    pub fn load() -> Catalog {
        Catalog {
            models: model_presets(),
            gpus: gpu_presets(),
        }
    }

    /// The model preset with this id.
    pub fn model(&self, id: &str) -> Option<&ModelPreset> {
        self.models.iter().find(|m| m.id == id)
    }

    /// The GPU preset with this id.
    pub fn gpu(&self, id: &str) -> Option<GpuPreset> {
        match self.gpus.iter().find(|g| g.id == id) {
            Some(g) => Some(g.clone()),
            // A GPU given by its memory (`custom-<GiB>`).
            None => vramfit_core::gpu_preset(id)
                .ok()
                .filter(GpuPreset::is_custom),
        }
    }

    /// Models grouped by family, then the imported model (if any) in its own group.
    pub fn model_groups(&self, imported: Option<&str>, lang: Lang) -> Vec<ChoiceGroup> {
        let mut groups = group(
            &self.models,
            |m| labels::family(m.family, lang).to_string(),
            |m| Choice {
                value: m.id.to_string(),
                label: m.name.to_string(),
            },
        );
        if let Some(name) = imported {
            let choice = Choice {
                value: IMPORTED_MODEL.to_string(),
                label: name.to_string(),
            };
            groups.push(ChoiceGroup {
                label: t(lang, Key::ImportedGroup).to_string(),
                choices: vec![choice],
            });
        }
        groups
    }

    /// GPUs grouped by vendor, each labelled with its memory in `units`,
    /// then the choice of a GPU given by its memory.
    pub fn gpu_groups(&self, units: Units, lang: Lang) -> Vec<ChoiceGroup> {
        let mut groups = group(
            &self.gpus,
            |g| labels::vendor(g.vendor()).to_string(),
            |g| Choice {
                value: g.id.to_string(),
                label: format!("{} · {}", g.name, present::capacity(g.memory_bytes, units)),
            },
        );
        groups.push(ChoiceGroup {
            label: t(lang, Key::CustomGpuGroup).to_string(),
            choices: vec![Choice {
                value: crate::inputs::CUSTOM_GPU.to_string(),
                label: t(lang, Key::CustomGpuChoice).to_string(),
            }],
        });
        groups
    }
}

/// Precision modes.
pub fn precisions(lang: Lang) -> Vec<ChoiceGroup> {
    ungrouped(
        Precision::ALL
            .iter()
            .map(|p| (p.id(), labels::precision(*p, lang))),
    )
}

/// Optimizers.
pub fn optimizers(lang: Lang) -> Vec<ChoiceGroup> {
    ungrouped(
        Optimizer::ALL
            .iter()
            .map(|o| (o.id(), labels::optimizer(*o, lang))),
    )
}

/// `torch.optim`'s implementations of a step, in words.
pub fn optimizer_impls(lang: Lang) -> Vec<ChoiceGroup> {
    ungrouped(
        vramfit_core::OptimizerImpl::ALL
            .iter()
            .map(|i| (i.id(), labels::optimizer_impl(*i, lang))),
    )
}

/// The training loop's choices, in words: `zero_grad`, the outputs kept,
/// the autocast region, the PyTorch release, transformers' training cache
/// and what its SDPA attention is given (a padding mask or none).
pub fn loop_choices(lang: Lang) -> [Vec<ChoiceGroup>; 6] {
    use vramfit_core::config::{
        AttentionMask, AutocastRegion, LoopOutputs, TorchRelease, TrainingCache, ZeroGrad,
    };
    [
        ungrouped(
            ZeroGrad::ALL
                .iter()
                .map(|z| (z.id(), labels::zero_grad(*z, lang))),
        ),
        ungrouped(
            LoopOutputs::ALL
                .iter()
                .map(|o| (o.id(), labels::loop_outputs(*o, lang))),
        ),
        ungrouped(
            AutocastRegion::ALL
                .iter()
                .map(|r| (r.id(), labels::autocast_region(*r, lang))),
        ),
        ungrouped(
            TorchRelease::ALL
                .iter()
                .map(|r| (r.id(), labels::pytorch(*r, lang))),
        ),
        ungrouped(
            TrainingCache::ALL
                .iter()
                .map(|c| (c.id(), labels::training_cache(*c, lang))),
        ),
        ungrouped(
            AttentionMask::ALL
                .iter()
                .map(|m| (m.id(), labels::attention_mask(*m, lang))),
        ),
    ]
}

/// Data-parallel strategies, in words (DeepSpeed and FSDP names kept):
/// every one for training; for inference those that shard the weights
/// (ZeRO-3 as ZeRO-Inference runs `generate`, FSDP's full and hybrid
/// sharding) besides one GPU, as the others keep a whole copy on each GPU,
/// which is one GPU's memory. `current` is added when it is not offered
/// (a setting made in training), so the list shows what is in effect.
pub fn strategies(
    lang: Lang,
    inference: bool,
    current: vramfit_core::parallel::Strategy,
) -> Vec<ChoiceGroup> {
    use vramfit_core::parallel::Strategy;
    let offered = |s: &Strategy| {
        !inference
            || matches!(
                s,
                Strategy::Single | Strategy::Zero3 | Strategy::FsdpFull | Strategy::FsdpHybrid
            )
            || *s == current
    };
    ungrouped(
        Strategy::ALL
            .iter()
            .filter(|s| offered(s))
            .map(|s| (s.id(), labels::strategy(*s, lang))),
    )
}

/// What can be offloaded to host memory: in inference there is no
/// optimizer, so the weights alone (ZeRO-Inference's parameter offload),
/// with `current` kept as [`strategies`] keeps it.
pub fn offloads(
    lang: Lang,
    inference: bool,
    current: vramfit_core::parallel::Offload,
) -> Vec<ChoiceGroup> {
    use vramfit_core::parallel::Offload;
    let choices = if inference {
        vec![
            (Offload::None, Key::OffloadNone),
            (Offload::OptimizerParams, Key::OffloadParams),
        ]
    } else {
        vec![
            (Offload::None, Key::OffloadNone),
            (Offload::Optimizer, Key::OffloadOptimizer),
            (Offload::OptimizerParams, Key::OffloadOptimizerParams),
        ]
    };
    // Only the optimizer's offload is ever left out (in inference).
    let kept = (inference && current == Offload::Optimizer)
        .then_some((Offload::Optimizer, Key::OffloadOptimizer));
    ungrouped(
        choices
            .into_iter()
            .chain(kept)
            .map(|(o, k)| (o.id(), t(lang, k))),
    )
}

/// The serving engines.
pub fn engines(lang: Lang) -> Vec<ChoiceGroup> {
    use vramfit_core::engines::Engine;
    ungrouped(
        Engine::ALL
            .iter()
            .map(|e| (e.id(), labels::engine(*e, lang))),
    )
}

/// The weights `engine` runs, by `--weights` id, with `current` added when
/// a link chose one it does not offer (the estimate says why it is refused).
pub fn serve_weights(
    engine: vramfit_core::engines::Engine,
    current: &str,
    lang: Lang,
) -> Vec<ChoiceGroup> {
    let mut ids = crate::serving::weight_ids(engine);
    if !ids.contains(&current) {
        ids.push(current);
    }
    let labels: Vec<(String, String)> = ids
        .into_iter()
        .map(|id| (id.to_string(), labels::serve_weights(engine, id, lang)))
        .collect();
    ungrouped(labels.iter().map(|(v, l)| (v.as_str(), l.as_str())))
}

/// The KV cache types `engine` offers, with `current` added when a link
/// chose one it does not offer.
pub fn kv_dtypes(
    engine: vramfit_core::engines::Engine,
    current: vramfit_core::engines::KvDtype,
) -> Vec<ChoiceGroup> {
    let mut kinds = crate::serving::kv_choices(engine).to_vec();
    if !kinds.contains(&current) {
        kinds.push(current);
    }
    ungrouped(kinds.iter().map(|k| (k.id(), k.id())))
}

/// Checkpointing choices.
pub fn checkpointing(lang: Lang) -> Vec<ChoiceGroup> {
    ungrouped(
        CheckpointChoice::ALL
            .iter()
            .map(|c| (c.id(), labels::checkpointing(*c, lang))),
    )
}

/// Attention implementations.
pub fn attentions(lang: Lang) -> Vec<ChoiceGroup> {
    ungrouped(
        Attention::ALL
            .iter()
            .map(|a| (a.id(), labels::attention(*a, lang))),
    )
}

/// Groups items by a key, groups ordered by first appearance, items keeping
/// their order (a vendor listed in two places still gets one group).
fn group<T>(
    items: &[T],
    key: impl Fn(&T) -> String,
    choice: impl Fn(&T) -> Choice,
) -> Vec<ChoiceGroup> {
    let mut groups: Vec<ChoiceGroup> = Vec::new();
    for item in items {
        let label = key(item);
        match groups.iter_mut().find(|g| g.label == label) {
            Some(g) => g.choices.push(choice(item)),
            None => groups.push(ChoiceGroup {
                label,
                choices: vec![choice(item)],
            }),
        }
    }
    groups
}

fn ungrouped<'a>(choices: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<ChoiceGroup> {
    let choices = choices
        .map(|(value, label)| Choice {
            value: value.to_string(),
            label: label.to_string(),
        })
        .collect();
    vec![ChoiceGroup {
        label: String::new(),
        choices,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_appears_once_in_its_group() {
        let c = Catalog::load();
        let model_groups = c.model_groups(None, Lang::En);
        let gpu_groups = c.gpu_groups(Units::Binary, Lang::En);
        let models: usize = model_groups.iter().map(|g| g.choices.len()).sum();
        let gpus: usize = gpu_groups.iter().map(|g| g.choices.len()).sum();
        assert_eq!(models, c.models.len());
        // Every preset, plus the choice of a GPU given by its memory, last.
        assert_eq!(gpus, c.gpus.len() + 1);
        assert_eq!(
            gpu_groups
                .last()
                .and_then(|g| g.choices.first())
                .map(|o| o.value.as_str()),
            Some(crate::inputs::CUSTOM_GPU)
        );
        let labels: Vec<&str> = gpu_groups.iter().map(|g| g.label.as_str()).collect();
        let mut unique = labels.clone();
        unique.dedup();
        assert_eq!(labels, unique, "a vendor got two groups");
        assert!(
            model_groups
                .iter()
                .any(|g| g.label == "CNN" && g.choices.iter().any(|m| m.value == "resnet50"))
        );
    }

    #[test]
    fn gpu_labels_carry_their_memory_in_the_chosen_units() {
        let c = Catalog::load();
        let label = |units| {
            c.gpu_groups(units, Lang::En)
                .iter()
                .flat_map(|g| g.choices.clone())
                .find(|o| o.value == "rtx-4090")
                .map(|o| o.label)
        };
        assert_eq!(
            label(Units::Binary).as_deref(),
            Some("GeForce RTX 4090 · 24 GiB")
        );
        assert_eq!(
            label(Units::Decimal).as_deref(),
            Some("GeForce RTX 4090 · 25.8 GB")
        );
    }

    #[test]
    fn an_imported_model_gets_its_own_group() {
        let c = Catalog::load();
        let groups = c.model_groups(Some("my-llama"), Lang::Zh);
        let last = groups.last().cloned();
        assert_eq!(last.as_ref().map(|g| g.label.as_str()), Some("已导入"));
        assert_eq!(
            last.and_then(|g| g.choices.first().cloned())
                .map(|c| c.value),
            Some(IMPORTED_MODEL.to_string())
        );
        assert!(groups.iter().any(|g| g.label == "视觉 Transformer"));
    }

    #[test]
    fn filtering_matches_every_term_in_label_id_or_family_and_keeps_the_selection() {
        let catalog = Catalog::load();
        let groups = catalog.model_groups(None, Lang::En);
        let found = filter_groups(&groups, "llama 70", "gpt2");
        let ids: Vec<&str> = found
            .iter()
            .flat_map(|g| g.choices.iter().map(|c| c.value.as_str()))
            .collect();
        assert!(
            ids.contains(&"llama-2-70b") && ids.contains(&"llama-3-70b"),
            "{ids:?}"
        );
        assert!(ids.contains(&"gpt2"), "the selected model stays listed");
        assert!(
            !ids.contains(&"llama-2-7b") && !ids.contains(&"resnet50"),
            "{ids:?}"
        );
        // By family heading, case-insensitively.
        let cnn = filter_groups(&groups, "RESNET", "");
        assert!(
            cnn.iter()
                .flat_map(|g| &g.choices)
                .any(|c| c.value == "resnet50")
        );
        assert_eq!(filter_groups(&groups, "  ", "").len(), groups.len());
        assert!(filter_groups(&groups, "no-such-model", "").is_empty());
        // A search that finds only the selected model found something.
        assert!(!finds_nothing(&groups, "gpt2"));
        assert_eq!(filter_groups(&groups, "gpt2 124", "gpt2").len(), 1);
        assert!(!finds_nothing(&groups, "gpt2 124"));
        assert!(finds_nothing(&groups, "no-such-model"));
        assert!(!finds_nothing(&groups, " "));
        let gpus = filter_groups(&catalog.gpu_groups(Units::Binary, Lang::En), "4090", "");
        assert!(
            gpus.iter()
                .flat_map(|g| &g.choices)
                .any(|c| c.value == "rtx-4090")
        );
    }
}
