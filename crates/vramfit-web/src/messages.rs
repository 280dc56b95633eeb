//! The core's typed messages in the page's languages: a plan's trade-offs,
//! the batch-size advice, an uneven batch split, which pipeline stage an
//! estimate describes, why a link's `config.json` cannot be read and why the
//! estimator (or a serving engine, `serve.rs`) rejects a configuration. Every value goes through the
//! translation table; the core builds no sentences for them (the CLI words
//! the same values in English). The core errors that carry free text
//! (an invalid model's dimensions, a size past the limits, the JSON
//! parser's message) stay in English.

mod serve;

pub use serve::serve_fault;

use crate::i18n::{Key, Lang, t, tf};
use crate::present::group_digits;
use vramfit_core::error::Inapplicable;
use vramfit_core::plan::{Advice, Trade, UnevenSplit};
use vramfit_core::share::{ConfigFault, MAX_CONFIG_BYTES};
use vramfit_core::{Error, RankNote};

/// One trade-off in `lang`.
pub fn trade(trade: &Trade, lang: Lang) -> String {
    match trade {
        Trade::Accumulation { micro_batch, steps } => tf(
            lang,
            Key::TradeAccum,
            &[&group_digits(*micro_batch), &group_digits(*steps)],
        ),
        Trade::NoAccumulation { micro_batch } => {
            tf(lang, Key::TradeNoAccum, &[&group_digits(*micro_batch)])
        }
        Trade::Fp32 => t(lang, Key::TradeFp32).to_string(),
        Trade::Amp => t(lang, Key::TradeAmp).to_string(),
        Trade::AmpFp16 => t(lang, Key::TradeAmpFp16).to_string(),
        Trade::PureHalf => t(lang, Key::TradeHalf).to_string(),
        Trade::Bf16Updates => t(lang, Key::TradeBf16Updates).to_string(),
        Trade::Recompute => t(lang, Key::TradeRecompute).to_string(),
        Trade::EightBitAdam => t(lang, Key::Trade8bit).to_string(),
        Trade::Strategy { strategy } => tf(lang, Key::TradeStrategy, &[strategy.id()]),
        Trade::Offload => t(lang, Key::TradeOffload).to_string(),
    }
}

/// A plan's trade-offs as one line in `lang`.
pub fn tradeoff(trades: &[Trade], lang: Lang) -> String {
    trades
        .iter()
        .map(|x| trade(x, lang))
        .collect::<Vec<_>>()
        .join(t(lang, Key::ListSeparator))
}

/// A piece of advice in `lang`.
pub fn advice_text(a: &Advice, lang: Lang) -> String {
    match a {
        Advice::LrScaling {
            effective_batch,
            warmup,
        } => tf(
            lang,
            if *warmup {
                Key::AdviceLrWarmup
            } else {
                Key::AdviceLr
            },
            &[&group_digits(*effective_batch)],
        ),
        Advice::LargeBatch => t(lang, Key::AdviceLarge).to_string(),
        Advice::SmallBatch => t(lang, Key::AdviceSmall).to_string(),
        Advice::BatchNorm { micro_batch } => {
            tf(lang, Key::AdviceBatchNorm, &[&group_digits(*micro_batch)])
        }
        Advice::Eval => t(lang, Key::AdviceEval).to_string(),
        Advice::PinMemory => t(lang, Key::AdvicePinMemory).to_string(),
        Advice::EmptyCache => t(lang, Key::AdviceEmptyCache).to_string(),
    }
}

/// The warning for a target batch that does not divide over the GPUs, in `lang`.
pub fn uneven(u: &UnevenSplit, lang: Lang) -> String {
    tf(
        lang,
        Key::PlanUneven,
        &[
            &group_digits(u.target),
            &group_digits(u.gpus),
            &group_digits(u.per_gpu),
            &group_digits(u.total),
        ],
    )
}

/// Which pipeline stage an estimate describes, in `lang`.
pub fn rank_note(r: &RankNote, lang: Lang) -> String {
    tf(
        lang,
        Key::RankNote,
        &[
            &group_digits(r.stage),
            &group_digits(r.stages),
            &group_digits(r.last_layer),
            &group_digits(r.in_flight),
        ],
    )
}

/// Why a link's `config.json` cannot be read, in `lang`.
pub fn config_fault(fault: ConfigFault, lang: Lang) -> String {
    match fault {
        ConfigFault::UnknownFormat => t(lang, Key::LinkConfigFormat).to_string(),
        ConfigFault::TooLong => tf(
            lang,
            Key::LinkConfigTooLong,
            &[&group_digits(MAX_CONFIG_BYTES as u64)],
        ),
        ConfigFault::NotBase64 => t(lang, Key::LinkConfigBase64).to_string(),
        ConfigFault::EndsInEscape => t(lang, Key::LinkConfigEscape).to_string(),
        ConfigFault::NotUtf8 => t(lang, Key::LinkConfigUtf8).to_string(),
    }
}

/// Why a setting does not apply, as a sentence in `lang`.
pub fn inapplicable(x: &Inapplicable, lang: Lang) -> String {
    // Numbers as the user typed them (no digit grouping), like the CLI's.
    let n = |v: &u64| v.to_string();
    match x {
        Inapplicable::FrozenWeights { format } => tf(lang, Key::NaFrozenWeights, &[format]),
        Inapplicable::PruneCnn => t(lang, Key::NaPruneCnn).to_string(),
        Inapplicable::PruneConvNotCnn => t(lang, Key::NaPruneConv).to_string(),
        Inapplicable::PruneNotModelled { model } => tf(lang, Key::NaPruneNotModelled, &[model]),
        Inapplicable::TensorParallel {
            dimension,
            size,
            tp,
        } => tf(lang, Key::NaTensorParallel, &[dimension, &n(size), &n(tp)]),
        Inapplicable::SequenceParallel { tp } => tf(lang, Key::NaSequenceParallel, &[&n(tp)]),
        Inapplicable::SequenceTooLong { seq, positions } => {
            tf(lang, Key::NaSequenceTooLong, &[&n(seq), &n(positions)])
        }
        Inapplicable::VitImage { fixed, image } => {
            tf(lang, Key::NaVitImage, &[&n(fixed), &n(image)])
        }
        Inapplicable::ImageTooSmall { model } => tf(lang, Key::NaImageTooSmall, &[model]),
        Inapplicable::ModelParallelGpus { tp_pp, gpus } => {
            tf(lang, Key::NaModelParallelGpus, &[&n(tp_pp), &n(gpus)])
        }
        Inapplicable::ExpertParallelGpus { etp_ep_pp, gpus } => {
            tf(lang, Key::NaExpertParallelGpus, &[&n(etp_ep_pp), &n(gpus)])
        }
        Inapplicable::ExpertTensorParallelNoExperts { etp } => {
            tf(lang, Key::NaExpertTensorParallelNoExperts, &[&n(etp)])
        }
        Inapplicable::ExpertTensorParallel { size, etp } => {
            tf(lang, Key::NaExpertTensorParallel, &[&n(size), &n(etp)])
        }
        Inapplicable::ExpertParallelNoExperts { ep } => {
            tf(lang, Key::NaExpertParallelNoExperts, &[&n(ep)])
        }
        Inapplicable::ExpertParallelExperts { experts, ep } => {
            tf(lang, Key::NaExpertParallelExperts, &[&n(experts), &n(ep)])
        }
        Inapplicable::SequenceParallelNeedsTp => t(lang, Key::NaSpNeedsTp).to_string(),
        Inapplicable::SparseAttentionIndexer => t(lang, Key::NaSparseIndexer).to_string(),
        Inapplicable::PipelineEncoderDecoder { pp } => {
            tf(lang, Key::NaPipelineEncoderDecoder, &[&n(pp)])
        }
        Inapplicable::Offload { params, strategy } => tf(
            lang,
            if *params {
                Key::NaOffloadParams
            } else {
                Key::NaOffloadOptimizer
            },
            &[strategy],
        ),
    }
}

/// Why the core refused, as a sentence in `lang`: translated where the
/// error carries values, the core's English otherwise (free text).
pub fn core_error(e: &Error, lang: Lang) -> String {
    match e {
        Error::NotApplicable(x) => inapplicable(x, lang),
        Error::OutOfRange {
            field,
            value,
            min,
            max,
        } => tf(
            lang,
            Key::CoreOutOfRange,
            &[field, value, &group_digits(*min), &group_digits(*max)],
        ),
        Error::InvalidChoice {
            field,
            value,
            accepted,
        } => tf(lang, Key::CoreInvalidChoice, &[field, value, accepted]),
        Error::UnknownModel(_)
        | Error::UnknownGpu(_)
        | Error::ConfigJson(_)
        | Error::UnsupportedModelType { .. }
        | Error::NestedConfig { .. }
        | Error::MissingField { .. }
        | Error::InvalidModel(_)
        | Error::AllocatorConf(_)
        | Error::TooLarge { .. } => sentence(&e.to_string()),
        Error::Serve(f) => serve_fault(f, lang),
    }
}

/// Capitalises a core message (English, so ASCII case will do) and ends it with a full stop.
pub fn sentence(message: &str) -> String {
    let mut chars = message.chars();
    let mut out: String = chars
        .next()
        .map(|c| {
            std::iter::once(c.to_ascii_uppercase())
                .chain(chars)
                .collect()
        })
        .unwrap_or_default();
    if !out.is_empty() && !out.ends_with(['.', '!', '?', '。']) {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::parallel::Strategy;

    fn has_cjk(s: &str) -> bool {
        s.chars().any(|c| ('\u{3000}'..='\u{9fff}').contains(&c))
    }

    /// `en` and `zh` are the same message in each language: both filled in,
    /// the Chinese in Chinese, the English not, and each carrying `numbers`.
    fn reads_in_both(what: &str, en: &str, zh: &str, numbers: &[&str]) {
        assert!(!en.trim().is_empty(), "{what}: no English");
        assert!(
            has_cjk(zh),
            "{what}: the Chinese {zh:?} has no Chinese in it"
        );
        assert!(!has_cjk(en), "{what}: the English {en:?} has Chinese in it");
        for text in [en, zh] {
            assert!(
                !text.contains('{'),
                "{what}: a placeholder is left in {text:?}"
            );
            for n in numbers {
                assert!(text.contains(n), "{what}: {text:?} lacks {n}");
            }
        }
    }

    /// Every trade-off; a new variant stops the match below until it is listed.
    fn every_trade() -> Vec<Trade> {
        let all = vec![
            Trade::Accumulation {
                micro_batch: 3,
                steps: 7,
            },
            Trade::NoAccumulation { micro_batch: 3 },
            Trade::Fp32,
            Trade::Amp,
            Trade::AmpFp16,
            Trade::PureHalf,
            Trade::Bf16Updates,
            Trade::Recompute,
            Trade::EightBitAdam,
            Trade::Strategy {
                strategy: Strategy::Zero3,
            },
            Trade::Offload,
        ];
        for x in &all {
            match x {
                Trade::Accumulation { .. }
                | Trade::NoAccumulation { .. }
                | Trade::Fp32
                | Trade::Amp
                | Trade::AmpFp16
                | Trade::PureHalf
                | Trade::Bf16Updates
                | Trade::Recompute
                | Trade::EightBitAdam
                | Trade::Strategy { .. }
                | Trade::Offload => {}
            }
        }
        all
    }

    /// Every piece of advice; a new variant stops the match below until it is listed.
    fn every_advice() -> Vec<Advice> {
        let all = vec![
            Advice::LrScaling {
                effective_batch: 1024,
                warmup: true,
            },
            Advice::LrScaling {
                effective_batch: 96,
                warmup: false,
            },
            Advice::LargeBatch,
            Advice::SmallBatch,
            Advice::BatchNorm { micro_batch: 3 },
            Advice::Eval,
            Advice::PinMemory,
            Advice::EmptyCache,
        ];
        for a in &all {
            match a {
                Advice::LrScaling { .. }
                | Advice::LargeBatch
                | Advice::SmallBatch
                | Advice::BatchNorm { .. }
                | Advice::Eval
                | Advice::PinMemory
                | Advice::EmptyCache => {}
            }
        }
        all
    }

    #[test]
    fn every_trade_reads_in_both_languages() {
        for x in every_trade() {
            let numbers: &[&str] = match x {
                Trade::Accumulation { .. } => &["3", "7"],
                Trade::NoAccumulation { .. } => &["3"],
                Trade::Strategy { .. } => &["zero3"],
                Trade::Fp32
                | Trade::Amp
                | Trade::AmpFp16
                | Trade::PureHalf
                | Trade::Bf16Updates
                | Trade::Recompute
                | Trade::EightBitAdam
                | Trade::Offload => &[],
            };
            let (en, zh) = (trade(&x, Lang::En), trade(&x, Lang::Zh));
            reads_in_both(&format!("{x:?}"), &en, &zh, numbers);
        }
        let all = every_trade();
        let zh = tradeoff(&all, Lang::Zh);
        assert_eq!(zh.matches('；').count(), all.len() - 1, "{zh}");
    }

    #[test]
    fn every_advice_reads_in_both_languages() {
        for a in every_advice() {
            let numbers: &[&str] = match a {
                Advice::LrScaling {
                    effective_batch: 1024,
                    ..
                } => &["1,024"],
                Advice::LrScaling { .. } => &["96"],
                Advice::BatchNorm { .. } => &["3"],
                Advice::LargeBatch
                | Advice::SmallBatch
                | Advice::Eval
                | Advice::PinMemory
                | Advice::EmptyCache => &[],
            };
            let (en, zh) = (advice_text(&a, Lang::En), advice_text(&a, Lang::Zh));
            reads_in_both(&format!("{a:?}"), &en, &zh, numbers);
        }
        // Warmup is its own sentence.
        let [warm, cold, ..] = every_advice()[..] else {
            unreachable!()
        };
        assert_ne!(advice_text(&warm, Lang::Zh), advice_text(&cold, Lang::Zh));
    }

    #[test]
    fn an_uneven_split_and_a_rank_note_read_in_both_languages() {
        let split = UnevenSplit {
            target: 30,
            gpus: 8,
            per_gpu: 4,
            total: 32,
        };
        let (en, zh) = (uneven(&split, Lang::En), uneven(&split, Lang::Zh));
        reads_in_both("uneven", &en, &zh, &["30", "8", "4", "32"]);
        let note = RankNote {
            stage: 0,
            stages: 4,
            last_layer: 7,
            in_flight: 3,
        };
        let (en, zh) = (rank_note(&note, Lang::En), rank_note(&note, Lang::Zh));
        reads_in_both("rank note", &en, &zh, &["0", "4", "7", "3"]);
    }

    #[test]
    fn every_config_fault_reads_in_both_languages() {
        for fault in [
            ConfigFault::UnknownFormat,
            ConfigFault::TooLong,
            ConfigFault::NotBase64,
            ConfigFault::EndsInEscape,
            ConfigFault::NotUtf8,
        ] {
            let numbers: &[&str] = match fault {
                ConfigFault::TooLong => &["65,536"],
                ConfigFault::UnknownFormat
                | ConfigFault::NotBase64
                | ConfigFault::EndsInEscape
                | ConfigFault::NotUtf8 => &[],
            };
            let (en, zh) = (config_fault(fault, Lang::En), config_fault(fault, Lang::Zh));
            reads_in_both(&format!("{fault:?}"), &en, &zh, numbers);
        }
    }

    /// Every reason a setting does not apply; a new variant stops the match
    /// below until it is listed.
    fn every_inapplicable() -> Vec<Inapplicable> {
        let all = vec![
            Inapplicable::FrozenWeights { format: "int4" },
            Inapplicable::PruneCnn,
            Inapplicable::PruneConvNotCnn,
            Inapplicable::PruneNotModelled { model: "ConvNeXt" },
            Inapplicable::TensorParallel {
                dimension: "num_attention_heads",
                size: 12,
                tp: 5,
            },
            Inapplicable::SequenceParallel { tp: 3 },
            Inapplicable::SequenceTooLong {
                seq: 4096,
                positions: 1024,
            },
            Inapplicable::VitImage {
                fixed: 224,
                image: 256,
            },
            Inapplicable::ImageTooSmall { model: "ResNet" },
            Inapplicable::ModelParallelGpus { tp_pp: 4, gpus: 6 },
            Inapplicable::ExpertParallelGpus {
                etp_ep_pp: 16,
                gpus: 12,
            },
            Inapplicable::ExpertTensorParallelNoExperts { etp: 2 },
            Inapplicable::ExpertTensorParallel { size: 1408, etp: 3 },
            Inapplicable::ExpertParallelNoExperts { ep: 2 },
            Inapplicable::ExpertParallelExperts { experts: 60, ep: 8 },
            Inapplicable::SequenceParallelNeedsTp,
            Inapplicable::SparseAttentionIndexer,
            Inapplicable::PipelineEncoderDecoder { pp: 2 },
            Inapplicable::Offload {
                params: false,
                strategy: "ddp",
            },
            Inapplicable::Offload {
                params: true,
                strategy: "zero2",
            },
        ];
        for x in &all {
            match x {
                Inapplicable::FrozenWeights { .. }
                | Inapplicable::PruneCnn
                | Inapplicable::PruneConvNotCnn
                | Inapplicable::PruneNotModelled { .. }
                | Inapplicable::TensorParallel { .. }
                | Inapplicable::SequenceParallel { .. }
                | Inapplicable::SequenceTooLong { .. }
                | Inapplicable::VitImage { .. }
                | Inapplicable::ImageTooSmall { .. }
                | Inapplicable::ModelParallelGpus { .. }
                | Inapplicable::ExpertParallelGpus { .. }
                | Inapplicable::ExpertParallelNoExperts { .. }
                | Inapplicable::ExpertParallelExperts { .. }
                | Inapplicable::ExpertTensorParallelNoExperts { .. }
                | Inapplicable::ExpertTensorParallel { .. }
                | Inapplicable::SequenceParallelNeedsTp
                | Inapplicable::SparseAttentionIndexer
                | Inapplicable::PipelineEncoderDecoder { .. }
                | Inapplicable::Offload { .. } => {}
            }
        }
        all
    }

    #[test]
    fn every_inapplicable_setting_reads_in_both_languages() {
        for x in every_inapplicable() {
            let numbers: &[&str] = match x {
                Inapplicable::FrozenWeights { .. } => &["int4"],
                Inapplicable::TensorParallel { .. } => &["num_attention_heads", "12", "5"],
                Inapplicable::SequenceParallel { .. } => &["3"],
                Inapplicable::SequenceTooLong { .. } => &["4096", "1024"],
                Inapplicable::VitImage { .. } => &["224×224", "256"],
                Inapplicable::ImageTooSmall { .. } => &["ResNet"],
                Inapplicable::PruneNotModelled { .. } => &["ConvNeXt"],
                Inapplicable::ModelParallelGpus { .. } => &["4", "6"],
                Inapplicable::ExpertParallelGpus { .. } => &["16", "12"],
                Inapplicable::ExpertParallelNoExperts { .. } => &["2"],
                Inapplicable::ExpertParallelExperts { .. } => &["60", "8"],
                Inapplicable::ExpertTensorParallelNoExperts { .. } => &["2"],
                Inapplicable::ExpertTensorParallel { .. } => &["1408", "3"],
                Inapplicable::PipelineEncoderDecoder { .. } => &["2"],
                Inapplicable::Offload { strategy, .. } => &[strategy],
                Inapplicable::PruneCnn
                | Inapplicable::PruneConvNotCnn
                | Inapplicable::SequenceParallelNeedsTp
                | Inapplicable::SparseAttentionIndexer => &[],
            };
            let (en, zh) = (inapplicable(&x, Lang::En), inapplicable(&x, Lang::Zh));
            reads_in_both(&format!("{x:?}"), &en, &zh, numbers);
            assert!(en.ends_with('.') && zh.ends_with('。'), "{en} / {zh}");
        }
    }

    #[test]
    fn core_errors_with_values_are_translated_and_free_text_stays_english() {
        let range = Error::OutOfRange {
            field: "tp",
            value: "0".into(),
            min: 1,
            max: 1024,
        };
        let (en, zh) = (core_error(&range, Lang::En), core_error(&range, Lang::Zh));
        reads_in_both("out of range", &en, &zh, &["tp", "1,024"]);
        let choice = Error::InvalidChoice {
            field: "strategy",
            value: "x".into(),
            accepted: "a|b".into(),
        };
        let (en, zh) = (core_error(&choice, Lang::En), core_error(&choice, Lang::Zh));
        reads_in_both("invalid choice", &en, &zh, &["strategy", "a|b"]);
        let free = Error::InvalidModel("heads must divide hidden".into());
        assert_eq!(
            core_error(&free, Lang::Zh),
            "Invalid model: heads must divide hidden."
        );
    }

    #[test]
    fn core_messages_become_sentences() {
        assert_eq!(
            sentence("sequence length 9 exceeds"),
            "Sequence length 9 exceeds."
        );
        assert_eq!(sentence("Done."), "Done.");
        assert_eq!(sentence(""), "");
    }
}
