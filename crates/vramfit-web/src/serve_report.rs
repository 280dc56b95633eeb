//! A serving engine's answer for the page: the core's
//! [`vramfit_core::engines::estimate`] on the chosen GPU, the launch
//! command that runs what it estimated, and the terms the engine card lists.

use vramfit_core::engines::{self, Engine, ServeAnswers, ServeEstimate, Serving};
use vramfit_core::{Bytes, Error, GpuPreset, ModelSpec, TrainConfig};

/// One term of the engine card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    /// The weights, all of them (GPU and host).
    Weights,
    /// The KV cache (vLLM's and SGLang's: the whole pool).
    KvCache,
    /// llama.cpp's compute buffer, vLLM's profiled activations.
    ComputeBuffer,
    /// What llama.cpp keeps in host memory.
    Host,
    /// What nvidia-smi shows.
    DeviceUsed,
}

impl Term {
    /// The element id of the term's tile.
    pub fn id(self) -> &'static str {
        match self {
            Term::Weights => "serve-weights-bytes",
            Term::KvCache => "serve-kv",
            Term::ComputeBuffer => "serve-compute",
            Term::Host => "serve-host",
            Term::DeviceUsed => "serve-device",
        }
    }
}

/// The engine card's data.
#[derive(Clone, Debug, PartialEq)]
pub struct ServeView {
    /// The model's display name.
    pub model_name: String,
    /// The GPU preset's display name.
    pub gpu_name: String,
    /// The core's answer.
    pub estimate: ServeEstimate,
    /// The engine's launch command.
    pub launch: String,
    /// The questions asked both ways on this GPU (longest context, most
    /// sequences, fewest GPUs); `None` where a search failed.
    pub answers: Option<ServeAnswers>,
    /// The GPUs the form asks for (GPUs per node × nodes): tensor-parallel
    /// engines use them all; llama.cpp is modelled on one.
    pub gpus: u64,
}

impl ServeView {
    /// Estimates `serving` for `spec` on `gpu`; `source` is what the launch
    /// command loads (the preset id, or `<model>` for an imported
    /// `config.json`, as the CLI writes it).
    ///
    /// # Errors
    /// As [`engines::estimate`] (Hugging Face is the simulation's, not this).
    pub fn new(
        spec: &ModelSpec,
        model_name: &str,
        source: &str,
        gpu: &GpuPreset,
        cfg: &TrainConfig,
        serving: &Serving,
    ) -> Result<ServeView, Error> {
        let estimate = engines::estimate(spec, Some(gpu), cfg, serving)?;
        // Each search re-runs the estimate that just succeeded with one
        // number changed, so it fails only where that number's own range
        // does; the card then leaves the answers out.
        let answers = engines::answer(spec, gpu, cfg, serving).ok();
        // Every engine `estimate` answers for has a launch command.
        let launch =
            vramfit_core::export::launch_command(source, &estimate.config).unwrap_or_default();
        Ok(ServeView {
            model_name: model_name.to_string(),
            gpu_name: gpu.name.to_string(),
            estimate,
            launch,
            answers,
            gpus: cfg.parallel.world(),
        })
    }

    /// Whether the engine sizes a KV pool from a share of the GPU (vLLM, SGLang).
    pub fn pooled(&self) -> bool {
        match self.estimate.config.engine {
            Engine::Vllm | Engine::Sglang => true,
            Engine::LlamaCpp | Engine::Hf => false,
        }
    }

    /// The terms the card lists, with their sizes: host memory for llama.cpp only.
    pub fn terms(&self) -> Vec<(Term, Bytes)> {
        let r = &self.estimate.report;
        let mut terms = vec![
            (Term::Weights, r.weights_bytes),
            (Term::KvCache, r.kv_cache_bytes),
            (Term::ComputeBuffer, r.compute_buffer_bytes),
        ];
        if !self.pooled() {
            terms.push((Term::Host, r.host_bytes));
        }
        terms.push((Term::DeviceUsed, self.estimate.device_used_bytes));
        terms
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::config::Mode;
    use vramfit_core::{gpu_preset, model_preset};

    #[test]
    fn llama_cpp_lists_host_memory_and_vllm_its_pool() {
        let spec = model_preset("llama-3-8b").map(|m| m.spec);
        let gpu = gpu_preset("rtx-4090");
        let (Ok(spec), Ok(gpu)) = (spec, gpu) else {
            panic!("presets");
        };
        let cfg = TrainConfig {
            mode: Mode::Inference,
            context: 8192,
            ..TrainConfig::default()
        };
        let llama = Serving {
            engine: Engine::LlamaCpp,
            weights: "q4_k_m".parse().unwrap_or(engines::ServeWeights::Native),
            ..Serving::default()
        };
        let v = ServeView::new(&spec, "Llama 3 8B", "llama-3-8b", &gpu, &cfg, &llama);
        let v = v.expect("llama.cpp runs Q4_K_M");
        assert!(v.terms().iter().any(|(t, _)| *t == Term::Host));
        assert!(
            v.launch
                .starts_with("llama-server -m llama-3-8b-Q4_K_M.gguf -c 8192")
        );
        let vllm = Serving {
            engine: Engine::Vllm,
            ..Serving::default()
        };
        let v = ServeView::new(&spec, "Llama 3 8B", "llama-3-8b", &gpu, &cfg, &vllm);
        let v = v.expect("vLLM runs 16-bit weights");
        assert!(v.pooled());
        assert!(!v.terms().iter().any(|(t, _)| *t == Term::Host));
        assert!(v.estimate.report.max_concurrency.is_some());
        // The limits card: the context stops at the model's 8192 tokens,
        // six sequences of 8192 fit (vLLM's 6.04x, floored), on one GPU.
        let a = v.answers.as_ref().expect("the searches run");
        assert_eq!(
            (a.max_context, a.max_concurrency, a.fewest_gpus),
            (Some(8192), Some(6), Some(1))
        );
        assert!(
            v.launch
                .starts_with("vllm serve llama-3-8b --max-model-len 8192")
        );
    }
}
