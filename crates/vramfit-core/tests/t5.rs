//! T5's settings: what parallelism does to it, its inference caches, SDPA
//! against eager attention (the peaks are `memory_reference.rs`'s).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::config::Mode;
use vramfit_core::error::Inapplicable;
use vramfit_core::models::T5Spec;
use vramfit_core::{Attention, Error, ModelSpec, Overheads, TrainConfig, estimate, model_preset};

fn t5_small() -> T5Spec {
    match model_preset("t5-small").map(|p| p.spec) {
        Ok(ModelSpec::T5(t)) => t,
        other => panic!("t5-small is not a T5: {other:?}"),
    }
}

fn cfg(seq: u64) -> TrainConfig {
    TrainConfig {
        batch: 2,
        seq,
        ..TrainConfig::default()
    }
}

#[test]
fn pipeline_parallelism_is_refused_with_its_reason() {
    let mut c = cfg(64);
    c.parallel.pp = 2;
    c.parallel.gpus_per_node = 2;
    let e = ModelSpec::T5(t5_small()).lower(&c);
    assert_eq!(
        e.err(),
        Some(Error::NotApplicable(Inapplicable::PipelineEncoderDecoder {
            pp: 2
        }))
    );
}

#[test]
fn tensor_parallelism_splits_heads_and_needs_them_divisible() {
    let spec = ModelSpec::T5(t5_small());
    let whole = spec.lower(&cfg(64)).map(|g| g.parameter_count());
    let mut c = cfg(64);
    c.parallel.tp = 2;
    c.parallel.gpus_per_node = 2;
    let half = spec.lower(&c).map(|g| g.parameter_count());
    assert!(
        matches!((&whole, &half), (Ok(w), Ok(h)) if h < w && *h > w / 3),
        "{whole:?} {half:?}"
    );
    c.parallel.tp = 3;
    c.parallel.gpus_per_node = 3;
    assert!(matches!(
        spec.lower(&c),
        Err(Error::NotApplicable(Inapplicable::TensorParallel {
            dimension: "num_heads",
            ..
        }))
    ));
}

/// Generation: the decoder's self-attention cache holds the context's
/// tokens, its cross-attention cache the encoder's, in every block.
#[test]
fn inference_caches_self_and_cross_attention_of_every_decoder_block() {
    let t = t5_small();
    let c = TrainConfig {
        mode: Mode::Inference,
        context: 300,
        ..cfg(200)
    };
    let g = ModelSpec::T5(t.clone()).lower(&c);
    let per_token = 2 * t.decoder_layers * t.heads * t.d_kv * 4;
    assert_eq!(
        g.map(|g| g.kv_cache.per_sample),
        Ok(per_token * (300 + 200))
    );
}

/// Eager attention keeps `heads × seq²` scores and probabilities per
/// sample in every block; SDPA does not.
#[test]
fn sdpa_needs_less_than_eager_at_long_sequences() {
    let spec = ModelSpec::T5(t5_small());
    let peak = |attention| {
        let c = TrainConfig {
            attention,
            ..cfg(1024)
        };
        estimate(&spec, &c, &Overheads::default(), None).map(|e| e.peak_allocated_bytes.0)
    };
    let (eager, sdpa) = (peak(Attention::Eager), peak(Attention::Sdpa));
    assert!(
        matches!((&eager, &sdpa), (Ok(e), Ok(s)) if s < e),
        "{eager:?} {sdpa:?}"
    );
}
