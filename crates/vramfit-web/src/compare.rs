//! The comparison strip's rows: each technique the core compared, what it
//! leads to in device memory and how much that saves, as display values.

use crate::i18n::{Key, t, tf};
use crate::labels;
use crate::prefs::Prefs;
use crate::present;
use crate::report::Report;
use vramfit_core::explore::Technique;
use vramfit_core::{Bytes, TrainConfig};

/// Whether a technique saves memory, costs memory or changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// It lowers device memory.
    Saves,
    /// It raises device memory.
    Costs,
    /// It leaves device memory as it is.
    Same,
}

/// One technique, ready to show.
#[derive(Clone, Debug, PartialEq)]
pub struct TechniqueRow {
    /// Stable id (`amp`, `checkpointing`, `accumulation`, `optimizer-8bit`).
    pub id: &'static str,
    /// Its name.
    pub name: &'static str,
    /// What else changes, if anything ("micro-batch 2, same effective batch").
    pub detail: Option<String>,
    /// Device memory with the technique.
    pub device: String,
    /// Bytes saved (negative: costs).
    pub saved: i128,
    /// How it changes memory.
    pub effect: Effect,
    /// "saves 2.31 GiB (24%)", "costs 12.0 MiB more", "no change".
    pub change: String,
    /// Device memory relative to the current configuration's, in `[0, 1]`.
    pub share: f64,
    /// Whether the result fits on the chosen GPU.
    pub fits: bool,
    /// The configuration to adopt.
    pub config: TrainConfig,
}

/// The rows for `report`, most saving first.
pub fn technique_rows(report: &Report, prefs: Prefs) -> Vec<TechniqueRow> {
    let (lang, units) = (prefs.lang, prefs.units);
    let base = report.estimate.device_used_bytes;
    let usable = report.estimate.gpu.as_ref().map(|g| g.usable_bytes);
    let mut rows: Vec<TechniqueRow> = report
        .variants
        .iter()
        .map(|v| {
            let magnitude = Bytes(u64::try_from(v.saved_bytes.unsigned_abs()).unwrap_or(u64::MAX));
            let (effect, change) = match v.saved_bytes {
                s if s > 0 => {
                    let pct = present::percent(present::share(magnitude, base));
                    (
                        Effect::Saves,
                        tf(
                            lang,
                            Key::TechSaves,
                            &[&present::bytes(magnitude, units), &pct],
                        ),
                    )
                }
                s if s < 0 => (
                    Effect::Costs,
                    tf(lang, Key::TechCosts, &[&present::bytes(magnitude, units)]),
                ),
                _ => (Effect::Same, t(lang, Key::TechSame).to_string()),
            };
            let detail = match v.technique {
                Technique::Accumulation4 => Some(tf(
                    lang,
                    Key::TechAccumDetail,
                    &[&present::group_digits(v.config.batch)],
                )),
                Technique::MoreGpus => Some(tf(
                    lang,
                    Key::TechMoreGpusDetail,
                    &[
                        &present::group_digits(v.config.parallel.world()),
                        labels::strategy(v.config.parallel.strategy, lang),
                    ],
                )),
                Technique::OptimizerOffload => Some(t(lang, Key::TechOffloadDetail).to_string()),
                Technique::Amp
                | Technique::AmpFp16
                | Technique::Checkpointing
                | Technique::EightBitOptimizer
                | Technique::Lora
                | Technique::Qlora
                | Technique::HalfBase
                | Technique::Sdpa => None,
            };
            TechniqueRow {
                id: labels::technique_id(v.technique),
                name: labels::technique(v.technique, lang),
                detail,
                device: present::bytes(v.device_used_bytes, units),
                saved: v.saved_bytes,
                effect,
                change,
                share: present::share(v.device_used_bytes, base.max(v.device_used_bytes)),
                fits: usable.is_some_and(|u| v.device_used_bytes <= u),
                config: v.config,
            }
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.saved));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::Field;
    use crate::i18n::Lang;
    use vramfit_core::{Precision, gpu_preset, model_preset};

    #[test]
    fn rows_are_sorted_by_saving_and_say_how_much() {
        let spec = model_preset("gpt2").map(|m| m.spec).unwrap();
        let gpu = gpu_preset("rtx-4090").unwrap();
        let cfg = TrainConfig {
            batch: 8,
            seq: 1024,
            precision: Precision::Fp32,
            ..TrainConfig::default()
        };
        let report = Report::compute(
            &spec,
            &cfg,
            &gpu,
            "GPT-2",
            Some(Field::Seq),
            &mut crate::report::Memo::default(),
        )
        .unwrap();
        let rows = technique_rows(&report, Prefs::default());
        // Only savings of 1 % or more are offered.
        assert!(rows.len() >= 4, "{rows:?}");
        assert!(rows.iter().all(|r| r.effect == Effect::Saves), "{rows:?}");
        assert!(rows.windows(2).all(|w| w[0].saved >= w[1].saved));
        let first = rows.first().unwrap();
        assert_eq!(first.effect, Effect::Saves);
        assert!(first.change.starts_with("saves "), "{}", first.change);
        let accum = rows.iter().find(|r| r.id == "accumulation").unwrap();
        assert_eq!(
            accum.detail.as_deref(),
            Some("micro-batch 2, same effective batch")
        );
        let zh = technique_rows(
            &report,
            Prefs {
                lang: Lang::Zh,
                ..Prefs::default()
            },
        );
        assert!(zh.iter().all(|r| r.change.starts_with("节省")
            || r.change.starts_with("多用")
            || r.change == "没有变化"));
    }
}
