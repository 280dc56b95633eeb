//! The questions a serving setup is asked both ways (`max-batch --mode
//! inference --engine …`): the longest context at a concurrency, the most
//! sequences at a context, and the fewest tensor-parallel GPUs. Each is an
//! exact search over [`estimate`]'s verdict, so the answer fits and one more
//! token, sequence or GPU step would not — one rule, decided in `estimate`.

use super::serving::{MAX_CONCURRENCY, Serving, estimate};
use crate::config::{MAX_DIMENSION, TrainConfig};
use crate::error::{Error, ServeFault};
use crate::gpus::GpuPreset;
use crate::models::ModelSpec;

/// The tensor-parallel degrees tried for the fewest GPUs (vLLM's and
/// SGLang's `--tensor-parallel-size` on one node).
pub const TP_DEGREES: [u64; 4] = [1, 2, 4, 8];

/// The answers for one setting on one GPU model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeAnswers {
    /// The context asked about (tokens per sequence).
    pub context: u64,
    /// The sequences in flight asked about.
    pub concurrency: u64,
    /// The longest context searched: the model's position limit where it
    /// has one, else the largest dimension a setting may name.
    pub context_limit: u64,
    /// The longest context that fits `concurrency` sequences, `None` when
    /// not even one token does.
    pub max_context: Option<u64>,
    /// The most sequences of `context` tokens that fit (vLLM and SGLang:
    /// the floor of their maximum concurrency; llama.cpp: the slots whose
    /// cache and compute buffer fit), `None` when not one does; at most
    /// [`MAX_CONCURRENCY`].
    pub max_concurrency: Option<u64>,
    /// The degrees of [`TP_DEGREES`] the engine can run the model on (vLLM
    /// and SGLang: those dividing its key/value heads; llama.cpp: GPUs its
    /// layers are split over).
    pub tp_degrees: Vec<u64>,
    /// The fewest of `tp_degrees` on which the setting fits, `None` when
    /// none does.
    pub fewest_gpus: Option<u64>,
}

/// Answers the three questions for `serving` and `train` on `gpu`.
///
/// # Errors
/// As [`estimate`] for the setting asked about (every search runs the
/// same setting with one number changed).
///
/// # Example
/// ```
/// use vramfit_core::engines::{Engine, Serving, answer};
/// use vramfit_core::config::{Mode, TrainConfig};
/// let model = vramfit_core::model_preset("llama-3-8b").unwrap().spec;
/// let gpu = vramfit_core::gpu_preset("rtx-4090").unwrap();
/// let train = TrainConfig { mode: Mode::Inference, context: 8192, ..TrainConfig::default() };
/// let vllm = Serving { engine: Engine::Vllm, ..Serving::default() };
/// let a = answer(&model, &gpu, &train, &vllm).unwrap();
/// assert_eq!(a.max_concurrency, Some(6)); // the 6.04x of the estimate, floored
/// assert_eq!(a.fewest_gpus, Some(1));
/// ```
pub fn answer(
    model: &ModelSpec,
    gpu: &GpuPreset,
    train: &TrainConfig,
    serving: &Serving,
) -> Result<ServeAnswers, Error> {
    let asked = estimate(model, Some(gpu), train, serving)?;
    let context_limit = match model {
        ModelSpec::Transformer(t) => t.trained_context().unwrap_or(MAX_DIMENSION),
        _ => MAX_DIMENSION,
    };
    let max_context = largest(context_limit, |n| {
        fits(model, gpu, &with_context(train, n), serving)
    })?;
    let max_concurrency = largest(MAX_CONCURRENCY, |c| {
        let s = Serving {
            concurrency: c,
            ..*serving
        };
        fits(model, gpu, train, &s)
    })?;
    let (tp_degrees, fewest_gpus) = fewest_gpus(model, gpu, train, serving)?;
    Ok(ServeAnswers {
        context: asked.config.context,
        concurrency: serving.concurrency,
        context_limit,
        max_context,
        max_concurrency,
        tp_degrees,
        fewest_gpus,
    })
}

/// `train` with `n` tokens of context (the engines size their cache by
/// `cache_tokens`, the larger of context and sequence).
fn with_context(train: &TrainConfig, n: u64) -> TrainConfig {
    TrainConfig {
        context: n,
        seq: train.seq.min(n),
        ..*train
    }
}

/// [`estimate`]'s verdict on `gpu`.
fn fits(
    model: &ModelSpec,
    gpu: &GpuPreset,
    train: &TrainConfig,
    serving: &Serving,
) -> Result<bool, Error> {
    Ok(estimate(model, Some(gpu), train, serving)?
        .fit
        .is_some_and(|f| f.fits))
}

/// The largest `n` in `1..=limit` for which `pred` holds, `None` when it
/// fails at 1: a binary search, exact because memory never falls as the
/// context or the sequences grow (`pred` true up to the answer, false after).
///
/// # Errors
/// The first error of `pred`.
pub fn largest(
    limit: u64,
    mut pred: impl FnMut(u64) -> Result<bool, Error>,
) -> Result<Option<u64>, Error> {
    if limit == 0 || !pred(1)? {
        return Ok(None);
    }
    if pred(limit)? {
        return Ok(Some(limit));
    }
    // pred(lo) holds, pred(hi) does not.
    let (mut lo, mut hi) = (1, limit);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if pred(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo))
}

/// The degrees of [`TP_DEGREES`] the engine runs the model on, and the
/// fewest that fits.
fn fewest_gpus(
    model: &ModelSpec,
    gpu: &GpuPreset,
    train: &TrainConfig,
    serving: &Serving,
) -> Result<(Vec<u64>, Option<u64>), Error> {
    let mut degrees = Vec::new();
    let mut fewest = None;
    for tp in TP_DEGREES {
        let mut t = *train;
        t.parallel.tp = tp;
        match fits(model, gpu, &t, serving) {
            Err(Error::Serve(ServeFault::KvHeadsSplit { .. } | ServeFault::HeadsSplit { .. })) => {
                continue;
            }
            Err(e) => return Err(e),
            Ok(f) => {
                degrees.push(tp);
                if f && fewest.is_none() {
                    fewest = Some(tp);
                }
            }
        }
    }
    Ok((degrees, fewest))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::config::Mode;
    use crate::models::TransformerSpec;
    use crate::{gpu_preset, model_preset};

    /// `spec` with no context limit, so the searches reach what memory allows.
    fn unlimited(spec: &ModelSpec) -> ModelSpec {
        match spec {
            ModelSpec::Transformer(t) => ModelSpec::Transformer(TransformerSpec {
                context_limit: 0,
                ..t.clone()
            }),
            other => other.clone(),
        }
    }

    fn train(context: u64) -> TrainConfig {
        TrainConfig {
            mode: Mode::Inference,
            context,
            ..TrainConfig::default()
        }
    }

    fn serving(engine: &str, weights: &str, concurrency: u64) -> Serving {
        Serving {
            engine: engine.parse().unwrap(),
            weights: weights.parse().unwrap(),
            concurrency,
            ..Serving::default()
        }
    }

    #[test]
    fn largest_finds_the_last_true_of_a_falling_predicate() {
        for cut in [1, 2, 3, 99, 100] {
            assert_eq!(largest(100, |n| Ok(n <= cut)).unwrap(), Some(cut));
        }
        assert_eq!(largest(100, |_| Ok(false)).unwrap(), None);
        assert_eq!(largest(0, |_| Ok(true)).unwrap(), None);
    }

    #[test]
    fn vllm_and_sglang_answers_are_their_pools_closed_forms() {
        let preset = model_preset("llama-3-8b").unwrap().spec;
        // The pool's closed form, on the model without its 8192-token limit.
        let model = unlimited(&preset);
        let gpu = gpu_preset("rtx-4090").unwrap();
        for (engine, c) in [("vllm", 3), ("sglang", 3), ("vllm", 1)] {
            let s = serving(engine, "native", c);
            let t = train(8192);
            let e = estimate(&model, Some(&gpu), &t, &s).unwrap();
            let tokens = e.report.kv_tokens.unwrap();
            let a = answer(&model, &gpu, &t, &s).unwrap();
            // vLLM: ceil(context / 16) blocks a sequence, blocks / C of them;
            // SGLang: tokens / C.
            let closed = if engine == "vllm" {
                16 * (tokens / 16 / c)
            } else {
                tokens / c
            };
            assert_eq!(a.max_context, Some(closed), "{engine} ×{c}");
            // The preset stops at its config.json's 8192 tokens.
            let capped = answer(&preset, &gpu, &t, &s).unwrap().max_context;
            assert_eq!(capped, Some(closed.min(8192)), "{engine} ×{c}");
            assert_eq!(
                a.max_concurrency,
                Some(e.report.max_concurrency.unwrap().floor() as u64),
                "{engine}"
            );
        }
    }

    #[test]
    fn llama_cpp_answers_fit_and_one_more_does_not() {
        let model = unlimited(&model_preset("llama-3-8b").unwrap().spec);
        let gpu = gpu_preset("rtx-4090").unwrap();
        let s = serving("llama.cpp", "q4_k_m", 2);
        let t = train(8192);
        let a = answer(&model, &gpu, &t, &s).unwrap();
        let n = a.max_context.unwrap();
        assert!(fits(&model, &gpu, &with_context(&t, n), &s).unwrap());
        assert!(n < a.context_limit, "{n} tokens reach the search's end");
        assert!(!fits(&model, &gpu, &with_context(&t, n + 1), &s).unwrap());
        let c = a.max_concurrency.unwrap();
        let at = |c| Serving {
            concurrency: c,
            ..s
        };
        assert!(fits(&model, &gpu, &t, &at(c)).unwrap());
        assert!(!fits(&model, &gpu, &t, &at(c + 1)).unwrap());
        assert_eq!((a.tp_degrees, a.fewest_gpus), (vec![1, 2, 4, 8], Some(1)));
    }

    #[test]
    fn the_fewest_gpus_fit_and_the_degree_below_does_not() {
        let model = model_preset("llama-3-70b").unwrap().spec;
        let gpu = gpu_preset("h100-sxm").unwrap();
        let s = serving("vllm", "native", 4);
        let t = train(8192);
        let a = answer(&model, &gpu, &t, &s).unwrap();
        assert_eq!(a.tp_degrees, TP_DEGREES.to_vec());
        let n = a.fewest_gpus.unwrap();
        assert!(n > 1);
        let on = |tp| {
            let mut t = t;
            t.parallel.tp = tp;
            fits(&model, &gpu, &t, &s).unwrap()
        };
        assert!(on(n));
        assert!(!on(n / 2));
    }
}
