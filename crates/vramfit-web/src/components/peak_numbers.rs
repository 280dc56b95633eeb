//! The three peak numbers users confuse: allocated, reserved, device used.

use vramfit_core::Bytes;
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
}

/// Three stat tiles, each saying which tool reports it.
#[function_component]
pub fn PeakNumbers(props: &PeakNumbersProps) -> Html {
    let stat = |id: &'static str, label: &'static str, bytes: Bytes, source: &'static str, note: &'static str| {
        html! {
            <div class="stat" id={id} data-bytes={bytes.0.to_string()}>
                <div class="stat-label">{ label }</div>
                <div class="stat-value">{ bytes.to_string() }</div>
                // Break long API names only after a dot.
                <code class="stat-source">{ for source.split_inclusive('.').map(|part| html! { <>{ part }<wbr /></> }) }</code>
                <p class="stat-note">{ note }</p>
            </div>
        }
    };
    html! {
        <section class="card" aria-labelledby="peaks-title">
            <h2 id="peaks-title" class="card-title">{ "Peak memory, three ways" }</h2>
            <p class="card-sub">{ "PyTorch and nvidia-smi count the same step differently." }</p>
            <div class="stats">
                { stat("peak-allocated", "Allocated", props.allocated, "torch.cuda.max_memory_allocated()", "Live tensors at the worst moment of the step.") }
                { stat("peak-reserved", "Reserved", props.reserved, "torch.cuda.max_memory_reserved()", "Held by PyTorch's caching allocator, free blocks included.") }
                { stat("device-used", "Device used", props.device, "nvidia-smi", "Reserved plus the CUDA context and cuBLAS workspaces.") }
            </div>
        </section>
    }
}
