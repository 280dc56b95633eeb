//! Why a serving engine cannot run a setting ([`ServeFault`]), in the
//! page's languages. The core names engines, formats and flags by their
//! ids; here they become the form's names (an engine's label, a field's).

use crate::fields::Field;
use crate::i18n::{Key, Lang, t, tf};
use crate::labels;
use crate::serving::kv_choices;
use vramfit_core::config::Mode;
use vramfit_core::engines::Engine;
use vramfit_core::error::ServeFault;

/// The engine an id names, as the form shows it (the id if none does).
fn engine_name(id: &str, lang: Lang) -> String {
    id.parse::<Engine>()
        .map_or_else(|_| id.to_string(), |e| labels::engine(e, lang).to_string())
}

/// A flag the core names, as the form's field label where the form has one.
fn flag_name(flag: &str, lang: Lang) -> String {
    let field = match flag {
        "--concurrency" => Some(Field::Concurrency),
        "--gpu-memory-utilization" => Some(Field::Utilization),
        "--gpu-layers" => Some(Field::GpuLayers),
        _ => None,
    };
    match (field, flag) {
        (Some(f), _) => t(lang, f.label()).to_string(),
        (None, "--tp") => t(lang, Key::TensorParallel).to_string(),
        (None, other) => other.to_string(),
    }
}

/// Why the engine cannot run the setting, as a sentence in `lang`.
pub fn serve_fault(f: &ServeFault, lang: Lang) -> String {
    let n = |v: &u64| v.to_string();
    match f {
        ServeFault::Weights {
            engine, weights, ..
        } => {
            let key = match engine.parse::<Engine>() {
                Ok(Engine::LlamaCpp) => Key::ServeWeightsGguf,
                Ok(Engine::Hf) => Key::ServeWeightsHf,
                Ok(Engine::Vllm | Engine::Sglang) | Err(_) => Key::ServeWeightsTorch,
            };
            tf(lang, key, &[&engine_name(engine, lang), weights])
        }
        ServeFault::KvDtype { engine, kv, .. } => match engine.parse::<Engine>() {
            Ok(Engine::Hf) => tf(lang, Key::ServeKvHf, &[kv]),
            Ok(e) => {
                let accepted = kv_choices(e)
                    .iter()
                    .map(|k| k.id())
                    .collect::<Vec<_>>()
                    .join(", ");
                tf(
                    lang,
                    Key::ServeKvRefused,
                    &[&engine_name(engine, lang), kv, &accepted],
                )
            }
            Err(_) => tf(lang, Key::ServeKvRefused, &[engine, kv, ""]),
        },
        ServeFault::NoFp8 { gpu } => tf(lang, Key::ServeNoFp8, &[gpu]),
        ServeFault::NotADecoder => t(lang, Key::ServeNotADecoder).to_string(),
        ServeFault::NoGguf { model } => tf(lang, Key::ServeNoGguf, &[model]),
        ServeFault::NeedsGpu { engine } => {
            tf(lang, Key::ServeNeedsGpu, &[&engine_name(engine, lang)])
        }
        ServeFault::NeedsInference { engine, mode } => {
            let mode = mode
                .parse::<Mode>()
                .map_or_else(|_| mode.to_string(), |m| labels::mode(m, lang).to_string());
            tf(
                lang,
                Key::ServeNeedsInference,
                &[&engine_name(engine, lang), &mode],
            )
        }
        ServeFault::NotForEngine { flag, engine, .. } => match (*flag, *engine) {
            ("--concurrency", "hf") => t(lang, Key::ServeHfConcurrency).to_string(),
            (flag, engine) => tf(
                lang,
                Key::ServeNotFor,
                &[&flag_name(flag, lang), &engine_name(engine, lang)],
            ),
        },
        ServeFault::KvNeedsFlash { kv } => tf(lang, Key::ServeKvNeedsFlash, &[kv]),
        ServeFault::GpuLayers {
            gpu_layers,
            layers,
            most,
        } => tf(
            lang,
            Key::ServeGpuLayers,
            &[&n(gpu_layers), &n(layers), &n(most)],
        ),
        ServeFault::ContextAboveLimit {
            engine,
            context,
            limit,
            override_var,
        } => tf(
            lang,
            Key::ServeContextLimit,
            &[
                &engine_name(engine, lang),
                &n(context),
                &n(limit),
                override_var,
            ],
        ),
        ServeFault::KvHeadsSplit { kv_heads, tp } => {
            tf(lang, Key::ServeKvHeads, &[&n(kv_heads), &n(tp)])
        }
        ServeFault::HeadsSplit { heads, tp } => tf(lang, Key::ServeHeads, &[&n(heads), &n(tp)]),
    }
}
