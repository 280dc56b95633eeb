//! The three peak numbers users confuse: allocated, reserved, device used.

use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use crate::present::{bytes, in_mode};
use vramfit_core::Bytes;
use vramfit_core::config::Mode;
use yew::prelude::*;

/// Props of [`PeakNumbers`].
#[derive(Properties, PartialEq)]
pub struct PeakNumbersProps {
    /// `torch.cuda.max_memory_allocated()`.
    pub allocated: Bytes,
    /// `torch.cuda.max_memory_reserved()`.
    pub reserved: Bytes,
    /// What nvidia-smi shows.
    pub device: Bytes,
    /// Training, fine-tuning or inference (which words the notes use).
    #[prop_or(Mode::Train)]
    pub mode: Mode,
    /// The device figure's range on real GPUs and the published runs' spread behind it.
    #[prop_or_default]
    pub range: Option<([Bytes; 2], vramfit_core::spread::Spread)>,
}

/// Three stat tiles, each saying which tool reports it.
#[function_component]
pub fn PeakNumbers(props: &PeakNumbersProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let stat = |id: &'static str, label: Key, value: Bytes, source: &'static str, note: Key| {
        html! {
            <div class="stat" id={id} data-bytes={value.0.to_string()}>
                <div class="stat-label">{ t(lang, label) }</div>
                <div class="stat-value">{ bytes(value, prefs.units) }</div>
                // Break long API names only after a dot.
                <code class="stat-source" translate="no">{ for source.split_inclusive('.').map(|part| html! { <>{ part }<wbr /></> }) }</code>
                <p class="stat-note">{ t(lang, in_mode(note, props.mode)) }</p>
            </div>
        }
    };
    html! {
        <section class="card" aria-labelledby="peaks-title">
            <h2 id="peaks-title" class="card-title">{ t(lang, Key::PeaksTitle) }</h2>
            <p class="card-sub">{ t(lang, in_mode(Key::PeaksSub, props.mode)) }</p>
            <div class="stats">
                { stat("peak-allocated", Key::Allocated, props.allocated, "torch.cuda.max_memory_allocated()", Key::AllocatedNote) }
                { stat("peak-reserved", Key::Reserved, props.reserved, "torch.cuda.max_memory_reserved()", Key::ReservedNote) }
                { stat("device-used", Key::DeviceUsed, props.device, "nvidia-smi", Key::DeviceUsedNote) }
            </div>
            if let Some(([low, high], s)) = props.range {
                <p class="card-sub" id="device-range" data-low={low.0.to_string()} data-high={high.0.to_string()}>
                    { tf(lang, Key::DeviceRange, &[
                        &bytes(low, prefs.units),
                        &bytes(high, prefs.units),
                        &format!("{:+.0} %", 100.0 * s.below.min(0.0)),
                        &format!("{:+.0} %", 100.0 * s.above.max(0.0)),
                        &s.runs.to_string(),
                    ]) }
                </p>
            }
        </section>
    }
}
