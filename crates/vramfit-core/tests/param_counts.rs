//! Every preset's parameter count equals what PyTorch reports for the real
//! model: `tests/reference/param_counts.csv`, written by
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
        let preset =
            model_preset(id).unwrap_or_else(|e| panic!("reference row {id} has no preset: {e}"));
        let got = preset.spec.parameter_count().unwrap();
        assert_eq!(got, expected, "{id}: vramfit {got} vs PyTorch {expected}");
        checked += 1;
    }
    assert!(checked >= 24, "only {checked} reference rows");
}
