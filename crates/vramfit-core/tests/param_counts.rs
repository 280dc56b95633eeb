//! Every preset's parameter count equals what PyTorch reports for the real
//! model, and so does every reference variant's imported `config.json`
//! (`tests/reference/moe/`): `tests/reference/param_counts.csv`, written by
//! `tests/reference/param_counts.py` (torch / torchvision / transformers).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::model_preset;

const CSV: &str = include_str!("../../../tests/reference/param_counts.csv");

#[test]
fn presets_match_pytorch_exactly() {
    let mut checked = 0;
    for line in CSV.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let mut cols = line.splitn(3, ',');
        let id = cols.next().unwrap();
        let expected: u64 = cols.next().unwrap().parse().unwrap();
        let spec = match model_preset(id) {
            Ok(preset) => preset.spec,
            Err(e) => {
                let path = format!(
                    "{}/../../tests/reference/moe/{id}.json",
                    env!("CARGO_MANIFEST_DIR")
                );
                let json = std::fs::read_to_string(&path).unwrap_or_else(|_| {
                    panic!("reference row {id} has no preset ({e}) nor {path}")
                });
                vramfit_core::hf::import(&json).unwrap().spec
            }
        };
        let got = spec.parameter_count().unwrap();
        assert_eq!(got, expected, "{id}: vramfit {got} vs PyTorch {expected}");
        checked += 1;
    }
    assert!(checked >= 24, "only {checked} reference rows");
}
