//! Display names for the core's choice enums and vendor ids. The ids stay the
//! core's (they are what URLs and the CLI use); only the text shown differs.

use vramfit_core::{Optimizer, Phase, Precision};

/// How a precision mode is shown in the form. "Mixed" is `torch.autocast`:
/// fp32 weights, matmuls in half precision; "pure" keeps everything in half.
pub fn precision(p: Precision) -> &'static str {
    match p {
        Precision::Fp32 => "fp32",
        Precision::Fp16 => "fp16 (pure)",
        Precision::Bf16 => "bf16 (pure)",
        Precision::AmpFp16 => "Mixed fp16",
        Precision::AmpBf16 => "Mixed bf16",
    }
}

/// How an optimizer is shown in the form (8-bit AdamW is bitsandbytes').
pub fn optimizer(o: Optimizer) -> &'static str {
    match o {
        Optimizer::Sgd => "SGD",
        Optimizer::SgdMomentum => "SGD with momentum",
        Optimizer::Adam => "Adam",
        Optimizer::AdamW => "AdamW",
        Optimizer::AdamW8bit => "AdamW 8-bit",
        Optimizer::Adafactor => "Adafactor",
        Optimizer::Lion => "Lion",
    }
}

/// How a GPU vendor id is shown as a group heading.
pub fn vendor(id: &str) -> &str {
    match id {
        "nvidia" => "NVIDIA",
        "amd" => "AMD",
        "intel" => "Intel",
        "apple" => "Apple",
        other => other,
    }
}

/// The phase of the training step, as words.
pub fn phase(p: Phase) -> &'static str {
    match p {
        Phase::Forward => "forward pass",
        Phase::Backward => "backward pass",
        Phase::Optimizer => "optimizer step",
    }
}
