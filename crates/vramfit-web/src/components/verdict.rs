//! The verdict card: fits or not, a bar of the GPU's memory filled by what
//! nvidia-smi would show, and the largest batch that fits.

use crate::fields::Field;
use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use crate::present::{bytes, capacity, css_fill, group_digits, percent, share, verdict_title};
use vramfit_core::gpus::MemoryLimit;
use vramfit_core::overheads::SAFETY_MARGIN;
use vramfit_core::{Bytes, GpuFit, Precision};
use yew::prelude::*;

/// Props of [`Verdict`].
#[derive(Properties, PartialEq)]
pub struct VerdictProps {
    /// Display name of the GPU.
    pub gpu_name: AttrValue,
    /// The core's fit on that GPU.
    pub fit: GpuFit,
    /// Device memory used at the peak (nvidia-smi's view).
    pub device_used: Bytes,
    /// The batch size of the report.
    pub batch: u64,
    /// How many GPUs the configuration runs on (more than one: the title
    /// names the count and one GPU's share).
    #[prop_or(1)]
    pub gpus: u64,
    /// Emits the batch to use (the largest that keeps the safety margin free).
    pub on_use_batch: Callback<u64>,
    /// Emits the precision to use instead of bf16 on a GPU without it
    /// (`None`: not offered, as in the widget).
    #[prop_or_default]
    pub on_use_precision: Option<Callback<Precision>>,
    /// Whether to offer using the largest batch (not where the batch is locked).
    #[prop_or(true)]
    pub can_use: bool,
    /// The model's input-size field (sequence length or image size), to
    /// offer the largest input that fits at this batch; `None`: not offered.
    #[prop_or_default]
    pub input: Option<Field>,
    /// That largest input once found (0: none fits).
    #[prop_or_default]
    pub max_input: Option<u64>,
    /// Asks for the largest input.
    #[prop_or_default]
    pub on_find_input: Callback<()>,
    /// Emits the largest input when the user chooses to use it.
    #[prop_or_default]
    pub on_use_input: Callback<u64>,
    /// The input size of the report.
    #[prop_or_default]
    pub input_value: u64,
    /// The model's trained context when the report's runs past it.
    #[prop_or_default]
    pub beyond_trained: Option<u64>,
}

/// Fits / does not fit.
#[function_component]
pub fn Verdict(props: &VerdictProps) -> Html {
    let prefs = use_prefs();
    let (lang, units) = (prefs.lang, prefs.units);
    let fit = &props.fit;
    let cap = capacity(fit.usable_bytes, units);
    // On this GPU: less than the estimate's where the allocator returns
    // cached segments to stay within it.
    let on_gpu = if fit.fits {
        fit.device_used_bytes.unwrap_or(props.device_used)
    } else {
        props.device_used
    };
    let released = (on_gpu < props.device_used).then(|| {
        tf(
            lang,
            Key::FitsAfterRelease,
            &[&bytes(props.device_used, units)],
        )
    });
    let filled = share(on_gpu, fit.usable_bytes);
    let used = bytes(on_gpu, units);
    let gpu = html! { <span translate="no">{ props.gpu_name.clone() }</span> };
    // The GPU's name is a product name: split the sentence around it.
    let title = {
        let (before, after) = verdict_title(lang, fit.fits, props.gpus, &used);
        html! { <>{ before }{ gpu }{ after }</> }
    };
    let detail = if fit.fits {
        tf(
            lang,
            Key::FitsDetail,
            &[
                &used,
                &cap,
                &percent(filled),
                &bytes(fit.usable_bytes.saturating_sub(on_gpu), units),
            ],
        )
    } else {
        tf(
            lang,
            Key::NoFitDetail,
            &[
                &used,
                &bytes(props.device_used.saturating_sub(fit.usable_bytes), units),
                &cap,
            ],
        )
    };
    let max_batch = if fit.max_batch == 0 {
        html! { <p class="max-batch" id="max-batch" data-value="0">{ t(lang, Key::NoBatchFits) }</p> }
    } else {
        let max = fit.max_batch;
        // The batch offered keeps the planner's margin free (see `SAFETY_MARGIN`).
        let safe = fit.margin_batch;
        let margin = percent(SAFETY_MARGIN);
        let on_use = props.on_use_batch.clone();
        html! {
            <p class="max-batch">
                { t(lang, Key::LargestBatch) }
                <strong id="max-batch" data-value={max.to_string()}>{ group_digits(max) }</strong>
                if safe > 0 && safe != props.batch && props.can_use {
                    <button type="button" class="link-button" id="use-max-batch" data-value={safe.to_string()}
                        title={tf(lang, Key::UseBatchMarginLabel, &[&margin])}
                        onclick={Callback::from(move |_| on_use.emit(safe))}>
                        { tf(lang, Key::UseBatchMargin, &[&group_digits(safe), &margin]) }
                    </button>
                }
            </p>
        }
    };
    let no_bf16 = fit.without_bf16.map(|instead| {
        let button = props.on_use_precision.clone().map(|on_use| html! {
            <button type="button" class="link-button" id="use-fp16" onclick={Callback::from(move |_| on_use.emit(instead))}>
                { tf(lang, Key::UsePrecision, &[crate::labels::precision(instead, lang)]) }
            </button>
        });
        html! {
            <p class="verdict-warn" id="no-bf16" data-value={instead.id()}>
                { t(lang, Key::NoBf16) }{ " " }{ for button }
            </p>
        }
    });
    let unified = match fit.limit {
        MemoryLimit::Dedicated => None,
        MemoryLimit::WorkingSet {
            numerator,
            denominator,
        } => Some(html! {
            <p class="verdict-note" id="unified-memory" data-value={format!("{numerator}/{denominator}")}>
                { tf(lang, Key::UnifiedMemoryLimit, &[&format!("{numerator}/{denominator}"), &cap, &capacity(fit.memory_bytes, units)]) }
                { " " }<code translate="no">{ "sudo sysctl iogpu.wired_limit_mb=<MiB>" }</code>
            </p>
        }),
    };
    // An NVIDIA GPU with a published reading: CUDA's total, not the
    // marketed capacity, is what the verdict is measured against.
    let runtime = fit.runtime_shortfall().map(|short| {
        let key = if short.board_under_marketed {
            Key::RuntimeMemoryBoard
        } else {
            Key::RuntimeMemory
        };
        html! {
            <p class="verdict-note" id="runtime-memory" data-bytes={fit.runtime_bytes.0.to_string()}>
                { tf(lang, key, &[&bytes(fit.runtime_bytes, units), &capacity(fit.memory_bytes, units), &bytes(short.reserved, units)]) }
            </p>
        }
    });
    let max_input = props.input.filter(|f| matches!(f, Field::Seq | Field::Image)).map(|field| {
        let batch = group_digits(props.batch);
        let (label, none) = match field {
            Field::Seq => (Key::LongestSeqAt, Key::NoSeqFits),
            _ => (Key::LargestImageAt, Key::NoImageFits),
        };
        match props.max_input {
            None => {
                let on_find = props.on_find_input.clone();
                html! {
                    <p class="max-input">
                        { tf(lang, label, &[&batch]) }{ " " }
                        <button type="button" class="link-button" id="find-max-input" title={t(lang, Key::FindInputLabel)}
                            onclick={Callback::from(move |_| on_find.emit(()))}>{ t(lang, Key::FindInput) }</button>
                    </p>
                }
            }
            Some(0) => html! { <p class="max-input" id="max-input" data-value="0">{ tf(lang, none, &[&batch]) }</p> },
            Some(v) => {
                let shown = group_digits(v);
                let amount = tf(lang, if field == Field::Seq { Key::InputTokens } else { Key::InputPixels }, &[&shown]);
                let on_use = props.on_use_input.clone();
                html! {
                    <p class="max-input">
                        { tf(lang, label, &[&batch]) }{ " " }
                        <strong id="max-input" data-value={v.to_string()}>{ amount }</strong>
                        if v != props.input_value {
                            <button type="button" class="link-button" id="use-max-input" onclick={Callback::from(move |_| on_use.emit(v))}>
                                { tf(lang, Key::UseBatch, &[&shown]) }
                            </button>
                        }
                    </p>
                }
            }
        }
    });
    html! {
        <section
            id="verdict"
            tabindex="-1"
            class={classes!("card", "verdict", if fit.fits { "fits" } else { "no-fit" })}
            data-fits={fit.fits.to_string()}
            data-max-batch={fit.max_batch.to_string()}
            data-margin-batch={fit.margin_batch.to_string()}
            aria-labelledby="verdict-title"
        >
            <div class="verdict-head">
                <span class="verdict-icon" aria-hidden="true">{ if fit.fits { "✓" } else { "✕" } }</span>
                <div>
                    <h2 id="verdict-title" class="verdict-title">{ title }</h2>
                    <p class="verdict-detail">{ detail }</p>
                    if let Some(note) = released {
                        <p class="verdict-detail" id="fits-after-release">{ note }</p>
                    }
                </div>
            </div>
            <div
                class="meter"
                role="meter"
                aria-label={t(lang, Key::MeterLabel)}
                aria-valuemin="0"
                aria-valuemax="100"
                aria-valuenow={format!("{:.0}", filled * 100.0)}
                style={css_fill(filled)}
            ></div>
            <div class="meter-scale"><span>{ "0" }</span><span>{ cap }</span></div>
            { for no_bf16 }
            { for unified }
            { for runtime }
            if let Some(limit) = props.beyond_trained {
                <p class="verdict-warn" id="beyond-trained" data-value={limit.to_string()}>
                    { tf(lang, Key::BeyondTrained, &[&group_digits(limit)]) }
                </p>
            }
            { max_batch }
            { for max_input }
        </section>
    }
}
