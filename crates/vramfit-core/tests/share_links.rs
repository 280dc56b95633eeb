//! Published links keep their meaning. Each entry is a link as an earlier
//! vramfit wrote it (or as the README documents it) and the state it must
//! decode to; never edit an entry, only add new ones when the format
//! changes. Estimates themselves may improve between versions; what a link
//! *says* (model, GPU, every setting) may not change.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::config::{LoraBase, Mode};
use vramfit_core::parallel::{Offload, Strategy};
use vramfit_core::share::{IMPORTED_MODEL, ShareState, decode};
use vramfit_core::{Attention, Checkpointing, Optimizer, Precision, hf};

/// Decodes a published link, which must need no warning.
fn published(link: &str) -> ShareState {
    let d = decode(link);
    assert!(d.warnings.is_empty(), "{link}: {:?}", d.warnings);
    d.state
}

#[test]
fn version_1_the_readme_example() {
    let s = published(
        "https://vramfit.github.io/vramfit/?v=1&m=bert-large&b=8&s=512&p=amp-bf16&o=adamw&c=full&g=rtx-3060-12gb",
    );
    assert_eq!(
        (s.model.as_str(), s.gpu.as_str()),
        ("bert-large", "rtx-3060-12gb")
    );
    assert_eq!(
        (
            s.train.batch,
            s.train.seq,
            s.train.precision,
            s.train.optimizer
        ),
        (8, 512, Precision::AmpBf16, Optimizer::AdamW)
    );
    assert_eq!(
        s.train.checkpointing,
        "full".parse::<Checkpointing>().unwrap()
    );
}

#[test]
fn version_1_defaults_only() {
    // Version 1's first screen: GPT-2, batch 8 × 512 tokens, AMP bf16,
    // AdamW, eager attention, RTX 4090. (The bare addresses this entry also
    // held are the page's first screen, whichever the version: see
    // `a_bare_address_is_the_current_first_screen`.)
    let s = published("https://vramfit.github.io/vramfit/?v=1");
    assert_eq!(s, ShareState::of_version(1));
    assert_eq!(s.train.precision, Precision::AmpBf16);
    assert_eq!(s.train.attention, Attention::Eager);
}

#[test]
fn a_bare_address_is_the_current_first_screen() {
    for link in ["https://vramfit.github.io/vramfit/", "?", ""] {
        assert_eq!(published(link), ShareState::default(), "{link}");
    }
    assert_eq!(ShareState::default().train.attention, Attention::Sdpa);
}

#[test]
fn version_1_lora_keeps_its_fp32_base_and_eager_attention() {
    // A version-1 LoRA link on an RTX 4090, as the page wrote it before the
    // base followed the compute type: it must still say fp32 base, eager.
    let s = published("?v=1&m=llama-2-7b&b=1&s=1024&mo=finetune-lora");
    assert_eq!(s.train.mode, Mode::FinetuneLora);
    assert_eq!(s.train.lora_base, LoraBase::Fp32);
    assert_eq!(s.train.attention, Attention::Eager);
}

#[test]
fn version_2_lora_on_a_4090_the_defaults() {
    let s = published("?v=2&m=llama-2-7b&b=1&s=1024&mo=finetune-lora");
    assert_eq!(
        (s.train.lora_base, s.train.attention, s.train.precision),
        (LoraBase::Compute, Attention::Sdpa, Precision::AmpBf16)
    );
}

#[test]
fn version_1_a_cnn_with_every_k_checkpointing_and_accumulation() {
    let s = published("?v=1&m=resnet50&g=a100-80gb&b=64&i=256&a=4&p=fp32&o=sgd-momentum&c=every-2");
    assert_eq!(
        (
            s.model.as_str(),
            s.gpu.as_str(),
            s.train.batch,
            s.train.image,
            s.train.grad_accum
        ),
        ("resnet50", "a100-80gb", 64, 256, 4)
    );
    assert_eq!(
        (s.train.precision, s.train.optimizer, s.train.checkpointing),
        (
            Precision::Fp32,
            Optimizer::SgdMomentum,
            Checkpointing::EveryK(2)
        )
    );
}

#[test]
fn version_1_llama_zero3_with_offload_and_lora() {
    let s = published(
        "?v=1&m=llama-2-7b&g=a100-40gb&b=2&s=2048&o=adamw-8bit&c=full&at=flash&mo=finetune-lora&r=64&st=zero3&gn=8&n=2&of=optimizer%2Bparams&lf=0",
    );
    assert_eq!(
        (s.train.batch, s.train.seq, s.train.attention),
        (2, 2048, Attention::Flash)
    );
    assert_eq!(
        (s.train.mode, s.train.lora_rank, s.train.lora_fp32),
        (Mode::FinetuneLora, 64, false)
    );
    let p = s.train.parallel;
    assert_eq!(
        (p.strategy, p.gpus_per_node, p.nodes, p.offload),
        (Strategy::Zero3, 8, 2, Offload::OptimizerParams)
    );
}

#[test]
fn version_1_megatron_and_pruning() {
    let s = published(
        "?v=1&m=gpt3-175b&g=h100-sxm&b=1&s=2048&tp=8&pp=8&vpp=2&sp=1&gn=8&n=16&st=megatron-distopt&ka=0.75&km=0.5&fr=4&zb=200000000",
    );
    let p = s.train.parallel;
    assert_eq!(
        (p.tp, p.pp, p.vpp, p.sp, p.strategy, p.zero_bucket),
        (8, 8, 2, true, Strategy::MegatronDistOpt, 200_000_000)
    );
    assert_eq!(
        (
            s.train.keep_attention,
            s.train.keep_mlp,
            s.train.frozen_blocks
        ),
        (0.75, 0.5, 4)
    );
}

#[test]
fn version_1_inference_with_a_long_context() {
    let s =
        published("?v=1&m=mistral-7b&g=l4&b=4&s=1&mo=inference&w=int4&ctx=32768&bv=1&st=ddp&gn=2");
    assert_eq!(
        (s.train.mode, s.train.context, s.train.parallel.bucket_view),
        (Mode::Inference, 32768, true)
    );
}

#[test]
fn version_1_a_packed_config_json() {
    // Written by `vramfit estimate --model Llama-2-7b-hf/config.json --batch 1 --url`.
    let s = published(
        "?v=1&b=1&j=1ewkiY29tbXVuaXR5L2xsYW1hLTItN2ItaGYiLAI0MDk2LAMxMTAwOCwBGywEMzIsBTMyLAczMjAwMH0",
    );
    assert_eq!(s.model, IMPORTED_MODEL);
    let m = hf::import(s.config_json.as_deref().unwrap()).unwrap();
    assert_eq!(
        (m.name.as_str(), m.spec.parameter_count().unwrap()),
        ("community/llama-2-7b-hf", 6_738_415_616)
    );
}

#[test]
fn version_1_hand_written_plain_json() {
    let s = published(
        "?b=2&j=%7B%22model_type%22%3A%22gpt2%22%2C%22n_embd%22%3A768%2C%22n_layer%22%3A12%2C%22n_head%22%3A12%2C%22vocab_size%22%3A50257%7D",
    );
    assert_eq!(
        hf::import(s.config_json.as_deref().unwrap())
            .unwrap()
            .spec
            .parameter_count()
            .unwrap(),
        124_439_808
    );
}
