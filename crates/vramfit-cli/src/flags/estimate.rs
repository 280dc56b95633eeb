//! The [`Section::Estimate`] flags: the model, the GPU and the training
//! configuration — the settings a share link carries, one key each.

use super::value::{
    attentions, checkpointings, choice, count, engines, gpu_layers, kv_dtypes, loop_outputs,
    lora_bases, modes, offloads, on_off, optimizer_impls, optimizers, precisions, set_weights,
    strategies, unit, weights, zero_grads,
};
use super::{Cmd, Flag, Kind, Section};
use vramfit_core::TrainConfig;
use vramfit_core::engines::Serving;

/// What `--keep-*` expects.
const KEPT: &str = "a fraction in (0, 1]";

/// The defaults the help shows.
fn train() -> TrainConfig {
    TrainConfig::default()
}

/// The serving defaults the help shows.
fn serve() -> Serving {
    Serving::default()
}

/// The flags, in the help's order.
pub(super) const FLAGS: &[Flag] = &[
    Flag {
        name: "--model",
        kind: Kind::Text("MODEL"),
        help: "a model preset id (see `vramfit presets`) or a Hugging Face config.json (required)",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| {
            a.model = v.to_string();
            a.model_json = None;
            Ok(())
        },
    },
    Flag {
        name: "--batch",
        kind: Kind::Count,
        help: "micro-batch size",
        default: Some(|| train().batch.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.batch = n),
    },
    Flag {
        name: "--seq",
        kind: Kind::Count,
        help: "sequence length in tokens",
        default: Some(|| train().seq.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.seq = n),
    },
    Flag {
        name: "--image",
        kind: Kind::Count,
        help: "image side in pixels",
        default: Some(|| train().image.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.image = n),
    },
    Flag {
        name: "--precision",
        kind: Kind::Choice("P", precisions),
        help: "",
        default: Some(|| train().precision.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|p| a.config.precision = p),
    },
    Flag {
        name: "--optimizer",
        kind: Kind::Choice("O", optimizers),
        help: "",
        default: Some(|| train().optimizer.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|o| a.config.optimizer = o),
    },
    Flag {
        name: "--optimizer-impl",
        kind: Kind::Choice("I", optimizer_impls),
        help: "torch.optim's code path for adam/adamw: foreach (one temporary per parameter, all at once), fused (none), loop (parameter by parameter; transformers' own AdamW of 2022 too); other optimizers have one",
        default: Some(|| train().optimizer_impl.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|i| a.config.optimizer_impl = i),
    },
    Flag {
        name: "--zero-grad",
        kind: Kind::Choice("Z", zero_grads),
        help: "after each step: set-to-none frees the gradients (PyTorch >= 2.0), zeros keeps them\nallocated as zeros (set_to_none=False: PyTorch < 2.0, the Trainer's model.zero_grad() then)",
        default: Some(|| train().zero_grad.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|z| a.config.zero_grad = z),
    },
    Flag {
        name: "--loop-outputs",
        kind: Kind::Choice("L", loop_outputs),
        help: "what the training loop keeps of the model's outputs: dropped (only the loss, as the\nHugging Face Trainer), kept (outputs = model(**batch) in scope through backward: the logits stay)",
        default: Some(|| train().loop_outputs.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|o| a.config.loop_outputs = o),
    },
    Flag {
        name: "--checkpointing",
        kind: Kind::Choice("C", checkpointings),
        help: "",
        default: Some(|| train().checkpointing.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|c| a.config.checkpointing = c),
    },
    Flag {
        name: "--attention",
        kind: Kind::Choice("A", attentions),
        help: "",
        default: Some(|| train().attention.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|at| a.config.attention = at),
    },
    Flag {
        name: "--grad-accum",
        kind: Kind::Count,
        help: "gradient-accumulation steps",
        default: Some(|| train().grad_accum.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.grad_accum = n),
    },
    Flag {
        name: "--gpu",
        kind: Kind::Text("ID"),
        help: "a GPU preset (or custom-<GiB>): adds fits / max_batch",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| {
            a.gpu = Some(v.to_string());
            Ok(())
        },
    },
    Flag {
        name: "--mode",
        kind: Kind::Choice("M", modes),
        help: "",
        default: Some(|| train().mode.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|m| a.config.mode = m),
    },
    Flag {
        name: "--lora-rank",
        kind: Kind::Count,
        help: "LoRA rank on every linear layer in the blocks",
        default: Some(|| train().lora_rank.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.lora_rank = n),
    },
    Flag {
        name: "--weights",
        kind: Kind::Choice("W", weights),
        help: "weights (int8/int4 = nf4: block linears, frozen modes;\n\
               fp8, awq-int4, gptq-int4, mxfp4 (experts): --engine vllm|sglang;\n\
               the GGUF mixes: --engine llama.cpp)",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: set_weights,
    },
    Flag {
        name: "--context",
        kind: Kind::Count,
        help: "KV-cache tokens for inference (default: the sequence length)",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.context = n),
    },
    Flag {
        name: "--engine",
        kind: Kind::Choice("E", engines),
        help: "what serves the model (--mode inference; llama.cpp also for Ollama;\n\
               hf: Hugging Face generate, simulated op by op)",
        default: Some(|| serve().engine.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|e| a.serve.engine = e),
    },
    Flag {
        name: "--kv-dtype",
        kind: Kind::Choice("K", kv_dtypes),
        help: "KV-cache type (fp8: vllm|sglang; q8_0, q4_0: llama.cpp)",
        default: Some(|| serve().kv.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|k| a.serve.kv = k),
    },
    Flag {
        name: "--concurrency",
        kind: Kind::Count,
        help: "sequences of --context tokens in flight (llama.cpp -np;\n\
               vllm|sglang: fits when the KV pool holds this many)",
        default: Some(|| serve().concurrency.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.serve.concurrency = n),
    },
    Flag {
        name: "--gpu-memory-utilization",
        kind: Kind::Fraction,
        help: "vLLM's share of the GPU (SGLang's --mem-fraction-static)",
        default: Some(|| serve().gpu_memory_utilization.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| unit(v, "a fraction in (0, 1]").map(|f| a.serve.gpu_memory_utilization = f),
    },
    Flag {
        name: "--gpu-layers",
        kind: Kind::Count,
        help: "llama.cpp -ngl: layers on the GPU, the rest in host RAM\n\
               (default all; the layer count + 1 offloads the output layer too)",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| gpu_layers(v).map(|n| a.serve.gpu_layers = n),
    },
    Flag {
        name: "--strategy",
        kind: Kind::Choice("S", strategies),
        help: "",
        default: Some(|| train().parallel.strategy.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|s| a.config.parallel.strategy = s),
    },
    Flag {
        name: "--gpus-per-node",
        kind: Kind::Count,
        help: "GPUs per node",
        default: Some(|| train().parallel.gpus_per_node.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.parallel.gpus_per_node = n),
    },
    Flag {
        name: "--nodes",
        kind: Kind::Count,
        help: "nodes",
        default: Some(|| train().parallel.nodes.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.parallel.nodes = n),
    },
    Flag {
        name: "--offload",
        kind: Kind::Choice("O", offloads),
        help: "(ZeRO / FSDP)",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|o| a.config.parallel.offload = o),
    },
    Flag {
        name: "--zero-bucket",
        kind: Kind::Count,
        help: "DeepSpeed reduce_bucket_size in elements",
        default: Some(|| train().parallel.zero_bucket.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.parallel.zero_bucket = n),
    },
    Flag {
        name: "--ddp-bucket-view",
        kind: Kind::Switch,
        help: "DDP with gradient_as_bucket_view=True (no bucket copy)",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, _| {
            a.config.parallel.bucket_view = true;
            Ok(())
        },
    },
    Flag {
        name: "--tp",
        kind: Kind::Count,
        help: "Megatron tensor-parallel size",
        default: Some(|| train().parallel.tp.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.parallel.tp = n),
    },
    Flag {
        name: "--pp",
        kind: Kind::Count,
        help: "Megatron pipeline-parallel size",
        default: Some(|| train().parallel.pp.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.parallel.pp = n),
    },
    Flag {
        name: "--vpp",
        kind: Kind::Count,
        help: "virtual pipeline stages, interleaved 1F1B",
        default: Some(|| train().parallel.vpp.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.parallel.vpp = n),
    },
    Flag {
        name: "--ep",
        kind: Kind::Count,
        help: "expert-parallel GPUs: routed experts split over them, exchanged by all-to-all (models with experts)",
        default: Some(|| train().parallel.ep.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.parallel.ep = n),
    },
    Flag {
        name: "--etp",
        kind: Kind::Count,
        help: "expert tensor-parallel GPUs: each routed expert's columns split over them (Megatron-Core's --expert-tensor-parallel-size; default: --tp)",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.parallel.etp = n),
    },
    Flag {
        name: "--sp",
        kind: Kind::OnOff,
        help: "Megatron sequence parallelism (needs --tp > 1)",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| on_off(v).map(|b| a.config.parallel.sp = b),
    },
    Flag {
        name: "--freeze",
        kind: Kind::Count,
        help: "freeze the embeddings and the first N blocks",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| count(v).map(|n| a.config.frozen_blocks = n),
    },
    Flag {
        name: "--keep-attention",
        kind: Kind::Fraction,
        help: "structured pruning: kept fraction of attention heads",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| unit(v, KEPT).map(|f| a.config.keep_attention = f),
    },
    Flag {
        name: "--keep-mlp",
        kind: Kind::Fraction,
        help: "structured pruning: kept fraction of MLP neurons",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| unit(v, KEPT).map(|f| a.config.keep_mlp = f),
    },
    Flag {
        name: "--keep-conv",
        kind: Kind::Fraction,
        help: "structured pruning: kept fraction of CNN block channels",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| unit(v, KEPT).map(|f| a.config.keep_conv = f),
    },
    Flag {
        name: "--lora-fp32",
        kind: Kind::OnOff,
        help: "LoRA adapters in fp32 (PEFT default, on) or the model's dtype",
        default: None,
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| on_off(v).map(|b| a.config.lora_fp32 = b),
    },
    Flag {
        name: "--lora-base",
        kind: Kind::Choice("B", lora_bases),
        help: "LoRA/QLoRA's frozen base under amp-*: in the compute dtype (as loaded with torch_dtype) or fp32",
        default: Some(|| train().lora_base.to_string()),
        section: Section::Estimate,
        commands: Cmd::ALL,
        set: |a, v| choice(v).map(|b| a.config.lora_base = b),
    },
];
