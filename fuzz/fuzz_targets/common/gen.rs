//! Building model specs and training configurations from fuzzer bytes.
//!
//! Every number is drawn from a mix: mostly small realistic values (so that
//! most inputs reach the simulation), sometimes the edges of the accepted
//! ranges, sometimes anything a `u64` or `f64` can hold (so that validation
//! and saturation are exercised too).

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use vramfit_core::config::{LoraBase, Mode, WeightFormat};
use vramfit_core::models::{
    Arch, ConvNextSpec, EfficientNetSpec, Head, MlpActivation, MlpLayer, MlpSpec, MobileNetV2Spec,
    MobileNetV3Size, MobileNetV3Spec, RegNetSpec, ResNetSpec, T5Activation, T5Spec,
    TransformerSpec, VggSpec, VitImplementation, VitSpec,
};
use vramfit_core::parallel::{Offload, Parallel, Strategy};
use vramfit_core::{
    Attention, CheckpointMode, Checkpointing, ModelSpec, Optimizer, Precision, TrainConfig,
};

/// Edges worth hitting: zero, one, the validation limits and overflow bounds.
const EDGES: [u64; 12] = [
    0,
    1,
    2,
    3,
    1024,
    1025,
    1 << 16,
    1 << 24,
    (1 << 24) + 1,
    1 << 32,
    (1 << 32) + 1,
    u64::MAX,
];

/// A dimension: usually `1..=small`, sometimes an edge, sometimes any `u64`.
pub fn dim(u: &mut Unstructured, small: u64) -> Result<u64> {
    // Zero bytes (and exhausted input) pick the small, valid branch.
    Ok(match u.int_in_range(0u8..=15)? {
        15 => *u.choose(&EDGES)?,
        14 => u.arbitrary()?,
        13 => u.int_in_range(1..=small.saturating_mul(64))?,
        _ => u.int_in_range(1..=small)?,
    })
}

/// A fraction: usually in (0, 1], sometimes any `f64` (NaN, infinities, negatives).
pub fn fraction(u: &mut Unstructured) -> Result<f64> {
    Ok(match u.int_in_range(0u8..=7)? {
        7 => f64::from_bits(u.arbitrary()?),
        6 => *u.choose(&[
            0.0,
            -0.0,
            1.0,
            1.0 + f64::EPSILON,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -1.0,
        ])?,
        4..=5 => f64::from(u.int_in_range(1u32..=100)?) / 100.0,
        _ => 1.0,
    })
}

/// MobileNetV3, EfficientNet, ConvNeXt or RegNet, with any stage table.
fn later_cnn(u: &mut Unstructured) -> Result<ModelSpec> {
    let list = |u: &mut Unstructured, max: u64| -> Result<Vec<u64>> {
        let n = u.int_in_range(0usize..=5)?;
        (0..n).map(|_| dim(u, max)).collect()
    };
    Ok(match u.int_in_range(0u8..=3)? {
        0 => ModelSpec::MobileNetV3(MobileNetV3Spec {
            size: if u.arbitrary()? {
                MobileNetV3Size::Small
            } else {
                MobileNetV3Size::Large
            },
            classes: dim(u, 1000)?,
        }),
        1 => ModelSpec::EfficientNet(EfficientNetSpec {
            classes: dim(u, 1000)?,
        }),
        2 => ModelSpec::ConvNext(ConvNextSpec {
            depths: [dim(u, 3)?, dim(u, 3)?, dim(u, 3)?, dim(u, 3)?],
            dims: [dim(u, 96)?, dim(u, 96)?, dim(u, 96)?, dim(u, 96)?],
            stochastic_depth: fraction(u)?,
            classes: dim(u, 1000)?,
        }),
        _ => ModelSpec::RegNet(RegNetSpec {
            depths: list(u, 3)?,
            widths: list(u, 128)?,
            group_widths: list(u, 16)?,
            se_ratio: if u.arbitrary()? {
                Some(fraction(u)?)
            } else {
                None
            },
            classes: dim(u, 1000)?,
        }),
    })
}

fn choose<T: Copy>(u: &mut Unstructured, all: &[T]) -> Result<T> {
    u.choose(all).copied()
}

/// Any model spec of any family.
pub fn model(u: &mut Unstructured) -> Result<ModelSpec> {
    Ok(match u.int_in_range(0u8..=7)? {
        0 | 1 => ModelSpec::Transformer(transformer(u)?),
        6 => ModelSpec::T5(t5(u)?),
        7 => later_cnn(u)?,
        2 => ModelSpec::ResNet(ResNetSpec {
            stages: [dim(u, 3)?, dim(u, 3)?, dim(u, 3)?, dim(u, 3)?],
            bottleneck: u.arbitrary()?,
            classes: dim(u, 1000)?,
        }),
        3 => {
            let n = u.int_in_range(0usize..=24)?;
            let layers = (0..n)
                .map(|_| {
                    if u.ratio(1, 4).unwrap_or(false) {
                        Ok(0)
                    } else {
                        dim(u, 512)
                    }
                })
                .collect::<Result<_>>()?;
            ModelSpec::Vgg(VggSpec {
                layers,
                batch_norm: u.arbitrary()?,
                classes: dim(u, 1000)?,
            })
        }
        4 => {
            if u.arbitrary()? {
                ModelSpec::MobileNetV2(MobileNetV2Spec {
                    classes: dim(u, 1000)?,
                })
            } else {
                ModelSpec::Vit(VitSpec {
                    image: dim(u, 64)?,
                    patch: dim(u, 16)?,
                    hidden: dim(u, 128)?,
                    layers: dim(u, 4)?,
                    heads: dim(u, 8)?,
                    mlp: dim(u, 256)?,
                    classes: dim(u, 1000)?,
                    implementation: if u.arbitrary()? {
                        VitImplementation::Torchvision
                    } else {
                        VitImplementation::HuggingFace {
                            qkv_bias: u.arbitrary()?,
                            hidden_dropout: fraction(u)?,
                            attention_dropout: fraction(u)?,
                        }
                    },
                })
            }
        }
        _ => {
            let n = u.int_in_range(0usize..=16)?;
            let acts = [
                MlpActivation::None,
                MlpActivation::Relu,
                MlpActivation::Gelu,
            ];
            let layers = (0..n)
                .map(|_| {
                    Ok(MlpLayer {
                        out: dim(u, 1024)?,
                        activation: choose(u, &acts)?,
                    })
                })
                .collect::<Result<_>>()?;
            ModelSpec::Mlp(MlpSpec {
                input: dim(u, 1024)?,
                layers,
                block_size: u.int_in_range(0usize..=4)?,
                classes: dim(u, 1000)?,
            })
        }
    })
}

/// A T5 encoder-decoder.
pub fn t5(u: &mut Unstructured) -> Result<T5Spec> {
    let act = [
        T5Activation::Relu,
        T5Activation::Gelu,
        T5Activation::GeluNew,
        T5Activation::Silu,
    ];
    Ok(T5Spec {
        vocab: dim(u, 1000)?,
        d_model: dim(u, 128)?,
        d_kv: dim(u, 32)?,
        d_ff: dim(u, 512)?,
        encoder_layers: dim(u, 3)?,
        decoder_layers: dim(u, 3)?,
        heads: dim(u, 8)?,
        buckets: dim(u, 32)?,
        act: choose(u, &act)?,
        gated: u.arbitrary()?,
        dropout: fraction(u)?,
        tie_embeddings: u.arbitrary()?,
    })
}

/// A BERT, GPT-2 or Llama-style transformer.
pub fn transformer(u: &mut Unstructured) -> Result<TransformerSpec> {
    let heads = dim(u, 8)?;
    let head = match u.int_in_range(0u8..=2)? {
        0 => Head::CausalLm,
        1 => Head::Classification {
            labels: dim(u, 10)?,
        },
        _ => Head::Bare,
    };
    Ok(TransformerSpec {
        arch: choose(u, &[Arch::Bert, Arch::Gpt2, Arch::Llama])?,
        vocab: dim(u, 1000)?,
        hidden: dim(u, 128)?,
        layers: dim(u, 4)?,
        heads,
        kv_heads: if u.arbitrary()? { heads } else { dim(u, 8)? },
        head_dim: dim(u, 32)?,
        intermediate: dim(u, 512)?,
        max_positions: if u.arbitrary()? { 0 } else { dim(u, 2048)? },
        type_vocab: dim(u, 2)?.saturating_sub(1),
        tie_embeddings: u.arbitrary()?,
        qkv_bias: u.arbitrary()?,
        mlp_bias: u.arbitrary()?,
        hidden_dropout: fraction(u)?,
        attention_dropout: fraction(u)?,
        head,
        fused_gelu: u.arbitrary()?,
        block: vramfit_core::models::BlockOptions {
            qk_norm: choose(
                u,
                &[
                    vramfit_core::models::QkNorm::None,
                    vramfit_core::models::QkNorm::PerHead,
                    vramfit_core::models::QkNorm::Whole,
                    vramfit_core::models::QkNorm::L2AfterRotary,
                ],
            )?,
            norm: choose(
                u,
                &[
                    vramfit_core::models::NormPlacement::Pre,
                    vramfit_core::models::NormPlacement::Post,
                    vramfit_core::models::NormPlacement::Sandwich,
                ],
            )?,
            rms_weight_first: u.arbitrary()?,
            embed_scale: u.arbitrary()?,
            attn_softcap: u.arbitrary()?,
            final_softcap: u.arbitrary()?,
            sliding: if u.arbitrary()? {
                Some(vramfit_core::models::SlidingWindow {
                    window: dim(u, 4096)?,
                    full_every: u.int_in_range(0..=8)?,
                })
            } else {
                None
            },
            norm_kind: choose(
                u,
                &[
                    vramfit_core::models::NormKind::Rms,
                    vramfit_core::models::NormKind::LayerNorm,
                    vramfit_core::models::NormKind::LayerNorm1P,
                    vramfit_core::models::NormKind::Cohere,
                ],
            )?,
            qkv: choose(
                u,
                &[
                    vramfit_core::models::QkvProjection::Separate,
                    vramfit_core::models::QkvProjection::FusedSlices,
                    vramfit_core::models::QkvProjection::FusedChunks,
                ],
            )?,
            rotary: if u.arbitrary()? {
                choose(
                    u,
                    &[
                        vramfit_core::models::Rotary::Whole,
                        vramfit_core::models::Rotary::ComplexFp32,
                        vramfit_core::models::Rotary::CohereFp32,
                    ],
                )?
            } else {
                // Up to a whole head and, now and then, more (refused by validate).
                vramfit_core::models::Rotary::Sliced {
                    dims: u.int_in_range(0u64..=40)?,
                }
            },
            mlp: choose(
                u,
                &[
                    vramfit_core::models::MlpKind::Gated,
                    vramfit_core::models::MlpKind::FusedGated,
                    vramfit_core::models::MlpKind::Plain {
                        bias: true,
                        relu_squared: false,
                        gelu_new: false,
                        relu: false,
                    },
                    vramfit_core::models::MlpKind::Plain {
                        bias: false,
                        relu_squared: true,
                        gelu_new: false,
                        relu: false,
                    },
                    vramfit_core::models::MlpKind::Plain {
                        bias: true,
                        relu_squared: false,
                        gelu_new: true,
                        relu: false,
                    },
                    vramfit_core::models::MlpKind::Plain {
                        bias: true,
                        relu_squared: false,
                        gelu_new: false,
                        relu: true,
                    },
                ],
            )?,
            parallel_residual: u.arbitrary()?,
            sinks: u.arbitrary()?,
            attn_gate: u.arbitrary()?,
            nope_every: dim(u, 4)?.saturating_sub(1),
            chunked: u.arbitrary()?,
            softmax_in_dtype: u.arbitrary()?,
            softmax_fp32: u.arbitrary()?,
            tril_buffer: u.arbitrary()?,
            nope_temperature: u.arbitrary()?,
            roberta: u.arbitrary()?,
            shared_norm: u.arbitrary()?,
            lm_head_bias: u.arbitrary()?,
            undropped_embeddings: u.arbitrary()?,
            scaled_residuals: u.arbitrary()?,
            scaled_logits: u.arbitrary()?,
            position_offset: if u.arbitrary()? { 2 } else { 0 },
            prescaled_query: u.arbitrary()?,
            distilbert: u.arbitrary()?,
            undropped_head: u.arbitrary()?,
        },
        context_limit: if u.arbitrary()? { 0 } else { dim(u, 1 << 17)? },
        // Mixtures of experts and latent attention are drawn by the property
        // tests (crates/vramfit-core/tests/properties.rs), not here.
        moe: None,
        mla: None,
        linear: None,
        gemma4: None,
        encoder: None,
    })
}

/// Any training configuration, valid or not.
pub fn config(u: &mut Unstructured) -> Result<TrainConfig> {
    let checkpointing = match u.int_in_range(0u8..=3)? {
        1 => Checkpointing::Mode(CheckpointMode::Full),
        2 => Checkpointing::Mode(CheckpointMode::Selective),
        3 => Checkpointing::EveryK(u.arbitrary()?),
        _ => Checkpointing::NONE,
    };
    let parallel = if u.arbitrary()? {
        Parallel {
            strategy: choose(u, Strategy::ALL)?,
            gpus_per_node: dim(u, 8)?,
            nodes: dim(u, 2)?,
            offload: choose(
                u,
                &[Offload::None, Offload::Optimizer, Offload::OptimizerParams],
            )?,
            tp: dim(u, 2)?,
            pp: dim(u, 2)?,
            sp: u.arbitrary()?,
            bucket_view: u.arbitrary()?,
            vpp: dim(u, 2)?,
            zero_bucket: if u.arbitrary()? {
                500_000_000
            } else {
                dim(u, 1 << 20)?
            },
            // Drawn last, so the corpus from before it keeps its meaning.
            ep: dim(u, 2)?,
            // After `ep` for the same reason; 0 (as `tp`) when the input runs out.
            etp: if u.arbitrary()? { dim(u, 2)? } else { 0 },
        }
    } else {
        Parallel::default()
    };
    Ok(TrainConfig {
        batch: dim(u, 16)?,
        seq: dim(u, 128)?,
        image: dim(u, 64)?,
        precision: choose(u, Precision::ALL)?,
        optimizer: choose(u, Optimizer::ALL)?,
        checkpointing,
        attention: choose(u, Attention::ALL)?,
        grad_accum: dim(u, 4)?,
        parallel,
        mode: choose(u, Mode::ALL)?,
        lora_rank: dim(u, 16)?,
        weights: choose(u, WeightFormat::ALL)?,
        context: dim(u, 256)?.saturating_sub(1),
        frozen_blocks: dim(u, 4)?.saturating_sub(1),
        keep_attention: fraction(u)?,
        keep_mlp: fraction(u)?,
        keep_conv: fraction(u)?,
        lora_fp32: u.arbitrary()?,
        lora_base: choose(u, LoraBase::ALL)?,
        ..TrainConfig::default()
    })
}
