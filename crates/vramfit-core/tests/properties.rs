//! Properties every estimate must have, over random configurations of the
//! smaller presets: the breakdown sums to the peak; memory never decreases
//! with batch or sequence length; checkpointing never raises the peak; model
//! states order fp32 ≥ AMP ≥ pure half.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use proptest::prelude::*;
use vramfit_core::{Checkpointing, Optimizer, Overheads, Precision, TrainConfig, estimate, model_preset};

const MODELS: [&str; 6] = ["resnet18", "mobilenet_v2", "mlp-small", "bert-base", "gpt2", "llama-tiny"];

fn cfg_strategy() -> impl Strategy<Value = (usize, TrainConfig)> {
    (
        0..MODELS.len(),
        1u64..24,
        prop::sample::select(vec![32u64, 64, 128, 256]),
        prop::sample::select(vec![96u64, 160, 224]),
        prop::sample::select(Precision::ALL.to_vec()),
        prop::sample::select(Optimizer::ALL.to_vec()),
        1u64..4,
    )
        .prop_map(|(m, batch, seq, image, precision, optimizer, grad_accum)| {
            (m, TrainConfig { batch, seq, image, precision, optimizer, grad_accum, ..TrainConfig::default() })
        })
}

fn peak(model: &str, cfg: &TrainConfig) -> u64 {
    let spec = model_preset(model).unwrap().spec;
    estimate(&spec, cfg, &Overheads::default(), None).unwrap().peak_allocated_bytes.0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn breakdown_sums_to_peak_and_orders_the_three_numbers((m, cfg) in cfg_strategy()) {
        let spec = model_preset(MODELS[m]).unwrap().spec;
        let e = estimate(&spec, &cfg, &Overheads::default(), None).unwrap();
        prop_assert_eq!(e.at_peak.total(), e.peak_allocated_bytes);
        prop_assert!(e.peak_reserved_bytes >= e.peak_allocated_bytes);
        prop_assert!(e.device_used_bytes > e.peak_reserved_bytes);
        let max_timeline = e.timeline.iter().map(|p| p.allocated_bytes).max().unwrap();
        prop_assert_eq!(max_timeline, e.peak_allocated_bytes);
    }

    #[test]
    fn memory_is_monotonic_in_batch_and_sequence((m, cfg) in cfg_strategy()) {
        let base = peak(MODELS[m], &cfg);
        let more_batch = peak(MODELS[m], &TrainConfig { batch: cfg.batch + 1, ..cfg });
        prop_assert!(more_batch >= base, "batch {} -> {}: {} -> {}", cfg.batch, cfg.batch + 1, base, more_batch);
        let more_seq = peak(MODELS[m], &TrainConfig { seq: cfg.seq * 2, ..cfg });
        prop_assert!(more_seq >= base);
    }

    #[test]
    fn checkpointing_never_raises_the_peak((m, cfg) in cfg_strategy()) {
        let none = peak(MODELS[m], &cfg);
        for mode in ["full", "selective", "every-2"] {
            let c = TrainConfig { checkpointing: mode.parse::<Checkpointing>().unwrap(), ..cfg };
            let with = peak(MODELS[m], &c);
            prop_assert!(with <= none, "{} {mode}: {with} > {none}", MODELS[m]);
        }
    }
}

#[test]
fn model_states_order_fp32_amp_half() {
    for id in MODELS {
        let spec = model_preset(id).unwrap().spec;
        let states = |p: Precision| {
            let cfg = TrainConfig { precision: p, batch: 1, seq: 64, ..TrainConfig::default() };
            let g = spec.lower(&cfg).unwrap();
            let (w, gr, o) = vramfit_core::estimate::model_states(&g, &cfg);
            (w + gr + o).0
        };
        let (fp32, amp, half) = (states(Precision::Fp32), states(Precision::AmpBf16), states(Precision::Bf16));
        assert!(fp32 >= amp && amp > half, "{id}: {fp32} {amp} {half}");
    }
}

#[test]
fn adam_first_step_peaks_with_one_param_sized_temporary() {
    // The MLP with a tiny batch: the peak is the optimizer step, holding
    // params + grads + 2 states + one params-sized temporary (foreach sqrt).
    let spec = model_preset("mlp-small").unwrap().spec;
    let cfg = TrainConfig { batch: 1, optimizer: Optimizer::Adam, ..TrainConfig::default() };
    let e = estimate(&spec, &cfg, &Overheads::default(), None).unwrap();
    assert_eq!(e.peak_phase, vramfit_core::Phase::Optimizer);
    let p = e.at_peak.parameters.0;
    assert_eq!(e.at_peak.gradients.0, p);
    assert_eq!(e.at_peak.optimizer_states.0, 2 * p);
    assert_eq!(e.at_peak.temporary.0, p);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The guided search returns exactly the largest fitting batch: it fits and one more does not.
    #[test]
    fn max_batch_is_exact((m, cfg) in cfg_strategy(), gib in 2u64..40) {
        let spec = model_preset(MODELS[m]).unwrap().spec;
        let o = Overheads::default();
        let cap = vramfit_core::Bytes(gib << 30);
        let best = vramfit_core::max_batch_for(&spec, &cfg, &o, cap).unwrap();
        let used = |b: u64| estimate(&spec, &TrainConfig { batch: b, ..cfg }, &o, None).unwrap().device_used_bytes;
        if best > 0 {
            prop_assert!(used(best) <= cap, "{} b{best} does not fit", MODELS[m]);
        }
        prop_assert!(used(best + 1) > cap, "{} b{} fits too", MODELS[m], best + 1);
    }
}
