//! `estimate --engine vllm|sglang|llama.cpp`: the engine's numbers
//! (`vramfit_core::engines::estimate`) as a table, the `vramfit.serve/1`
//! JSON or (`--export`) its launch command.

use crate::args::{CliError, EstimateArgs};
use std::fmt::Write as _;
use vramfit_core::engines::cache::{CacheKind, CacheLayout};
use vramfit_core::engines::{self, Engine, ServeEstimate};
use vramfit_core::{ModelSpec, gpu_preset};

/// The engine exports `estimate --export` writes; the others are `plan`'s.
const ENGINE_EXPORTS: [&str; 3] = ["vllm", "llama.cpp", "sglang"];

/// Runs a serving estimate for a model named `name`; `source` is what the
/// launch command loads (the preset id, or a `config.json`'s directory).
///
/// # Errors
/// The core's refusals; a usage error for an export that is not the
/// engine's.
pub fn run(
    a: &EstimateArgs,
    name: &str,
    spec: &ModelSpec,
    source: &str,
) -> Result<String, CliError> {
    if let Some(kind) = a.export.as_deref() {
        check_export(kind, a.serve.engine)?;
    }
    let gpu = a.gpu.as_deref().map(gpu_preset).transpose()?;
    let e = engines::estimate(spec, gpu.as_ref(), &a.config, &a.serve)?;
    if a.export.is_some() {
        return vramfit_core::export::launch_command(source, &e.config)
            .map(|c| format!("{c}\n"))
            .ok_or_else(|| CliError::Usage("Hugging Face generate has no launch command".into()));
    }
    if a.json {
        return Ok(format!("{}\n", json(name, &e)));
    }
    Ok(table(name, &e))
}

/// `--export` for `estimate`: the launch command of the estimate's engine.
///
/// # Errors
/// A usage error for a training export or another engine's.
fn check_export(kind: &str, engine: Engine) -> Result<(), CliError> {
    if !ENGINE_EXPORTS.contains(&kind) {
        return Err(CliError::Usage(format!(
            "estimate --export takes {}: {kind} is a training configuration (`vramfit plan --export {kind}`)",
            ENGINE_EXPORTS.join("|")
        )));
    }
    if kind != engine.id() {
        return Err(CliError::Usage(format!(
            "--export {kind} needs --engine {kind}: the command would not run what --engine {engine} estimated"
        )));
    }
    Ok(())
}

/// The `vramfit.serve/1` JSON.
fn json(name: &str, e: &ServeEstimate) -> serde_json::Value {
    let c = &e.config;
    let r = &e.report;
    let pooled = matches!(c.engine, Engine::Vllm | Engine::Sglang);
    let mut v = serde_json::json!({
        "schema": "vramfit.serve/1",
        "model": name,
        "parameter_count": e.parameter_count,
        "engine": c.engine.id(),
        "weights": c.weights.id(),
        "kv_dtype": c.kv.id(),
        "context": c.context,
        "concurrency": c.concurrency,
        "tp": c.tp,
        "weights_bytes": r.weights_bytes.0,
        "kv_cache_bytes": r.kv_cache_bytes.0,
        "compute_buffer_bytes": r.compute_buffer_bytes.0,
        "host_bytes": r.host_bytes.0,
        "device_used_bytes": e.device_used_bytes.0,
        "gpu": e.fit.as_ref().map(|f| serde_json::json!({
            "id": f.gpu, "usable_bytes": f.usable_bytes.0, "fits": f.fits,
        })),
        "decode_tokens_per_s_estimate": e.decode.map(|d| d.tokens_per_s),
        "decode_bytes_per_step": e.decode.map(|d| d.bytes_per_step.0),
        "beyond_trained_context": e.beyond_trained_context,
        "kv_layout": kv_layout_json(&e.cache),
    });
    if let Some(map) = v.as_object_mut() {
        if pooled {
            map.insert(
                "gpu_memory_utilization".into(),
                c.gpu_memory_utilization.into(),
            );
            map.insert("max_concurrency".into(), r.max_concurrency.into());
            map.insert("kv_tokens".into(), r.kv_tokens.into());
        } else {
            map.insert("gpu_layers".into(), c.gpu_layers.into());
            map.insert("flash_attention".into(), c.flash_attention.into());
        }
    }
    v
}

/// The cache layout's JSON: `kind` (`keys_values` or `latent`), its
/// widths, bytes per token and the sliding-window layers.
fn kv_layout_json(c: &CacheLayout) -> serde_json::Value {
    let mut v = match c.kind {
        CacheKind::KeysValues { heads, head_dim } => {
            serde_json::json!({ "kind": "keys_values", "heads": heads, "head_dim": head_dim })
        }
        CacheKind::Latent { width } => serde_json::json!({ "kind": "latent", "width": width }),
    };
    if let Some(map) = v.as_object_mut() {
        map.insert("bytes_per_token".into(), c.bytes_per_token.into());
        map.insert(
            "sliding".into(),
            c.sliding
                .map(|h| serde_json::json!({ "layers": h.sliding, "of": h.full + h.sliding, "window": h.window }))
                .into(),
        );
        map.insert(
            "full_layers".into(),
            c.full_layers
                .map(|f| serde_json::json!({ "heads": f.heads, "head_dim": f.head_dim, "reused": f.reused, "allocated": f.allocated }))
                .into(),
        );
        map.insert(
            "indexer".into(),
            c.indexer
                .map(|k| serde_json::json!({ "layers": k.layers, "bytes": k.bytes }))
                .into(),
        );
        map.insert(
            "linear".into(),
            c.linear
                .map(|l| serde_json::json!({ "layers": l.layers, "of": l.of, "bytes_per_sequence": l.bytes_per_sequence }))
                .into(),
        );
    }
    v
}

/// The cache layout in words.
fn kv_layout_line(c: &CacheLayout) -> String {
    let kind = match c.kind {
        CacheKind::KeysValues { heads, head_dim } => {
            format!("keys and values of {heads} head(s) × {head_dim} per layer")
        }
        CacheKind::Latent { width } => format!(
            "the compressed latent, {width} values per layer as one head with no separate values"
        ),
    };
    let mut s = format!(
        "KV cache layout: {kind}; {} per token",
        vramfit_core::Bytes(c.bytes_per_token)
    );
    if let Some(k) = c.indexer {
        let _ = write!(
            s,
            " (with the sparse-attention indexer's key, {} bytes, in {} layers)",
            k.bytes, k.layers
        );
    }
    if let Some(h) = c.sliding {
        let what = if h.chunked {
            "attend within chunks and keep at most their"
        } else {
            "keep only their"
        };
        let unit = if h.chunked { "chunk" } else { "window" };
        let _ = write!(
            s,
            "; {} of {} layers {what} {}-token {unit}",
            h.sliding,
            h.full + h.sliding,
            h.window
        );
    }
    if let Some(f) = c.full_layers {
        let _ = write!(
            s,
            "; full-attention layers: {} head(s) × {}",
            f.heads, f.head_dim
        );
        if f.reused > 0 {
            let _ = write!(
                s,
                "; the last {} layers reuse an earlier layer's keys and values{}",
                f.reused,
                if f.allocated {
                    " (SGLang allocates their cache anyway)"
                } else {
                    " and keep none"
                }
            );
        }
    }
    if let Some(l) = c.linear {
        let _ = write!(
            s,
            "; {} of {} layers are {} and keep {} per sequence instead",
            l.layers,
            l.of,
            if l.mamba2 {
                "Mamba-2 state-space layers"
            } else {
                "linear attention"
            },
            vramfit_core::Bytes(l.bytes_per_sequence)
        );
    }
    if let Some((layers, of)) = c.feed_forward {
        let _ = write!(
            s,
            "; {layers} of {of} layers are an MLP or experts alone and keep nothing"
        );
    }
    s
}

/// The table: the setting, the engine's terms, the verdict.
fn table(name: &str, e: &ServeEstimate) -> String {
    let c = &e.config;
    let r = &e.report;
    let mut s = format!(
        "{name}: {} parameters, served by {}\n",
        crate::report::group(e.parameter_count),
        c.engine
    );
    let setting = match c.engine {
        Engine::LlamaCpp => format!(
            "-ngl {}, flash attention {}",
            c.gpu_layers.map_or("all".to_string(), |n| n.to_string()),
            if c.flash_attention { "on" } else { "off" }
        ),
        Engine::Vllm | Engine::Sglang | Engine::Hf => format!(
            "tensor parallel {}, GPU memory utilization {}",
            c.tp, c.gpu_memory_utilization
        ),
    };
    let _ = writeln!(
        s,
        "weights {}, KV cache {}, context {} × {} sequence(s), {setting}\n",
        c.weights.id(),
        c.kv,
        c.context,
        c.concurrency
    );
    let kv_label = match c.engine {
        Engine::Vllm | Engine::Sglang => "KV cache (the whole pool)",
        Engine::LlamaCpp | Engine::Hf => "KV cache",
    };
    let mut rows = vec![
        ("weights (all GPUs and host)", r.weights_bytes),
        (kv_label, r.kv_cache_bytes),
        ("compute buffer / activations", r.compute_buffer_bytes),
    ];
    if c.engine == Engine::LlamaCpp {
        rows.push(("host RAM", r.host_bytes));
    }
    rows.push((
        if e.config.tp > 1 {
            "device used per GPU (nvidia-smi)"
        } else {
            "device used (nvidia-smi)"
        },
        e.device_used_bytes,
    ));
    for (label, v) in rows {
        let _ = writeln!(s, "  {label:<30}{:>12}", v.to_string());
    }
    let _ = writeln!(s, "\n{}", kv_layout_line(&e.cache));
    if let (Some(conc), Some(tokens)) = (r.max_concurrency, r.kv_tokens) {
        let _ = writeln!(
            s,
            "KV pool: {tokens} tokens; maximum concurrency for {} tokens per request: {conc:.2}x",
            c.context
        );
    }
    if let Some(f) = &e.fit {
        let verdict = if f.fits { "fits" } else { "does NOT fit" };
        let what = match c.engine {
            Engine::Vllm | Engine::Sglang => format!(
                "{verdict}: {} sequence(s) of {} tokens in the {} budget",
                c.concurrency, c.context, f.usable_bytes
            ),
            Engine::LlamaCpp | Engine::Hf => format!("{verdict} in {}", f.usable_bytes),
        };
        let _ = writeln!(s, "{}: {what}", f.gpu);
    }
    if let Some(limit) = e.beyond_trained_context {
        let _ = writeln!(s, "warning: {}", crate::words::beyond_trained(limit));
    }
    if let Some(d) = e.decode {
        let _ = writeln!(
            s,
            "decode ≈ {:.0} tokens/s (estimate: {:.0} GB/s ÷ {} read per step × {} sequence(s), the cache at the full context)",
            d.tokens_per_s, d.bandwidth_gbs, d.bytes_per_step, d.sequences
        );
    }
    s
}
