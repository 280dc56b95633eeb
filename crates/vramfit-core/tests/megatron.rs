//! Tensor and sequence parallelism against the activation formulas of
//! Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
//! Transformer Models" (arXiv:2205.05198), Table 2, for GPT-3 175B
//! (s = 2048, b = 1, h = 12288, a = 96, t = 8, 16-bit activations):
//! per layer, none sbh(10 + 24/t) + 5as²b/t; sequence parallel 34sbh/t +
//! 5as²b/t; selective recompute sbh(10 + 24/t); both 34sbh/t; full recompute 2sbh.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::parallel::Parallel;
use vramfit_core::{
    Attention, Checkpointing, Optimizer, Overheads, Precision, TrainConfig, estimate, model_preset,
};

const S: f64 = 2048.0;
const H: f64 = 12288.0;
const A: f64 = 96.0;
const T: f64 = 8.0;

/// Saved bytes of a middle layer (layer 1 of the 4 on stage 0 of a
/// 24-stage pipeline: 4 layers, which keeps the run small).
fn layer_bytes(sp: bool, ckpt: &str) -> f64 {
    let spec = model_preset("gpt3-175b").unwrap().spec;
    let cfg = TrainConfig {
        batch: 1,
        seq: 2048,
        precision: Precision::Fp16,
        optimizer: Optimizer::Sgd,
        attention: Attention::Eager,
        checkpointing: ckpt.parse::<Checkpointing>().unwrap(),
        parallel: Parallel {
            gpus_per_node: 8,
            nodes: 24,
            tp: 8,
            pp: 24,
            sp,
            ..Parallel::default()
        },
        ..TrainConfig::default()
    };
    let e = estimate(&spec, &cfg, &Overheads::default(), None).unwrap();
    let row = e
        .layers
        .iter()
        .find(|l| l.name == "h.1")
        .expect("layer h.1");
    row.saved_bytes.0 as f64
}

fn close(ours: f64, formula: f64, what: &str) {
    let err = (ours - formula) / formula;
    println!(
        "{what}: ours {:.1} MiB, Korthikanti {:.1} MiB ({:+.3} %)",
        ours / 1048576.0,
        formula / 1048576.0,
        100.0 * err
    );
    // LayerNorm statistics and 512-byte rounding are not in the paper's count.
    assert!(err.abs() < 0.002, "{what}: {err}");
}

#[test]
fn table2_no_recompute() {
    close(
        layer_bytes(false, "none"),
        S * H * (10.0 + 24.0 / T) * 1.0 + 5.0 * A * S * S / T,
        "tensor parallel",
    );
    close(
        layer_bytes(true, "none"),
        34.0 * S * H / T + 5.0 * A * S * S / T,
        "tensor + sequence parallel",
    );
}

#[test]
fn table2_selective_recompute() {
    close(
        layer_bytes(false, "selective"),
        S * H * (10.0 + 24.0 / T),
        "selective",
    );
    close(
        layer_bytes(true, "selective"),
        34.0 * S * H / T,
        "selective + sequence parallel",
    );
}

#[test]
fn table2_full_recompute() {
    close(layer_bytes(false, "full"), 2.0 * S * H, "full recompute");
}

#[test]
fn parameter_count_is_of_the_whole_model_under_tensor_parallelism() {
    // Megatron GPT-3 175B with a 51200 vocabulary and 2048 learned positions: 174.6 B parameters.
    let spec = model_preset("gpt3-175b").unwrap().spec;
    let whole = spec.parameter_count().unwrap();
    let cfg = TrainConfig {
        batch: 1,
        seq: 256,
        precision: Precision::Fp16,
        parallel: Parallel {
            gpus_per_node: 8,
            nodes: 8,
            tp: 8,
            pp: 8,
            ..Parallel::default()
        },
        ..TrainConfig::default()
    };
    let e = estimate(&spec, &cfg, &Overheads::default(), None).unwrap();
    assert_eq!(e.parameter_count, whole);
    assert!((174e9..175e9).contains(&(whole as f64)), "{whole}");
    // One rank holds about 1/64 of the weights: 12 of 96 layers, 1/8 of each.
    let per_rank = e.at_peak.parameters.0 as f64 / 2.0;
    assert!(
        per_rank > whole as f64 / 64.0 * 0.95 && per_rank < whole as f64 / 64.0 * 1.2,
        "{per_rank}"
    );
}

fn llama_cfg(tp: u64, pp: u64, accum: u64) -> TrainConfig {
    TrainConfig {
        batch: 1,
        seq: 1024,
        precision: Precision::Bf16,
        attention: Attention::Flash,
        grad_accum: accum,
        parallel: Parallel {
            gpus_per_node: 8,
            nodes: 1,
            tp,
            pp,
            ..Parallel::default()
        },
        ..TrainConfig::default()
    }
}

fn peak(model: &str, cfg: &TrainConfig) -> u64 {
    let spec = model_preset(model).unwrap().spec;
    estimate(&spec, cfg, &Overheads::default(), None)
        .unwrap()
        .peak_allocated_bytes
        .0
}

#[test]
fn per_gpu_memory_never_grows_with_tensor_parallelism() {
    for model in ["llama-2-7b", "gpt2-medium", "mistral-7b"] {
        let p: Vec<u64> = [1, 2, 4, 8]
            .iter()
            .map(|&tp| peak(model, &llama_cfg(tp, 1, 1)))
            .collect();
        assert!(p.windows(2).all(|w| w[1] <= w[0]), "{model}: {p:?}");
    }
}

#[test]
fn first_pipeline_stage_holds_up_to_pp_micro_batches() {
    let spec = model_preset("llama-2-7b").unwrap().spec;
    let at =
        |accum: u64| estimate(&spec, &llama_cfg(1, 4, accum), &Overheads::default(), None).unwrap();
    let (one, four, eight) = (at(1), at(4), at(8));
    assert!(four.at_peak.activations > one.at_peak.activations);
    // Beyond pp micro-batches the warm-up no longer grows.
    assert_eq!(four.at_peak.activations, eight.at_peak.activations);
    assert_eq!(four.rank.map(|r| (r.stage, r.stages)), Some((0, 4)));
    // A quarter of the layers: about a quarter of the weights.
    let whole = 2 * 6_738_415_616u64;
    assert!(one.at_peak.parameters.0 < whole / 3);
}

#[test]
fn frozen_blocks_have_no_gradients_or_state() {
    let spec = model_preset("gpt2").unwrap().spec;
    let base = TrainConfig {
        batch: 2,
        seq: 256,
        ..TrainConfig::default()
    };
    let full = estimate(&spec, &base, &Overheads::default(), None).unwrap();
    let frozen = estimate(
        &spec,
        &TrainConfig {
            frozen_blocks: 6,
            ..base
        },
        &Overheads::default(),
        None,
    )
    .unwrap();
    assert!(frozen.trainable_parameter_count < full.trainable_parameter_count);
    assert_eq!(frozen.parameter_count, full.parameter_count);
    assert!(frozen.peak_allocated_bytes < full.peak_allocated_bytes);
}

#[test]
fn structured_pruning_shrinks_parameters_and_activations() {
    let spec = model_preset("llama-2-7b").unwrap().spec;
    let base = TrainConfig {
        batch: 1,
        seq: 512,
        precision: Precision::Bf16,
        ..TrainConfig::default()
    };
    let full = estimate(&spec, &base, &Overheads::default(), None).unwrap();
    let half = estimate(
        &spec,
        &TrainConfig {
            keep_attention: 0.5,
            keep_mlp: 0.5,
            ..base
        },
        &Overheads::default(),
        None,
    )
    .unwrap();
    // Attention and MLP weights halve; embeddings and norms stay.
    let ratio = half.parameter_count as f64 / full.parameter_count as f64;
    assert!((0.5..0.6).contains(&ratio), "{ratio}");
    assert!(half.peak_allocated_bytes < full.peak_allocated_bytes);
    let cnn = model_preset("resnet18").unwrap().spec;
    assert!(
        estimate(
            &cnn,
            &TrainConfig {
                keep_mlp: 0.5,
                ..TrainConfig::default()
            },
            &Overheads::default(),
            None
        )
        .is_err()
    );
}

#[test]
fn interleaved_schedule_adds_megatrons_penalty() {
    // Megatron-LM theoretical_memory_usage.py: interleaving scales the first
    // stage's in-flight activations by 1 + (pp - 1) / (pp · vpp).
    let spec = model_preset("llama-2-7b").unwrap().spec;
    let plain = llama_cfg(1, 4, 8);
    let interleaved = TrainConfig {
        parallel: Parallel {
            vpp: 2,
            ..plain.parallel
        },
        ..plain
    };
    let a = estimate(&spec, &plain, &Overheads::default(), None)
        .unwrap()
        .at_peak
        .activations
        .0 as f64;
    let b = estimate(&spec, &interleaved, &Overheads::default(), None)
        .unwrap()
        .at_peak
        .activations
        .0 as f64;
    let one = a / 4.0;
    // 4 micro-batches become 4 × (1 + 3/8) = 5.5.
    assert!(((b - a) / one - 1.5).abs() < 0.05, "{}", (b - a) / one);
}

#[test]
fn cnn_channel_pruning_and_half_precision_adapters() {
    let cnn = model_preset("resnet50").unwrap().spec;
    let base = TrainConfig {
        batch: 16,
        ..TrainConfig::default()
    };
    let full = estimate(&cnn, &base, &Overheads::default(), None).unwrap();
    let half = estimate(
        &cnn,
        &TrainConfig {
            keep_conv: 0.5,
            ..base
        },
        &Overheads::default(),
        None,
    )
    .unwrap();
    assert!(
        half.parameter_count < full.parameter_count
            && half.peak_allocated_bytes < full.peak_allocated_bytes
    );
    // Adapters in bf16 take half the adapter memory of fp32 adapters.
    let llama = model_preset("llama-2-7b").unwrap().spec;
    let lora = TrainConfig {
        mode: vramfit_core::config::Mode::FinetuneLora,
        batch: 1,
        seq: 256,
        precision: Precision::Bf16,
        ..TrainConfig::default()
    };
    let fp32 = estimate(&llama, &lora, &Overheads::default(), None).unwrap();
    let bf16 = estimate(
        &llama,
        &TrainConfig {
            lora_fp32: false,
            ..lora
        },
        &Overheads::default(),
        None,
    )
    .unwrap();
    assert!(bf16.at_peak.optimizer_states.0 * 2 <= fp32.at_peak.optimizer_states.0 + 1_000_000);
}
