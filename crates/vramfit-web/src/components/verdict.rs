//! The verdict card: fits or not, a bar of the GPU's memory filled by what
//! nvidia-smi would show, and the largest batch that fits.

use crate::present::{capacity, css_width, group_digits, percent, share};
use vramfit_core::{Bytes, GpuFit};
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
    /// Emits the largest batch when the user chooses to use it.
    pub on_use_batch: Callback<u64>,
}

/// Fits / does not fit.
#[function_component]
pub fn Verdict(props: &VerdictProps) -> Html {
    let fit = &props.fit;
    let cap = capacity(fit.usable_bytes);
    let filled = share(props.device_used, fit.usable_bytes);
    let (title, detail) = if fit.fits {
        (
            format!("Fits on {}", props.gpu_name),
            format!("{} of {cap} at the peak ({}), {} to spare.", props.device_used, percent(filled), fit.usable_bytes - props.device_used),
        )
    } else {
        (
            format!("Does not fit on {}", props.gpu_name),
            format!("Needs {}: {} more than its {cap}.", props.device_used, props.device_used - fit.usable_bytes),
        )
    };
    let max_batch = if fit.max_batch == 0 {
        html! { <p class="max-batch" id="max-batch" data-value="0">{ "Even a batch of 1 does not fit on this GPU." }</p> }
    } else {
        let max = fit.max_batch;
        let on_use = props.on_use_batch.clone();
        html! {
            <p class="max-batch">
                { "Largest batch that fits: " }
                <strong id="max-batch" data-value={max.to_string()}>{ group_digits(max) }</strong>
                if max != props.batch {
                    <button type="button" class="link-button" onclick={Callback::from(move |_| on_use.emit(max))}>
                        { format!("Use {}", group_digits(max)) }
                    </button>
                }
            </p>
        }
    };
    html! {
        <section
            id="verdict"
            class={classes!("card", "verdict", if fit.fits { "fits" } else { "no-fit" })}
            data-fits={fit.fits.to_string()}
            aria-labelledby="verdict-title"
        >
            <div class="verdict-head">
                <span class="verdict-icon" aria-hidden="true">{ if fit.fits { "✓" } else { "✕" } }</span>
                <div>
                    <h2 id="verdict-title" class="verdict-title">{ title }</h2>
                    <p class="verdict-detail">{ detail }</p>
                </div>
            </div>
            <div
                class="meter"
                role="meter"
                aria-label="GPU memory used at the peak"
                aria-valuemin="0"
                aria-valuemax="100"
                aria-valuenow={format!("{:.0}", filled * 100.0)}
            >
                <div class="meter-fill" style={css_width(filled)}></div>
            </div>
            <div class="meter-scale"><span>{ "0" }</span><span>{ cap }</span></div>
            { max_batch }
        </section>
    }
}
