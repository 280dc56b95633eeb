//! The core's typed messages in the page's languages: a plan's trade-offs,
//! the batch-size advice, an uneven batch split, which pipeline stage an
//! estimate describes and why a link's `config.json` cannot be read. Every
//! value goes through the translation table; the core builds no sentences
//! for them (the CLI words the same values in English).

use crate::i18n::{Key, Lang, t, tf};
use crate::present::group_digits;
use vramfit_core::RankNote;
use vramfit_core::plan::{Advice, Trade, UnevenSplit};
use vramfit_core::share::{ConfigFault, MAX_CONFIG_BYTES};

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
}
