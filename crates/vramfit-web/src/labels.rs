//! Display names for the core's choice enums, phases and techniques. The ids
//! stay the core's (they are what URLs and the CLI use); only the text shown
//! differs, and it comes from the translation table.

use crate::i18n::{Key, Lang, t};
use crate::inputs::CheckpointChoice;
use vramfit_core::config::Mode;
use vramfit_core::engines::Engine;
use vramfit_core::explore::Technique;
use vramfit_core::gpus::Vendor;
use vramfit_core::models::Group;
use vramfit_core::parallel::Strategy;
use vramfit_core::{Attention, Optimizer, Phase, Precision};

/// How a precision mode is shown. "Mixed" is `torch.autocast`: fp32
/// weights, matmuls in half precision; "pure" keeps everything in half.
pub fn precision(p: Precision, lang: Lang) -> &'static str {
    t(
        lang,
        match p {
            Precision::Fp32 => Key::Fp32,
            Precision::Fp16 => Key::Fp16Pure,
            Precision::Bf16 => Key::Bf16Pure,
            Precision::AmpFp16 => Key::AmpFp16,
            Precision::AmpBf16 => Key::AmpBf16,
        },
    )
}

/// How an optimizer is shown (8-bit AdamW is bitsandbytes').
pub fn optimizer(o: Optimizer, lang: Lang) -> &'static str {
    t(
        lang,
        match o {
            Optimizer::Sgd => Key::Sgd,
            Optimizer::SgdMomentum => Key::SgdMomentum,
            Optimizer::Adam => Key::Adam,
            Optimizer::AdamW => Key::AdamW,
            Optimizer::AdamW8bit => Key::AdamW8bit,
            Optimizer::Adafactor => Key::Adafactor,
            Optimizer::Lion => Key::Lion,
        },
    )
}

/// How an optimizer implementation is shown.
pub fn optimizer_impl(i: vramfit_core::OptimizerImpl, lang: Lang) -> &'static str {
    use vramfit_core::OptimizerImpl;
    t(
        lang,
        match i {
            OptimizerImpl::Foreach => Key::ImplForeach,
            OptimizerImpl::Fused => Key::ImplFused,
            OptimizerImpl::Loop => Key::ImplLoop,
        },
    )
}

/// How what `zero_grad` leaves of the gradients is shown.
pub fn zero_grad(z: vramfit_core::config::ZeroGrad, lang: Lang) -> &'static str {
    use vramfit_core::config::ZeroGrad;
    t(
        lang,
        match z {
            ZeroGrad::SetToNone => Key::ZeroGradNone,
            ZeroGrad::Zeros => Key::ZeroGradZeros,
        },
    )
}

/// How what the loop keeps of the outputs is shown.
pub fn loop_outputs(o: vramfit_core::config::LoopOutputs, lang: Lang) -> &'static str {
    use vramfit_core::config::LoopOutputs;
    t(
        lang,
        match o {
            LoopOutputs::Dropped => Key::LoopOutputsDropped,
            LoopOutputs::Kept => Key::LoopOutputsKept,
        },
    )
}

/// How transformers' training cache is shown.
pub fn training_cache(c: vramfit_core::config::TrainingCache, lang: Lang) -> &'static str {
    use vramfit_core::config::TrainingCache;
    t(
        lang,
        match c {
            TrainingCache::Off => Key::TrainingCacheOff,
            TrainingCache::Copies => Key::TrainingCacheCopies,
        },
    )
}

/// How what SDPA attention is given (a padding mask or none) is shown.
pub fn attention_mask(m: vramfit_core::config::AttentionMask, lang: Lang) -> &'static str {
    use vramfit_core::config::AttentionMask;
    t(
        lang,
        match m {
            AttentionMask::Expanded => Key::AttentionMaskExpanded,
            AttentionMask::None => Key::AttentionMaskNone,
            AttentionMask::Padding => Key::AttentionMaskPadding,
        },
    )
}

/// How the autocast region is shown.
pub fn autocast_region(r: vramfit_core::config::AutocastRegion, lang: Lang) -> &'static str {
    use vramfit_core::config::AutocastRegion;
    t(
        lang,
        match r {
            AutocastRegion::Forward => Key::AutocastRegionForward,
            AutocastRegion::Backward => Key::AutocastRegionBackward,
        },
    )
}

/// How the PyTorch release is shown.
pub fn pytorch(r: vramfit_core::config::TorchRelease, lang: Lang) -> &'static str {
    use vramfit_core::config::TorchRelease;
    t(
        lang,
        match r {
            TorchRelease::Current => Key::PytorchCurrent,
            TorchRelease::Torch110 => Key::Pytorch110,
        },
    )
}

/// How a mode is shown.
pub fn mode(m: Mode, lang: Lang) -> &'static str {
    t(
        lang,
        match m {
            Mode::Train => Key::ModeTrain,
            Mode::FinetuneLora => Key::ModeLora,
            Mode::FinetuneQlora => Key::ModeQlora,
            Mode::Inference => Key::ModeInference,
        },
    )
}

/// The mode in a word, for the form's segmented control (the full label
/// is its tooltip).
pub fn mode_short(m: Mode, lang: Lang) -> &'static str {
    t(
        lang,
        match m {
            Mode::Train => Key::ModeTrain,
            Mode::FinetuneLora => Key::ModeLoraShort,
            Mode::FinetuneQlora => Key::ModeQloraShort,
            Mode::Inference => Key::ModeInference,
        },
    )
}

/// A multi-GPU strategy in words (its id stays in the link and the CLI).
pub fn strategy(s: Strategy, lang: Lang) -> &'static str {
    t(
        lang,
        match s {
            Strategy::Single => Key::StrategySingle,
            Strategy::Ddp => Key::StrategyDdp,
            Strategy::Zero1 => Key::StrategyZero1,
            Strategy::Zero2 => Key::StrategyZero2,
            Strategy::Zero3 => Key::StrategyZero3,
            Strategy::FsdpFull => Key::StrategyFsdpFull,
            Strategy::FsdpGradOp => Key::StrategyFsdpGradOp,
            Strategy::FsdpHybrid => Key::StrategyFsdpHybrid,
            Strategy::FsdpNoShard => Key::StrategyFsdpNoShard,
            Strategy::MegatronDistOpt => Key::StrategyMegatron,
        },
    )
}

/// How a serving engine is shown (Ollama runs llama.cpp).
pub fn engine(e: Engine, lang: Lang) -> &'static str {
    t(
        lang,
        match e {
            Engine::Hf => Key::EngineHf,
            Engine::Vllm => Key::EngineVllm,
            Engine::Sglang => Key::EngineSglang,
            Engine::LlamaCpp => Key::EngineLlamaCpp,
        },
    )
}

/// How a `--weights` id is shown with `engine`: `native` as the 16 bits
/// the engine loads, the quantized formats by their names, GGUF mixes as
/// `llama-quantize` writes them (`Q4_K_M`).
pub fn serve_weights(engine: Engine, id: &str, lang: Lang) -> String {
    let key = match id {
        "native" if engine == Engine::LlamaCpp => Key::WeightsGguf16,
        "native" => Key::WeightsTorch16,
        "fp8" => Key::WeightsFp8,
        "awq-int4" => Key::WeightsAwq,
        "gptq-int4" => Key::WeightsGptq,
        "int4" | "nf4" => Key::WeightsNf4,
        other => return other.to_ascii_uppercase(),
    };
    t(lang, key).to_string()
}

/// How a checkpointing choice is shown.
pub fn checkpointing(c: CheckpointChoice, lang: Lang) -> &'static str {
    t(
        lang,
        match c {
            CheckpointChoice::None => Key::CheckpointNone,
            CheckpointChoice::Full => Key::CheckpointFull,
            CheckpointChoice::Selective => Key::CheckpointSelective,
            CheckpointChoice::SelectiveOp => Key::CheckpointSelectiveOp,
            CheckpointChoice::EveryK => Key::CheckpointEveryK,
        },
    )
}

/// How an attention implementation is shown.
pub fn attention(a: Attention, lang: Lang) -> &'static str {
    t(
        lang,
        match a {
            Attention::Eager => Key::AttentionEager,
            Attention::Sdpa => Key::AttentionSdpa,
            Attention::Flash => Key::AttentionFlash,
        },
    )
}

/// How a preset group is shown as a heading: series' names and the
/// acronyms CNN and MLP stay as they are (Chinese tutorials write them so).
pub fn family(group: Group, lang: Lang) -> &'static str {
    match group {
        Group::VisionTransformer => t(lang, Key::FamilyVit),
        Group::Cnn
        | Group::Mlp
        | Group::Bert
        | Group::Gpt2
        | Group::Opt
        | Group::Llama
        | Group::Mistral
        | Group::Qwen
        | Group::SmolLm
        | Group::Olmo
        | Group::Gemma
        | Group::Pythia
        | Group::Phi
        | Group::Granite
        | Group::StarCoder2
        | Group::DeepSeek
        | Group::Kimi
        | Group::Ernie
        | Group::Exaone
        | Group::Glm
        | Group::MiniMax
        | Group::GptOss
        | Group::T5 => group.name(),
    }
}

/// How a GPU vendor is shown as a group heading.
pub fn vendor(v: Vendor) -> &'static str {
    match v {
        Vendor::Nvidia => "NVIDIA",
        Vendor::Amd => "AMD",
        Vendor::Intel => "Intel",
        Vendor::Apple => "Apple",
        Vendor::Custom => "custom",
    }
}

/// The phase of the training step, in a sentence ("the backward pass").
pub fn phase(p: Phase, lang: Lang) -> &'static str {
    t(
        lang,
        match p {
            Phase::Forward => Key::PhaseForward,
            Phase::Backward => Key::PhaseBackward,
            Phase::Optimizer => Key::PhaseOptimizer,
        },
    )
}

/// The phase as a short label ("Backward").
pub fn phase_short(p: Phase, lang: Lang) -> &'static str {
    t(
        lang,
        match p {
            Phase::Forward => Key::PhaseForwardShort,
            Phase::Backward => Key::PhaseBackwardShort,
            Phase::Optimizer => Key::PhaseOptimizerShort,
        },
    )
}

/// A share-link setting's name in words (the page's and the widget's "Also
/// set by the link" line); `None` for a key this table does not know, which a
/// test rules out for every key of [`vramfit_core::share::KEYS`].
pub fn setting(key: &str, lang: Lang) -> Option<&'static str> {
    let k = match key {
        "m" => Key::SetModel,
        "g" => Key::SetGpu,
        "b" => Key::SetBatch,
        "s" => Key::SetSeq,
        "i" => Key::SetImage,
        "a" => Key::SetAccum,
        "p" => Key::SetPrecision,
        "o" => Key::SetOptimizer,
        "oi" => Key::SetOptimizerImpl,
        "zg" => Key::SetZeroGrad,
        "lo" => Key::SetLoopOutputs,
        "pt" => Key::SetPytorch,
        "ar" => Key::SetAutocastRegion,
        "tc" => Key::SetTrainingCache,
        "am" => Key::SetAttentionMask,
        "c" => Key::SetCheckpointing,
        "at" => Key::SetAttention,
        "mo" => Key::SetMode,
        "r" => Key::SetLoraRank,
        "w" => Key::SetWeights,
        "ctx" => Key::SetContext,
        "fr" => Key::SetFrozen,
        "ka" => Key::SetKeepAttention,
        "km" => Key::SetKeepMlp,
        "kc" => Key::SetKeepConv,
        "lf" => Key::SetLoraFp32,
        "lb" => Key::SetLoraBase,
        "st" => Key::SetStrategy,
        "gn" => Key::SetGpusPerNode,
        "n" => Key::SetNodes,
        "of" => Key::SetOffload,
        "tp" => Key::SetTp,
        "pp" => Key::SetPp,
        "vpp" => Key::SetVpp,
        "ep" => Key::SetEp,
        "etp" => Key::SetEtp,
        "sp" => Key::SetSp,
        "bv" => Key::SetBucketView,
        "zb" => Key::SetZeroBucket,
        "en" => Key::SetEngine,
        "kv" => Key::SetKv,
        "cc" => Key::SetConcurrency,
        "gu" => Key::SetUtilization,
        "gl" => Key::SetGpuLayers,
        _ => return None,
    };
    Some(t(lang, k))
}

/// A setting's value as shown: switches read on/off, other values as the
/// link writes them.
pub fn setting_value(key: &str, value: &str, lang: Lang) -> String {
    match (key, value) {
        ("sp" | "lf" | "bv", "1") => t(lang, Key::SetOn).to_string(),
        ("sp" | "lf" | "bv", _) => t(lang, Key::SetOff).to_string(),
        _ => value.to_string(),
    }
}

/// A technique of the comparison strip.
pub fn technique(tech: Technique, lang: Lang) -> &'static str {
    t(
        lang,
        match tech {
            Technique::Amp => Key::TechAmp,
            Technique::AmpFp16 => Key::TechAmpFp16,
            Technique::Checkpointing => Key::TechCheckpointing,
            Technique::Accumulation4 => Key::TechAccum,
            Technique::EightBitOptimizer => Key::TechEightBit,
            Technique::Lora => Key::TechLora,
            Technique::Qlora => Key::TechQlora,
            Technique::HalfBase => Key::TechHalfBase,
            Technique::Sdpa => Key::TechSdpa,
            Technique::OptimizerOffload => Key::TechOffload,
            Technique::MoreGpus => Key::TechMoreGpus,
        },
    )
}

/// The stable id of a technique, for CSS classes and test ids.
pub fn technique_id(tech: Technique) -> &'static str {
    match tech {
        Technique::Amp => "amp",
        Technique::AmpFp16 => "amp-fp16",
        Technique::Checkpointing => "checkpointing",
        Technique::Accumulation4 => "accumulation",
        Technique::EightBitOptimizer => "optimizer-8bit",
        Technique::Lora => "lora",
        Technique::Qlora => "qlora",
        Technique::HalfBase => "half-base",
        Technique::Sdpa => "sdpa",
        Technique::OptimizerOffload => "offload",
        Technique::MoreGpus => "more-gpus",
    }
}

/// A GPU's display name: the preset's `name`, or, for a GPU given by its
/// memory (id `custom-<GiB>`), a translated "GPU with N GiB".
pub fn gpu_name(id: &str, name: &str, lang: Lang) -> String {
    match id.strip_prefix(vramfit_core::gpus::CUSTOM_PREFIX) {
        Some(gib) => crate::i18n::tf(lang, Key::CustomGpuName, &[gib]),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_share_key_has_a_name_in_both_languages() {
        for k in vramfit_core::share::KEYS {
            for lang in [Lang::En, Lang::Zh] {
                assert!(
                    setting(k.key, lang).is_some_and(|n| !n.is_empty() && !n.starts_with("--")),
                    "{} has no name",
                    k.key
                );
            }
        }
        assert_eq!(setting_value("sp", "1", Lang::En), "on");
        assert_eq!(setting_value("tp", "2", Lang::Zh), "2");
    }
}
