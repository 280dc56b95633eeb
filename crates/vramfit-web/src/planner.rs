//! The planner panel's model: plans that reach a target effective batch on
//! the chosen GPUs (the core's [`vramfit_core::plan::plan`]), the batch-size
//! advice that goes with them, and their display values in either language
//! (the core's trade-offs and advice worded by [`crate::messages`]).

use crate::i18n::{Key, Lang, t, tf};
use crate::messages::tradeoff;
use crate::prefs::Units;
use crate::present::{bytes, group_digits};
use vramfit_core::plan::{
    Advice, Plan, PlanRequest, PlanResult, SHOWN, Trade, advice, plan, uses_batchnorm,
};
use vramfit_core::{Error, GpuPreset, ModelSpec, Overheads, TrainConfig};

/// Memory kept free on each GPU by the planner, as a fraction of what is usable
/// (the CLI's `--margin` default).
pub const MARGIN: f64 = vramfit_core::overheads::SAFETY_MARGIN;

/// What the planner found for one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Plans {
    /// The effective batch asked for (all GPUs).
    pub target: u64,
    /// The plans, fastest first, or the core's refusal.
    pub result: Result<PlanResult, Error>,
    /// Batch-size advice for the target and the top plan's micro-batch.
    pub advice: Vec<Advice>,
}

impl Plans {
    /// Plans for `target` samples per step with `base`'s model, sizes and layout.
    pub fn find(spec: &ModelSpec, base: &TrainConfig, gpu: &GpuPreset, target: u64) -> Plans {
        let req = PlanRequest {
            base: *base,
            target_batch: target,
            gpus_per_node: base.parallel.gpus_per_node,
            nodes: base.parallel.nodes,
            margin: MARGIN,
            dataset_samples: 0,
            max_plans: SHOWN,
            measured: None,
        };
        let result = plan(spec, gpu, &Overheads::for_gpu(gpu), &req);
        let micro = result
            .as_ref()
            .ok()
            .and_then(|r| r.plans.first())
            .map_or(1, |p| p.config.batch);
        Plans {
            target,
            result,
            advice: advice(target, micro, uses_batchnorm(spec)),
        }
    }
}

/// One plan as the panel shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanRow {
    /// Its configuration.
    pub config: TrainConfig,
    /// "micro-batch 4 × 8 steps" and the settings it changes.
    pub title: String,
    /// Device memory per GPU.
    pub memory: String,
    /// Estimated time per optimizer step.
    pub step: String,
    /// What it trades for fitting.
    pub tradeoff: String,
}

/// The display rows of `plans`.
pub fn rows(plans: &[Plan], timed: bool, lang: Lang, units: Units) -> Vec<PlanRow> {
    // Without the GPU's throughput, times are relative to the fastest plan.
    let fastest = plans
        .first()
        .map_or(1.0, |p| p.step_seconds.max(f64::MIN_POSITIVE));
    plans
        .iter()
        .map(|p| {
            let c = &p.config;
            let mut title = vec![tf(
                lang,
                Key::PlanMicro,
                &[&group_digits(c.batch), &group_digits(c.grad_accum)],
            )];
            title.push(crate::labels::precision(c.precision, lang).to_string());
            if p.tradeoffs.contains(&Trade::Recompute) {
                title.push(t(lang, Key::PlanCheckpointing).to_string());
            }
            title.push(crate::labels::optimizer(c.optimizer, lang).to_string());
            // The strategy and the offload as the core's trade-offs name them.
            title.extend(p.tradeoffs.iter().filter_map(|x| match x {
                Trade::Strategy { strategy } => Some(strategy.id().to_string()),
                Trade::Offload => Some(t(lang, Key::PlanOffload).to_string()),
                Trade::Accumulation { .. }
                | Trade::NoAccumulation { .. }
                | Trade::Fp32
                | Trade::Amp
                | Trade::AmpFp16
                | Trade::PureHalf
                | Trade::Bf16Updates
                | Trade::Recompute
                | Trade::EightBitAdam => None,
            }));
            if c.parallel.ep > 1 {
                title.push(tf(
                    lang,
                    Key::PlanExpertParallel,
                    &[&c.parallel.ep.to_string()],
                ));
            }
            if c.parallel.etp > 0 {
                title.push(tf(
                    lang,
                    Key::PlanExpertTensorParallel,
                    &[&c.parallel.etp.to_string()],
                ));
            }
            PlanRow {
                config: *c,
                title: title.join(" · "),
                memory: tf(lang, Key::PlanPerGpu, &[&bytes(p.device_used_bytes, units)]),
                step: if timed {
                    tf(lang, Key::PlanStep, &[&seconds(p.step_seconds, lang)])
                } else {
                    tf(
                        lang,
                        Key::PlanRelative,
                        &[&format!("{:.2}", p.step_seconds / fastest)],
                    )
                },
                tradeoff: tradeoff(&p.tradeoffs, lang),
            }
        })
        .collect()
}

/// A duration: milliseconds below a second, else seconds (minutes beyond 100 s).
pub fn seconds(s: f64, lang: Lang) -> String {
    let (value, unit) = if s < 1.0 {
        (format!("{:.0}", s * 1000.0), t(lang, Key::UnitMs))
    } else if s < 100.0 {
        (format!("{s:.2}"), t(lang, Key::UnitS))
    } else {
        (format!("{:.1}", s / 60.0), t(lang, Key::UnitMin))
    };
    format!("{value} {unit}")
}

/// The export formats of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// DeepSpeed's `ds_config.json`.
    DeepSpeed,
    /// Hugging Face `TrainingArguments` keyword arguments (JSON).
    HuggingFace,
    /// An Accelerate config (YAML).
    Accelerate,
    /// A plain PyTorch training loop.
    PyTorch,
    /// Megatron-LM's `pretrain_gpt.py` arguments (the one with expert settings).
    Megatron,
}

impl Export {
    /// Every format, in the order the panel offers them.
    pub const ALL: [Export; 5] = [
        Export::DeepSpeed,
        Export::HuggingFace,
        Export::Accelerate,
        Export::PyTorch,
        Export::Megatron,
    ];

    /// The format's name.
    pub fn label(self, lang: Lang) -> &'static str {
        t(
            lang,
            match self {
                Export::DeepSpeed => Key::ExportDeepSpeed,
                Export::HuggingFace => Key::ExportHf,
                Export::Accelerate => Key::ExportAccelerate,
                Export::PyTorch => Key::ExportPyTorch,
                Export::Megatron => Key::ExportMegatron,
            },
        )
    }

    /// A stable id for element ids and tests.
    pub fn id(self) -> &'static str {
        match self {
            Export::DeepSpeed => "deepspeed",
            Export::HuggingFace => "hf",
            Export::Accelerate => "accelerate",
            Export::PyTorch => "pytorch",
            Export::Megatron => "megatron",
        }
    }

    /// The exported text for `c`.
    pub fn text(self, c: &TrainConfig) -> String {
        use vramfit_core::export;
        match self {
            Export::DeepSpeed => {
                serde_json::to_string_pretty(&export::deepspeed(c)).unwrap_or_default()
            }
            Export::HuggingFace => {
                serde_json::to_string_pretty(&export::hf_training_arguments(c)).unwrap_or_default()
            }
            Export::Accelerate => export::accelerate_yaml(c),
            Export::PyTorch => export::pytorch_snippet(c),
            Export::Megatron => export::megatron_args(c),
        }
    }

    /// What a JSON export cannot say about `c` (it has no comments): the
    /// experts' split ([`vramfit_core::export::expert_layout`]); the text
    /// exports say it in their own comments.
    pub fn note(self, c: &TrainConfig, lang: Lang) -> Option<String> {
        match self {
            Export::DeepSpeed | Export::HuggingFace => {
                vramfit_core::export::expert_layout(c).map(|l| {
                    tf(
                        lang,
                        Key::ExportNoExperts,
                        &[&l.ep.to_string(), &l.etp.to_string()],
                    )
                })
            }
            Export::Accelerate | Export::PyTorch | Export::Megatron => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::advice_text;
    use vramfit_core::{Precision, gpu_preset, model_preset};

    #[test]
    fn plans_for_a_model_that_does_not_fit_make_it_fit_and_read_in_both_languages() {
        let spec = model_preset("gpt2-medium").unwrap().spec;
        let gpu = gpu_preset("rtx-3060-12gb").unwrap();
        let base = TrainConfig {
            batch: 32,
            seq: 1024,
            ..TrainConfig::default()
        };
        let found = Plans::find(&spec, &base, &gpu, 32);
        let result = found.result.as_ref().unwrap();
        assert!(!result.plans.is_empty());
        for lang in [Lang::En, Lang::Zh] {
            let rows = rows(&result.plans, result.timed, lang, Units::Binary);
            assert_eq!(rows.len(), result.plans.len());
            assert!(rows.iter().all(|r| !r.title.is_empty()
                && !r.tradeoff.is_empty()
                && r.memory.contains("GiB")));
        }
        // The Chinese trade-off carries no English fragment of the core's sentence.
        let zh = tradeoff(&result.plans[0].tradeoffs, Lang::Zh);
        assert!(
            !zh.contains("micro-batch") && !zh.contains("accumulation"),
            "{zh}"
        );
        assert!(found.advice.iter().any(|a| a.id() == "lr-scaling"));
        for a in &found.advice {
            assert_ne!(
                advice_text(a, Lang::Zh),
                advice_text(a, Lang::En),
                "{} is not translated",
                a.id()
            );
        }
    }

    #[test]
    fn gpu_rows_and_plans_name_their_expert_parallel_degree() {
        let option = vramfit_core::plan::GpuOption {
            gpu: "h200".into(),
            name: "H200 SXM 141GB".into(),
            gpus: 8,
            ep: 8,
            etp: 0,
            max_batch: 14,
            device_used_bytes: vramfit_core::Bytes(90 << 30),
            fits: true,
            memory_bytes: vramfit_core::Bytes(141 << 30),
        };
        let (rows, _) = gpu_rows(std::slice::from_ref(&option), Units::Binary, Lang::En);
        assert_eq!(rows[0].title, "8 × H200 SXM 141GB, experts over 8");
        assert_eq!(rows[0].ep, 8);
        let (zh, _) = gpu_rows(std::slice::from_ref(&option), Units::Binary, Lang::Zh);
        assert_eq!(zh[0].title, "8 × H200 SXM 141GB，专家切分到 8 张");
        let split = vramfit_core::plan::GpuOption { etp: 2, ..option };
        let (rows, _) = gpu_rows(&[split], Units::Binary, Lang::En);
        assert_eq!(
            rows[0].title,
            "8 × H200 SXM 141GB, experts over 8, each split over 2"
        );
        assert_eq!((rows[0].ep, rows[0].etp), (8, 2));
    }

    #[test]
    fn every_export_is_non_empty_and_json_exports_parse() {
        let c = TrainConfig {
            batch: 4,
            grad_accum: 8,
            precision: Precision::AmpBf16,
            ..TrainConfig::default()
        };
        for e in Export::ALL {
            let text = e.text(&c);
            assert!(!text.is_empty(), "{}", e.id());
            if matches!(e, Export::DeepSpeed | Export::HuggingFace) {
                assert!(
                    serde_json::from_str::<serde_json::Value>(&text).is_ok(),
                    "{}",
                    e.id()
                );
            }
        }
        // With the experts split, the JSON exports say what they cannot carry.
        let split = TrainConfig {
            parallel: vramfit_core::parallel::Parallel {
                gpus_per_node: 8,
                ep: 8,
                ..c.parallel
            },
            ..c
        };
        assert!(
            Export::Megatron
                .text(&split)
                .contains("--expert-model-parallel-size 8")
        );
        for e in [Export::DeepSpeed, Export::HuggingFace] {
            assert!(e.note(&c, Lang::En).is_none(), "{}", e.id());
            let note = e.note(&split, Lang::Zh).unwrap_or_default();
            assert!(note.contains('8') && note.contains("Megatron-LM"), "{note}");
        }
        assert_eq!(seconds(0.25, Lang::En), "250 ms");
        assert_eq!(seconds(2.5, Lang::En), "2.50 s");
    }
}

/// Rows of the "which GPUs" card shown at most: the smallest options that
/// take the configured batch.
pub const GPU_ROWS: usize = 10;

/// The "which GPUs" answer for one configuration: every GPU preset, alone or
/// 2, 4 or 8 of them, on which it fits at some batch, least memory first
/// (the core's [`vramfit_core::plan::which_gpus`]), or the core's refusal.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuOptions {
    /// The micro-batch asked about.
    pub batch: u64,
    /// The options, or why there are none.
    pub result: Result<Vec<vramfit_core::plan::GpuOption>, Error>,
}

impl GpuOptions {
    /// The options for `cfg` (its strategy for several GPUs, else FSDP).
    pub fn find(spec: &ModelSpec, cfg: &TrainConfig) -> GpuOptions {
        let result = vramfit_core::plan::which_gpus(spec, cfg, &Overheads::default());
        GpuOptions {
            batch: cfg.batch,
            result,
        }
    }
}

/// One row of the "which GPUs" card.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuRow {
    /// GPU preset id.
    pub gpu: String,
    /// How many.
    pub count: u64,
    /// "2 × A100 40GB SXM".
    pub title: String,
    /// Device memory per GPU at the configured batch, of the GPU's memory.
    pub memory: String,
    /// The largest micro-batch that fits per GPU.
    pub max_batch: String,
    /// The expert-parallel degree the row assumes (1: none).
    pub ep: u64,
    /// The expert tensor-parallel degree the row assumes (0: as tp).
    pub etp: u64,
}

/// The options that take the configured batch, smallest first, at most
/// [`GPU_ROWS`], and those that fit only a smaller batch (shown on request).
pub fn gpu_rows(
    options: &[vramfit_core::plan::GpuOption],
    units: Units,
    lang: Lang,
) -> (Vec<GpuRow>, Vec<GpuRow>) {
    let row = |o: &vramfit_core::plan::GpuOption| GpuRow {
        gpu: o.gpu.to_string(),
        count: o.gpus,
        title: match (o.gpus, o.ep, o.etp) {
            (1, _, _) => o.name.to_string(),
            (n, 1, 0) => format!("{n} × {}", o.name),
            (n, ep, 0) => tf(
                lang,
                Key::GpusWithEp,
                &[&n.to_string(), &o.name, &ep.to_string()],
            ),
            (n, ep, etp) => tf(
                lang,
                Key::GpusWithEpEtp,
                &[&n.to_string(), &o.name, &ep.to_string(), &etp.to_string()],
            ),
        },
        memory: tf(
            lang,
            Key::GpuMemoryOf,
            &[
                &bytes(o.device_used_bytes, units),
                &crate::present::capacity(o.memory_bytes, units),
            ],
        ),
        max_batch: group_digits(o.max_batch),
        ep: o.ep,
        etp: o.etp,
    };
    let rows = options
        .iter()
        .filter(|o| o.fits)
        .take(GPU_ROWS)
        .map(row)
        .collect();
    let more = options.iter().filter(|o| !o.fits).map(row).collect();
    (rows, more)
}
