//! Exports of a plan to the tools that run it: a DeepSpeed `ds_config.json`,
//! Hugging Face `TrainingArguments` keyword arguments, an Accelerate FSDP
//! config and a plain PyTorch training loop; and of a serving estimate to
//! the engine's launch command (`launch.rs`).

mod launch;

pub use launch::{launch_command, llama_server, sglang_launch, vllm_serve};

use crate::config::{
    CheckpointMode, Checkpointing, Optimizer, OptimizerImpl, Precision, TrainConfig,
};
use crate::parallel::{Offload, Strategy};
use serde_json::{Value, json};

/// DeepSpeed `ds_config.json` keys (DeepSpeed docs, "Configuration JSON").
pub fn deepspeed(c: &TrainConfig) -> Value {
    let stage = match c.parallel.strategy {
        Strategy::Zero1 => 1,
        Strategy::Zero2 => 2,
        Strategy::Zero3 | Strategy::FsdpFull | Strategy::FsdpHybrid => 3,
        Strategy::FsdpGradOp => 2,
        // Megatron's distributed optimizer shards the optimizer state over
        // the data-parallel group, as ZeRO stage 1 does.
        Strategy::MegatronDistOpt => 1,
        Strategy::Single | Strategy::Ddp | Strategy::FsdpNoShard => 0,
    };
    let mut zero = json!({ "stage": stage, "reduce_bucket_size": c.parallel.zero_bucket, "contiguous_gradients": true });
    if c.parallel.offload != Offload::None {
        set(
            &mut zero,
            "offload_optimizer",
            json!({ "device": "cpu", "pin_memory": true }),
        );
    }
    if c.parallel.offload == Offload::OptimizerParams {
        set(
            &mut zero,
            "offload_param",
            json!({ "device": "cpu", "pin_memory": true }),
        );
    }
    let half = matches!(c.precision, Precision::Fp16 | Precision::AmpFp16);
    let bf16 = matches!(c.precision, Precision::Bf16 | Precision::AmpBf16);
    let world = c.parallel.dp();
    json!({
        "train_batch_size": c.batch.saturating_mul(c.grad_accum).saturating_mul(world),
        "train_micro_batch_size_per_gpu": c.batch,
        "gradient_accumulation_steps": c.grad_accum,
        "fp16": { "enabled": half },
        "bf16": { "enabled": bf16 },
        "zero_optimization": zero,
    })
}

/// Sets `key` in a JSON object (`json!({..})` values always are objects).
fn set(object: &mut Value, key: &str, value: Value) {
    if let Some(map) = object.as_object_mut() {
        map.insert(key.to_string(), value);
    }
}

/// Hugging Face `TrainingArguments` keyword arguments.
pub fn hf_training_arguments(c: &TrainConfig) -> Value {
    // The Trainer's `adamw_torch` is torch.optim.AdamW with its defaults
    // (foreach on CUDA); it has no name for the one-parameter-at-a-time loop,
    // which needs an optimizer passed in (`optimizers=(AdamW(..., foreach=False), None)`).
    let optim = match c.optimizer {
        Optimizer::AdamW | Optimizer::Adam if c.optimizer_impl == OptimizerImpl::Fused => {
            "adamw_torch_fused"
        }
        Optimizer::AdamW | Optimizer::Adam => "adamw_torch",
        Optimizer::AdamW8bit => "adamw_bnb_8bit",
        Optimizer::Adafactor => "adafactor",
        Optimizer::Sgd | Optimizer::SgdMomentum => "sgd",
        Optimizer::Lion => "lion_32bit",
    };
    let mut args = json!({
        "per_device_train_batch_size": c.batch,
        "gradient_accumulation_steps": c.grad_accum,
        "bf16": matches!(c.precision, Precision::Bf16 | Precision::AmpBf16),
        "fp16": matches!(c.precision, Precision::Fp16 | Precision::AmpFp16),
        "gradient_checkpointing": c.checkpointing != Checkpointing::NONE,
        "optim": optim,
    });
    if c.parallel.strategy.is_zero() {
        set(&mut args, "deepspeed", json!("ds_config.json"));
    }
    // `TrainingArguments.fsdp` takes the sharding strategies but NO_SHARD.
    let sharding = fsdp_sharding(c.parallel.strategy).filter(|s| *s != "NO_SHARD");
    if let Some(sharding) = sharding {
        let mode = sharding.to_lowercase();
        let offload = if c.parallel.offload != Offload::None {
            " offload"
        } else {
            ""
        };
        set(
            &mut args,
            "fsdp",
            json!(format!("{mode} auto_wrap{offload}")),
        );
    }
    args
}

/// FSDP's `ShardingStrategy` name of a strategy; `None` when it is not FSDP.
fn fsdp_sharding(s: Strategy) -> Option<&'static str> {
    match s {
        Strategy::FsdpFull => Some("FULL_SHARD"),
        Strategy::FsdpGradOp => Some("SHARD_GRAD_OP"),
        Strategy::FsdpHybrid => Some("HYBRID_SHARD"),
        Strategy::FsdpNoShard => Some("NO_SHARD"),
        Strategy::Single
        | Strategy::Ddp
        | Strategy::Zero1
        | Strategy::Zero2
        | Strategy::Zero3
        | Strategy::MegatronDistOpt => None,
    }
}

/// An Accelerate config (`accelerate launch --config_file`), as YAML.
pub fn accelerate_yaml(c: &TrainConfig) -> String {
    let mixed = match c.precision {
        Precision::AmpBf16 | Precision::Bf16 => "bf16",
        Precision::AmpFp16 | Precision::Fp16 => "fp16",
        Precision::Fp32 => "no",
    };
    let p = &c.parallel;
    let mut y = format!(
        "compute_environment: LOCAL_MACHINE\nmixed_precision: {mixed}\nnum_machines: {}\nnum_processes: {}\n",
        p.nodes,
        p.gpus_per_node * p.nodes
    );
    match fsdp_sharding(p.strategy) {
        Some(sharding) => {
            y.push_str(&format!(
                "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: {sharding}\n  fsdp_offload_params: {}\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_activation_checkpointing: {}\n",
                p.offload != Offload::None,
                c.checkpointing != Checkpointing::NONE
            ));
        }
        None if p.strategy.is_zero() => y.push_str("distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds_config.json\n"),
        None if p.world() > 1 => y.push_str("distributed_type: MULTI_GPU\n"),
        None => y.push_str("distributed_type: 'NO'\n"),
    }
    y
}

/// The import (beyond `torch`) and the constructor of the optimizer the
/// simulation models (`states.rs`): bitsandbytes' 8-bit AdamW, Hugging
/// Face's Adafactor without a first moment (`beta1=None`, its default; a
/// fixed learning rate needs `relative_step=False`), lion-pytorch's Lion.
/// Adam and AdamW name `torch.optim`'s implementation (`foreach=True`,
/// `fused=True` or `foreach=False`).
fn optimizer_python(o: Optimizer, imp: OptimizerImpl) -> (Option<&'static str>, &'static str) {
    match (o, imp) {
        (Optimizer::AdamW, OptimizerImpl::Foreach) => (
            None,
            "torch.optim.AdamW(model.parameters(), lr=lr, foreach=True)",
        ),
        (Optimizer::AdamW, OptimizerImpl::Fused) => (
            None,
            "torch.optim.AdamW(model.parameters(), lr=lr, fused=True)",
        ),
        (Optimizer::AdamW, OptimizerImpl::Loop) => (
            None,
            "torch.optim.AdamW(model.parameters(), lr=lr, foreach=False)",
        ),
        (Optimizer::Adam, OptimizerImpl::Foreach) => (
            None,
            "torch.optim.Adam(model.parameters(), lr=lr, foreach=True)",
        ),
        (Optimizer::Adam, OptimizerImpl::Fused) => (
            None,
            "torch.optim.Adam(model.parameters(), lr=lr, fused=True)",
        ),
        (Optimizer::Adam, OptimizerImpl::Loop) => (
            None,
            "torch.optim.Adam(model.parameters(), lr=lr, foreach=False)",
        ),
        (Optimizer::Sgd, _) => (None, "torch.optim.SGD(model.parameters(), lr=lr)"),
        (Optimizer::SgdMomentum, _) => (
            None,
            "torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)",
        ),
        (Optimizer::AdamW8bit, _) => (
            Some("import bitsandbytes as bnb"),
            "bnb.optim.AdamW8bit(model.parameters(), lr=lr)",
        ),
        (Optimizer::Adafactor, _) => (
            Some("from transformers.optimization import Adafactor"),
            "Adafactor(model.parameters(), lr=lr, scale_parameter=False, relative_step=False)",
        ),
        (Optimizer::Lion, _) => (
            Some("from lion_pytorch import Lion"),
            "Lion(model.parameters(), lr=lr)",
        ),
    }
}

/// A plain PyTorch training loop with the plan's micro-batch, accumulation,
/// autocast (+ GradScaler for fp16) and checkpointing.
pub fn pytorch_snippet(c: &TrainConfig) -> String {
    let amp = match c.precision {
        Precision::AmpBf16 => Some("torch.bfloat16"),
        Precision::AmpFp16 => Some("torch.float16"),
        Precision::Fp32 | Precision::Fp16 | Precision::Bf16 => None,
    };
    let (import, optimizer) = optimizer_python(c.optimizer, c.optimizer_impl);
    let mut s = String::from("import torch\n");
    if let Some(import) = import {
        s.push_str(import);
        s.push('\n');
    }
    s.push_str(&format!(
        "\nmicro_batch, accumulation = {}, {}\n",
        c.batch, c.grad_accum
    ));
    s.push_str("loader = torch.utils.data.DataLoader(dataset, batch_size=micro_batch, shuffle=True, pin_memory=True)\n");
    if c.checkpointing == Checkpointing::Mode(CheckpointMode::Full) {
        s.push_str(
            "model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={\"use_reentrant\": False})  # Hugging Face models\n",
        );
    }
    if matches!(c.precision, Precision::Bf16) {
        s.push_str("model = model.to(torch.bfloat16)\n");
    } else if matches!(c.precision, Precision::Fp16) {
        s.push_str("model = model.to(torch.float16)\n");
    }
    s.push_str(&format!("optimizer = {optimizer}\n"));
    if c.precision == Precision::AmpFp16 {
        s.push_str("scaler = torch.amp.GradScaler(\"cuda\")\n");
    }
    s.push_str("\nmodel.train()\nfor i, batch in enumerate(loader):\n");
    match amp {
        Some(dtype) => {
            s.push_str(&format!("    with torch.autocast(\"cuda\", dtype={dtype}):\n        loss = model(**batch).loss / accumulation\n"))
        }
        None => s.push_str("    loss = model(**batch).loss / accumulation\n"),
    }
    if c.precision == Precision::AmpFp16 {
        s.push_str("    scaler.scale(loss).backward()\n    if (i + 1) % accumulation == 0:\n        scaler.step(optimizer)\n        scaler.update()\n        optimizer.zero_grad(set_to_none=True)\n");
    } else {
        s.push_str("    loss.backward()\n    if (i + 1) % accumulation == 0:\n        optimizer.step()\n        optimizer.zero_grad(set_to_none=True)\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::Parallel;

    /// Top-level and `zero_optimization` keys DeepSpeed's config accepts
    /// (deepspeed/runtime/config.py, zero/config.py).
    const DS_KEYS: &[&str] = &[
        "train_batch_size",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "fp16",
        "bf16",
        "zero_optimization",
    ];
    const ZERO_KEYS: &[&str] = &[
        "stage",
        "reduce_bucket_size",
        "contiguous_gradients",
        "offload_optimizer",
        "offload_param",
    ];
    /// `transformers.TrainingArguments` fields used.
    const HF_KEYS: &[&str] = &[
        "per_device_train_batch_size",
        "gradient_accumulation_steps",
        "bf16",
        "fp16",
        "gradient_checkpointing",
        "optim",
        "deepspeed",
        "fsdp",
    ];

    fn cfg(strategy: Strategy, offload: Offload) -> TrainConfig {
        TrainConfig {
            batch: 4,
            grad_accum: 8,
            precision: Precision::AmpBf16,
            parallel: Parallel {
                strategy,
                offload,
                gpus_per_node: 8,
                ..Parallel::default()
            },
            ..TrainConfig::default()
        }
    }

    #[test]
    fn deepspeed_config_uses_only_known_keys_and_consistent_batches() {
        let v = deepspeed(&cfg(Strategy::Zero3, Offload::OptimizerParams));
        let text = serde_json::to_string(&v).unwrap_or_default();
        let back: Value = serde_json::from_str(&text).unwrap_or_default();
        let obj = back.as_object().cloned().unwrap_or_default();
        assert!(obj.keys().all(|k| DS_KEYS.contains(&k.as_str())), "{obj:?}");
        let zero = obj["zero_optimization"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(zero.keys().all(|k| ZERO_KEYS.contains(&k.as_str())));
        assert_eq!(obj["train_batch_size"], 4 * 8 * 8);
        assert_eq!(zero["stage"], 3);
        assert_eq!(zero["offload_param"]["device"], "cpu");
        assert_eq!(obj["bf16"]["enabled"], true);
    }

    #[test]
    fn hf_arguments_use_training_arguments_fields() {
        let v = hf_training_arguments(&cfg(Strategy::FsdpFull, Offload::Optimizer));
        let obj = v.as_object().cloned().unwrap_or_default();
        assert!(obj.keys().all(|k| HF_KEYS.contains(&k.as_str())), "{obj:?}");
        assert_eq!(obj["fsdp"], "full_shard auto_wrap offload");
        assert_eq!(obj["per_device_train_batch_size"], 4);
    }

    #[test]
    fn accelerate_and_pytorch_exports_carry_the_plan() {
        let y = accelerate_yaml(&cfg(Strategy::FsdpFull, Offload::None));
        assert!(
            y.contains("distributed_type: FSDP")
                && y.contains("fsdp_sharding_strategy: FULL_SHARD")
                && y.contains("num_processes: 8")
        );
        let fp16 = TrainConfig {
            precision: Precision::AmpFp16,
            ..cfg(Strategy::Single, Offload::None)
        };
        let py = pytorch_snippet(&fp16);
        assert!(
            py.contains("GradScaler")
                && py.contains("torch.float16")
                && py.contains("micro_batch, accumulation = 4, 8")
        );
    }

    /// Each optimizer's exports name that optimizer, not another (the
    /// PyTorch loop once wrote `torch.optim.AdamW` for Lion and Adafactor).
    #[test]
    fn every_optimizer_s_exports_name_it() {
        for &o in Optimizer::ALL {
            let c = TrainConfig {
                optimizer: o,
                ..cfg(Strategy::Single, Offload::None)
            };
            let (import, constructor) = match o {
                Optimizer::AdamW => (None, "torch.optim.AdamW("),
                Optimizer::Adam => (None, "torch.optim.Adam("),
                Optimizer::Sgd => (None, "torch.optim.SGD(model.parameters(), lr=lr)"),
                Optimizer::SgdMomentum => (None, "momentum=0.9"),
                Optimizer::AdamW8bit => {
                    (Some("import bitsandbytes as bnb"), "bnb.optim.AdamW8bit(")
                }
                Optimizer::Adafactor => (
                    Some("from transformers.optimization import Adafactor"),
                    "optimizer = Adafactor(",
                ),
                Optimizer::Lion => (Some("from lion_pytorch import Lion"), "optimizer = Lion("),
            };
            let py = pytorch_snippet(&c);
            assert!(py.contains(constructor), "{o}: {py}");
            assert_eq!(py.matches("optimizer = ").count(), 1, "{o}: {py}");
            if let Some(import) = import {
                assert!(py.contains(import), "{o}: {py}");
            }
            let others_named = Optimizer::ALL.iter().filter(|&&p| p != o).any(|&p| {
                let (_, theirs) = optimizer_python(p, c.optimizer_impl);
                py.contains(theirs)
            });
            assert!(!others_named, "{o}: {py}");
            let hf = hf_training_arguments(&c);
            let want = match o {
                Optimizer::AdamW | Optimizer::Adam => "adamw_torch",
                Optimizer::AdamW8bit => "adamw_bnb_8bit",
                Optimizer::Adafactor => "adafactor",
                Optimizer::Sgd | Optimizer::SgdMomentum => "sgd",
                Optimizer::Lion => "lion_32bit",
            };
            assert_eq!(hf["optim"], want, "{o}");
        }
    }

    /// Adam's exports name the implementation the estimate assumed.
    #[test]
    fn adam_s_exports_name_its_implementation() {
        for (imp, arg, hf) in [
            (OptimizerImpl::Foreach, "foreach=True", "adamw_torch"),
            (OptimizerImpl::Fused, "fused=True", "adamw_torch_fused"),
            (OptimizerImpl::Loop, "foreach=False", "adamw_torch"),
        ] {
            let c = TrainConfig {
                optimizer_impl: imp,
                ..cfg(Strategy::Single, Offload::None)
            };
            let py = pytorch_snippet(&c);
            assert!(
                py.contains(&format!(
                    "torch.optim.AdamW(model.parameters(), lr=lr, {arg})"
                )),
                "{imp}: {py}"
            );
            assert_eq!(hf_training_arguments(&c)["optim"], hf, "{imp}");
        }
    }

    #[test]
    fn megatron_s_distributed_optimizer_exports_as_zero_stage_1() {
        let v = deepspeed(&cfg(Strategy::MegatronDistOpt, Offload::None));
        assert_eq!(v["zero_optimization"]["stage"], 1);
        let v = deepspeed(&cfg(Strategy::Ddp, Offload::None));
        assert_eq!(v["zero_optimization"]["stage"], 0);
    }

    /// FSDP strategies name their sharding in both exports (Hugging Face
    /// has no NO_SHARD); the others export as DeepSpeed or plain DDP.
    #[test]
    fn fsdp_strategies_name_their_sharding_in_both_exports() {
        for &s in Strategy::ALL {
            let c = cfg(s, Offload::None);
            let hf = hf_training_arguments(&c);
            let yaml = accelerate_yaml(&c);
            let (hf_want, yaml_want) = match s {
                Strategy::FsdpFull => (Some("full_shard auto_wrap"), "FULL_SHARD"),
                Strategy::FsdpGradOp => (Some("shard_grad_op auto_wrap"), "SHARD_GRAD_OP"),
                Strategy::FsdpHybrid => (Some("hybrid_shard auto_wrap"), "HYBRID_SHARD"),
                Strategy::FsdpNoShard => (None, "NO_SHARD"),
                Strategy::Zero1 | Strategy::Zero2 | Strategy::Zero3 => (None, "DEEPSPEED"),
                Strategy::Single | Strategy::Ddp | Strategy::MegatronDistOpt => (None, "MULTI_GPU"),
            };
            assert_eq!(hf.get("fsdp").and_then(Value::as_str), hf_want, "{s}");
            assert!(yaml.contains(yaml_want), "{s}: {yaml}");
        }
    }
}
