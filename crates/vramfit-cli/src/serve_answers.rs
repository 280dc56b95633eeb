//! `max-batch --mode inference --engine vllm|sglang|llama.cpp`: the core's
//! answers (`vramfit_core::engines::answer`) — the longest context at
//! `--concurrency`, the most sequences at `--context`, the fewest
//! tensor-parallel GPUs — as a table or the `vramfit.serve-answers/1` JSON.

use crate::args::{CliError, EstimateArgs};
use std::fmt::Write as _;
use vramfit_core::config::MAX_DIMENSION;
use vramfit_core::engines::{self, Engine, ServeAnswers};
use vramfit_core::{ModelSpec, gpu_preset};

/// Answers for a model named `name`.
///
/// # Errors
/// The core's refusals; a usage error for `--margin`, which the engines'
/// own budgets replace.
pub fn run(a: &EstimateArgs, name: &str, spec: &ModelSpec) -> Result<String, CliError> {
    if a.margin != 0.0 {
        return Err(CliError::Usage(format!(
            "--margin is for Hugging Face's simulation: {} keeps its own headroom (--gpu-memory-utilization for vLLM and SGLang)",
            a.serve.engine
        )));
    }
    let gpu = gpu_preset(a.gpu.as_deref().unwrap_or_default())?;
    let ans = engines::answer(spec, &gpu, &a.config, &a.serve)?;
    let weights = a.serve.weights_for(&a.config)?.id();
    if a.json {
        let v = serde_json::json!({
            "schema": "vramfit.serve-answers/1",
            "model": name,
            "engine": a.serve.engine.id(),
            "weights": weights,
            "kv_dtype": a.serve.kv.id(),
            "gpu": gpu.id,
            "context": ans.context,
            "concurrency": ans.concurrency,
            "context_limit": ans.context_limit,
            "max_context": ans.max_context,
            "max_concurrency": ans.max_concurrency,
            "tp_degrees": ans.tp_degrees,
            "fewest_gpus": ans.fewest_gpus,
        });
        return Ok(format!("{v}\n"));
    }
    Ok(table(name, &gpu.name, a, weights, &ans))
}

/// The three answers, one a line.
fn table(name: &str, gpu: &str, a: &EstimateArgs, weights: &str, ans: &ServeAnswers) -> String {
    let mut s = format!(
        "{name} on {gpu}, served by {} (weights {weights}, KV cache {})\n",
        a.serve.engine, a.serve.kv
    );
    let context = match ans.max_context {
        None => "no context fits".to_string(),
        Some(n) if n == ans.context_limit && n < MAX_DIMENSION => {
            format!("{n} tokens (the model's limit)")
        }
        Some(n) if n == ans.context_limit => format!("{n} tokens (the longest searched)"),
        Some(n) => format!("{n} tokens"),
    };
    let _ = writeln!(
        s,
        "  longest context at {} sequence(s): {context}",
        ans.concurrency
    );
    let seqs = ans
        .max_concurrency
        .map_or("no sequence fits".to_string(), |c| c.to_string());
    let _ = writeln!(s, "  most sequences of {} tokens: {seqs}", ans.context);
    let tried = ans
        .tp_degrees
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let fewest = match (ans.fewest_gpus, a.serve.engine) {
        (Some(n), Engine::LlamaCpp) => {
            format!("{n}, its layers split over them (--split-mode layer; tried {tried})")
        }
        (None, Engine::LlamaCpp) => format!("none: it fits split over none of {tried}"),
        (Some(n), _) => format!("{n}, --tensor-parallel-size {n} (tried {tried})"),
        (None, _) => format!("none: it fits at no tensor-parallel size of {tried}"),
    };
    let _ = writeln!(s, "  fewest GPUs: {fewest}");
    s
}
