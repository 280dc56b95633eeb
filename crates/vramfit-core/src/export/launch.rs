//! The engines' launch commands for a serving estimate: `vllm serve`,
//! `llama-server` and SGLang's `launch_server`, with the flags that set
//! what the estimate assumed (each flag as the engine's `--help` names it).

use crate::engines::mix::GgufMix;
use crate::engines::{Engine, KvDtype, ServeConfig, ServeWeights};

/// `-ngl` that offloads every layer and the output layer of any model
/// (llama.cpp clamps it to the layer count plus one).
const ALL_LAYERS: u64 = 999;

/// `s` as one shell word: as is when it is plain, else single-quoted.
fn word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@+=,".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// vLLM's and SGLang's `--quantization` for a weight format, if it needs one.
fn quantization(w: ServeWeights) -> Option<&'static str> {
    match w {
        ServeWeights::Fp8 => Some("fp8"),
        ServeWeights::AwqInt4 => Some("awq"),
        ServeWeights::GptqInt4 => Some("gptq"),
        ServeWeights::Nf4 => Some("bitsandbytes"),
        // gpt-oss's checkpoint declares its MXFP4 experts (`quantization_config`).
        ServeWeights::Native | ServeWeights::Mxfp4 | ServeWeights::Gguf(_) => None,
    }
}

/// The launch command of `c.engine` for `model` (a Hugging Face repository
/// or a local directory; for llama.cpp the GGUF file is named after it and
/// the mix), one line; `None` for Hugging Face `generate`, which has none.
///
/// # Example
/// ```
/// use vramfit_core::engines::{Engine, ServeConfig};
/// use vramfit_core::export::launch_command;
/// let c = ServeConfig { context: 8192, ..ServeConfig::default() };
/// assert_eq!(
///     launch_command("llama-3-8b", &c).unwrap(),
///     "llama-server -m llama-3-8b-Q4_K_M.gguf -c 8192 -np 1 -ngl 999 --cache-type-k f16 --cache-type-v f16 -fa off"
/// );
/// let v = ServeConfig { engine: Engine::Vllm, weights: "fp8".parse().unwrap(), ..c };
/// assert_eq!(
///     launch_command("meta-llama/Meta-Llama-3-8B", &v).unwrap(),
///     "vllm serve meta-llama/Meta-Llama-3-8B --max-model-len 8192 --gpu-memory-utilization 0.9 --tensor-parallel-size 1 --kv-cache-dtype auto --quantization fp8"
/// );
/// ```
pub fn launch_command(model: &str, c: &ServeConfig) -> Option<String> {
    match c.engine {
        Engine::Vllm => Some(vllm_serve(model, c)),
        Engine::Sglang => Some(sglang_launch(model, c)),
        Engine::LlamaCpp => Some(llama_server(model, c)),
        Engine::Hf => None,
    }
}

/// `vllm serve` (`vllm/engine/arg_utils.py`): `--kv-cache-dtype auto`
/// follows the model's dtype.
pub fn vllm_serve(model: &str, c: &ServeConfig) -> String {
    let kv = match c.kv {
        KvDtype::Fp8 => "fp8",
        KvDtype::F16 | KvDtype::Bf16 | KvDtype::Q8_0 | KvDtype::Q4_0 => "auto",
    };
    let mut s = format!(
        "vllm serve {} --max-model-len {} --gpu-memory-utilization {} --tensor-parallel-size {} --kv-cache-dtype {kv}",
        word(model),
        c.context,
        c.gpu_memory_utilization,
        c.tp
    );
    if let Some(q) = quantization(c.weights) {
        s.push_str(&format!(" --quantization {q}"));
    }
    s
}

/// SGLang's `python -m sglang.launch_server`
/// (`python/sglang/srt/server_args.py`).
pub fn sglang_launch(model: &str, c: &ServeConfig) -> String {
    let kv = match c.kv {
        KvDtype::Fp8 => "fp8_e4m3",
        KvDtype::F16 | KvDtype::Bf16 | KvDtype::Q8_0 | KvDtype::Q4_0 => "auto",
    };
    let mut s = format!(
        "python -m sglang.launch_server --model-path {} --context-length {} --mem-fraction-static {} --tp {} --kv-cache-dtype {kv}",
        word(model),
        c.context,
        c.gpu_memory_utilization,
        c.tp
    );
    if let Some(q) = quantization(c.weights) {
        s.push_str(&format!(" --quantization {q}"));
    }
    s
}

/// `llama-server` (`tools/server`, `common/arg.cpp`): `-c` is the whole
/// cache, which `-np` slots share, so it is the context times the slots.
pub fn llama_server(model: &str, c: &ServeConfig) -> String {
    let mix = match c.weights {
        ServeWeights::Gguf(m) => m,
        // Only GGUF runs on llama.cpp (`serve` refuses the others).
        ServeWeights::Native
        | ServeWeights::Fp8
        | ServeWeights::AwqInt4
        | ServeWeights::GptqInt4
        | ServeWeights::Nf4
        | ServeWeights::Mxfp4 => GgufMix::F16,
    };
    let file = format!("{model}-{}.gguf", mix.id().to_ascii_uppercase());
    let kv = c.kv.id();
    // Over several GPUs: the layers split evenly (its default split mode,
    // named; `CUDA_VISIBLE_DEVICES` picks which GPUs).
    let split = if c.tp > 1 {
        format!(
            " --split-mode layer --tensor-split {}",
            vec!["1"; usize::try_from(c.tp).unwrap_or(1)].join(",")
        )
    } else {
        String::new()
    };
    format!(
        "llama-server -m {} -c {} -np {} -ngl {} --cache-type-k {kv} --cache-type-v {kv} -fa {}{split}",
        word(&file),
        c.context.saturating_mul(c.concurrency),
        c.concurrency,
        c.gpu_layers.unwrap_or(ALL_LAYERS),
        if c.flash_attention { "on" } else { "off" }
    )
}
