//! The serving engine's part of the form (inference mode): the engine and,
//! per engine, its weights, KV cache type, concurrency, GPU memory
//! utilization (vLLM, SGLang) and GPU layers (llama.cpp), kept as typed,
//! and their validation into the core's [`Serving`].
//!
//! Like [`crate::inputs::Inputs::rest`], [`ServeInputs::rest`] keeps a
//! link's serving settings: the fields the form shows override them, the
//! others (another engine's, or every one outside inference mode) are used
//! as the link set them, so the core names what does not apply instead of
//! the page dropping it.

use crate::fields::{Field, FieldErrors, parse_count, parse_fraction, parse_gpu_layers};
use vramfit_core::config::WeightFormat;
use vramfit_core::engines::mix::GgufMix;
use vramfit_core::engines::serving::{parse_weights, weights_id};
use vramfit_core::engines::{Engine, KvDtype, Serving};
use vramfit_core::share::ShareState;

/// The `--weights` ids offered with vLLM and SGLang: 16-bit, their
/// quantized checkpoints, bitsandbytes' NF4 (`int4`).
const TORCH_WEIGHTS: &[&str] = &["native", "fp8", "awq-int4", "gptq-int4", "int4", "mxfp4"];

/// The KV cache types offered with vLLM and SGLang.
const TORCH_KV: &[KvDtype] = &[KvDtype::F16, KvDtype::Bf16, KvDtype::Fp8];

/// The KV cache types offered with llama.cpp (`--cache-type-k/-v`).
const LLAMA_KV: &[KvDtype] = &[KvDtype::F16, KvDtype::Bf16, KvDtype::Q8_0, KvDtype::Q4_0];

/// The `--weights` ids offered with `engine`, in the order shown: for
/// llama.cpp `native` (an f16 or bf16 GGUF, as the precision says) and the
/// quantizing `llama-quantize` mixes; none for Hugging Face, whose weights
/// are the training formats.
pub fn weight_ids(engine: Engine) -> Vec<&'static str> {
    match engine {
        Engine::Hf => Vec::new(),
        Engine::Vllm | Engine::Sglang => TORCH_WEIGHTS.to_vec(),
        Engine::LlamaCpp => std::iter::once("native")
            .chain(
                GgufMix::ALL
                    .iter()
                    .filter(|m| !matches!(m, GgufMix::F16 | GgufMix::Bf16))
                    .map(|m| m.id()),
            )
            .collect(),
    }
}

/// The KV cache types offered with `engine` (Hugging Face's cache follows
/// the precision: none).
pub fn kv_choices(engine: Engine) -> &'static [KvDtype] {
    match engine {
        Engine::Hf => &[],
        Engine::Vllm | Engine::Sglang => TORCH_KV,
        Engine::LlamaCpp => LLAMA_KV,
    }
}

/// The serving settings as typed.
#[derive(Clone, Debug, PartialEq)]
pub struct ServeInputs {
    /// The engine (shown in inference mode).
    pub engine: Engine,
    /// The weights, as a `--weights` id (engines other than Hugging Face).
    pub weights: String,
    /// The KV cache's type (engines other than Hugging Face).
    pub kv: KvDtype,
    /// Sequences in flight, as typed.
    pub concurrency: String,
    /// GPU memory utilization, as typed (vLLM, SGLang).
    pub utilization: String,
    /// llama.cpp's `-ngl`, as typed; blank offloads every layer.
    pub gpu_layers: String,
    /// The link's serving settings, for those the form does not show.
    pub rest: Serving,
}

impl Default for ServeInputs {
    fn default() -> Self {
        ServeInputs::from_share(&ShareState::default())
    }
}

impl ServeInputs {
    /// The fields for a share link's serving settings.
    pub fn from_share(share: &ShareState) -> ServeInputs {
        let s = &share.serve;
        ServeInputs {
            engine: s.engine,
            weights: weights_id(share.train.weights, s.weights).to_string(),
            kv: s.kv,
            concurrency: s.concurrency.to_string(),
            utilization: s.gpu_memory_utilization.to_string(),
            gpu_layers: s.gpu_layers.map_or_else(String::new, |n| n.to_string()),
            rest: *s,
        }
    }

    /// The count fields the engine's settings show (in inference mode), in form order.
    pub fn fields(&self) -> Vec<Field> {
        match self.engine {
            Engine::Hf => Vec::new(),
            Engine::Vllm | Engine::Sglang => vec![Field::Concurrency, Field::Utilization],
            Engine::LlamaCpp => vec![Field::Concurrency, Field::GpuLayers],
        }
    }

    /// The share keys the form shows (in inference mode).
    pub fn keys(&self) -> Vec<&'static str> {
        let own: &[&str] = match self.engine {
            Engine::Hf => &[],
            Engine::Vllm | Engine::Sglang => &["w", "kv", "cc", "gu"],
            Engine::LlamaCpp => &["w", "kv", "cc", "gl"],
        };
        std::iter::once("en").chain(own.iter().copied()).collect()
    }

    /// The raw text of a serving field; `None` for the others.
    pub fn get(&self, field: Field) -> Option<&str> {
        match field {
            Field::Concurrency => Some(&self.concurrency),
            Field::Utilization => Some(&self.utilization),
            Field::GpuLayers => Some(&self.gpu_layers),
            _ => None,
        }
    }

    /// The slot of a serving field's text; `None` for the others.
    pub fn slot(&mut self, field: Field) -> Option<&mut String> {
        match field {
            Field::Concurrency => Some(&mut self.concurrency),
            Field::Utilization => Some(&mut self.utilization),
            Field::GpuLayers => Some(&mut self.gpu_layers),
            _ => None,
        }
    }

    /// Picks an engine. The weights and KV type the user chose carry over
    /// when the new engine offers them, else they return to the checkpoint's
    /// 16 bits and f16 (a GGUF mix means nothing to vLLM).
    pub fn set_engine(&mut self, engine: Engine) {
        self.engine = engine;
        if !weight_ids(engine).contains(&self.weights.as_str()) {
            self.weights = "native".to_string();
        }
        if !kv_choices(engine).contains(&self.kv) {
            self.kv = KvDtype::F16;
        }
    }

    /// The serving settings, and the training weight format the weights
    /// choice sets (`int4` is NF4); `shown` says whether the form shows the
    /// engine (inference mode). Invalid fields are added to `errors`.
    pub fn settings(
        &self,
        shown: bool,
        errors: &mut FieldErrors,
    ) -> (Option<WeightFormat>, Serving) {
        let mut s = self.rest;
        if !shown {
            return (None, s);
        }
        s.engine = self.engine;
        if self.engine == Engine::Hf {
            return (None, s);
        }
        s.kv = self.kv;
        // The select offers only ids `parse_weights` reads; a link's
        // unreadable one was refused when it was decoded.
        let weights = parse_weights(&self.weights).map(|(train, serve)| {
            s.weights = serve;
            train
        });
        for field in self.fields() {
            let raw = self.get(field).unwrap_or_default();
            let read = match field {
                Field::Utilization => parse_fraction(raw).map(|u| s.gpu_memory_utilization = u),
                Field::GpuLayers => parse_gpu_layers(raw).map(|n| s.gpu_layers = n),
                _ => parse_count(field, raw).map(|n| s.concurrency = n),
            };
            if let Err(e) = read {
                errors.set(field, e);
            }
        }
        (weights, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::engines::ServeWeights;

    #[test]
    fn every_offered_choice_is_one_the_links_read() {
        for &engine in Engine::ALL {
            for id in weight_ids(engine) {
                let parsed = parse_weights(id);
                assert!(parsed.is_some(), "{engine}: {id}");
                let gguf = parsed.is_some_and(|(_, w)| matches!(w, ServeWeights::Gguf(_)));
                assert_eq!(gguf, engine == Engine::LlamaCpp && id != "native", "{id}");
            }
        }
    }

    #[test]
    fn switching_engines_keeps_what_the_new_one_offers() {
        let mut s = ServeInputs::default();
        s.set_engine(Engine::LlamaCpp);
        s.weights = "q4_k_m".into();
        s.kv = KvDtype::Q8_0;
        s.set_engine(Engine::Vllm);
        assert_eq!((s.weights.as_str(), s.kv), ("native", KvDtype::F16));
        s.weights = "fp8".into();
        s.kv = KvDtype::Fp8;
        s.set_engine(Engine::Sglang);
        assert_eq!((s.weights.as_str(), s.kv), ("fp8", KvDtype::Fp8));
    }

    #[test]
    fn hidden_settings_are_the_links() {
        let mut s = ServeInputs {
            concurrency: "x".into(),
            ..ServeInputs::default()
        };
        s.rest.gpu_layers = Some(3);
        let mut errors = FieldErrors::default();
        // Outside inference mode nothing is read: the link's settings stand.
        assert_eq!(s.settings(false, &mut errors), (None, s.rest));
        assert!(errors.is_empty());
        s.set_engine(Engine::Vllm);
        let (_, serving) = s.settings(true, &mut errors);
        assert_eq!(serving.gpu_layers, Some(3), "not vLLM's: the link's");
        assert!(errors.get(Field::Concurrency).is_some());
    }
}
