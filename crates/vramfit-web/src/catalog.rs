//! The choices offered by the form: model and GPU presets from the core,
//! loaded once and grouped for `<optgroup>`s, plus precision and optimizer.

use crate::labels;
use crate::present;
use std::rc::Rc;
use vramfit_core::{GpuPreset, ModelPreset, Optimizer, Precision, gpu_presets, model_presets};

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

/// Every preset and choice list the page offers.
#[derive(Clone, Debug, PartialEq)]
pub struct Catalog {
    /// Model presets, in the core's display order.
    pub models: Vec<ModelPreset>,
    /// GPU presets, in the core's display order.
    pub gpus: Vec<GpuPreset>,
    /// Models grouped by family.
    pub model_groups: Rc<Vec<ChoiceGroup>>,
    /// GPUs grouped by vendor, each labelled with its memory.
    pub gpu_groups: Rc<Vec<ChoiceGroup>>,
    /// Precision modes (one ungrouped list).
    pub precisions: Rc<Vec<ChoiceGroup>>,
    /// Optimizers (one ungrouped list).
    pub optimizers: Rc<Vec<ChoiceGroup>>,
}

impl Catalog {
    /// Loads the presets from the core and builds the choice lists.
    pub fn load() -> Catalog {
        let models = model_presets();
        let gpus = gpu_presets();
        let model_groups = group(&models, |m| m.family.to_string(), |m| Choice { value: m.id.to_string(), label: m.name.to_string() });
        let gpu_groups = group(
            &gpus,
            |g| labels::vendor(g.vendor).to_string(),
            |g| Choice { value: g.id.to_string(), label: format!("{} · {}", g.name, present::capacity(g.memory_bytes)) },
        );
        let precisions =
            ungrouped(Precision::ALL.iter().map(|p| Choice { value: p.id().to_string(), label: labels::precision(*p).to_string() }));
        let optimizers =
            ungrouped(Optimizer::ALL.iter().map(|o| Choice { value: o.id().to_string(), label: labels::optimizer(*o).to_string() }));
        Catalog {
            models,
            gpus,
            model_groups: Rc::new(model_groups),
            gpu_groups: Rc::new(gpu_groups),
            precisions: Rc::new(precisions),
            optimizers: Rc::new(optimizers),
        }
    }

    /// The model preset with this id.
    pub fn model(&self, id: &str) -> Option<&ModelPreset> {
        self.models.iter().find(|m| m.id == id)
    }

    /// The GPU preset with this id.
    pub fn gpu(&self, id: &str) -> Option<&GpuPreset> {
        self.gpus.iter().find(|g| g.id == id)
    }
}

/// Groups items by a key, groups ordered by first appearance, items keeping
/// their order (a vendor listed in two places still gets one group).
fn group<T>(items: &[T], key: impl Fn(&T) -> String, choice: impl Fn(&T) -> Choice) -> Vec<ChoiceGroup> {
    let mut groups: Vec<ChoiceGroup> = Vec::new();
    for item in items {
        let label = key(item);
        match groups.iter_mut().find(|g| g.label == label) {
            Some(g) => g.choices.push(choice(item)),
            None => groups.push(ChoiceGroup { label, choices: vec![choice(item)] }),
        }
    }
    groups
}

fn ungrouped(choices: impl Iterator<Item = Choice>) -> Vec<ChoiceGroup> {
    vec![ChoiceGroup { label: String::new(), choices: choices.collect() }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_appears_once_in_its_group() {
        let c = Catalog::load();
        let models: usize = c.model_groups.iter().map(|g| g.choices.len()).sum();
        let gpus: usize = c.gpu_groups.iter().map(|g| g.choices.len()).sum();
        assert_eq!(models, c.models.len());
        assert_eq!(gpus, c.gpus.len());
        let labels: Vec<&str> = c.gpu_groups.iter().map(|g| g.label.as_str()).collect();
        let mut unique = labels.clone();
        unique.dedup();
        assert_eq!(labels, unique, "a vendor got two groups");
        assert!(c.model_groups.iter().any(|g| g.label == "CNN" && g.choices.iter().any(|m| m.value == "resnet50")));
    }

    #[test]
    fn gpu_labels_carry_their_memory() {
        let c = Catalog::load();
        let label = c.gpu_groups.iter().flat_map(|g| &g.choices).find(|o| o.value == "rtx-4090").map(|o| o.label.clone());
        assert_eq!(label.as_deref(), Some("GeForce RTX 4090 · 24 GiB"));
    }
}
