//! The Benchmark tab: what it does, the detected GPU and the preset to
//! compare with, the run's choices, Start / progress / Cancel, failures,
//! then the results ([`BenchResults`](super::BenchResults)).

use super::BenchResults;
use crate::bench::hook::use_bench;
use crate::bench::model::{Adapter, Failure, FailureKind};
use crate::bench::rows::{matching_preset, vendor_presets};
use crate::bench::state::{BenchAction, BenchState, KERNELS, LAYERS, Phase, Size};
use crate::hooks::{use_prefs, use_select_value};
use crate::i18n::{Key, Lang, t, tf};
use vramfit_core::{Bytes, GpuPreset};
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// Props of [`BenchTab`].
#[derive(Properties, PartialEq)]
pub struct BenchTabProps {
    /// The calculator's configuration as a share-link query (for the
    /// layers' sizes and the projected step time); `None` while invalid.
    pub query: Option<String>,
}

/// The whole tab.
#[function_component]
pub fn BenchTab(props: &BenchTabProps) -> Html {
    let lang = use_prefs().lang;
    let bench = use_bench(props.query.clone());
    let state = bench.state.clone();
    let presets = use_memo((), |_| vramfit_core::gpu_presets());
    let preset = state
        .preset
        .as_ref()
        .and_then(|id| presets.iter().find(|p| p.id == id.as_str()))
        .cloned();
    let fatal = state
        .failure
        .as_ref()
        .filter(|f| f.is_fatal() || state.adapter.is_none());
    html! {
        <div class="bench" id="bench">
            <section class="card bench-intro" aria-labelledby="bench-title">
                <h2 id="bench-title" class="card-title">{ t(lang, Key::BenchTitle) }</h2>
                <p class="card-sub">{ t(lang, Key::BenchIntro) }</p>
                if state.phase == Phase::Detecting {
                    <p class="bench-status" id="bench-detecting" role="status">{ t(lang, Key::BenchDetecting) }</p>
                }
                if let Some(failure) = fatal {
                    { failure_notice(failure, lang) }
                }
                if let Some(adapter) = &state.adapter {
                    { adapter_details(adapter, lang) }
                    <PresetPicker adapter={adapter.clone()} presets={presets.clone()} chosen={state.preset.clone()} on_action={bench.on_action.clone()} />
                }
            </section>
            if state.adapter.is_some() {
                { run_card(&state, &bench.on_action, &bench.on_start, &bench.on_cancel, lang) }
            }
            if let Some(finished) = &state.finished {
                <BenchResults
                    finished={finished.clone()}
                    preset={preset}
                    projection={state.projection}
                    software={state.adapter.as_ref().is_some_and(|a| a.is_software())}
                    on_export={bench.on_export.clone()}
                />
            }
        </div>
    }
}

/// The message for a failure: what happened, what to do, and the details.
fn failure_notice(failure: &Failure, lang: Lang) -> Html {
    let (title, advice) = match failure.kind {
        FailureKind::NoWebgpu => (Key::BenchNoWebgpu, Key::BenchNoWebgpuHelp),
        FailureKind::NoAdapter => (Key::BenchNoAdapter, Key::BenchNoWebgpuHelp),
        FailureKind::RequestDevice => (Key::BenchNoDevice, Key::BenchNoWebgpuHelp),
        FailureKind::Limits => (Key::BenchLimits, Key::BenchLimitsHelp),
        FailureKind::OutOfMemory => (Key::BenchOom, Key::BenchOomHelp),
        FailureKind::Shader => (Key::BenchShader, Key::BenchShaderHelp),
        FailureKind::DeviceLost => (Key::BenchLost, Key::BenchLostHelp),
        FailureKind::Cancelled => (Key::BenchCancelled, Key::BenchCancelledHelp),
        FailureKind::LoadFailed => (Key::BenchLoadFailed, Key::BenchLoadFailedHelp),
        FailureKind::Crashed => (Key::BenchCrashed, Key::BenchCrashedHelp),
        FailureKind::Validation | FailureKind::Invalid | FailureKind::Other => {
            (Key::BenchFailed, Key::BenchFailedHelp)
        }
    };
    let cancelled = failure.kind == FailureKind::Cancelled;
    html! {
        <div
            id="bench-error"
            class={classes!("notice", if cancelled { "notice-info" } else { "notice-error" })}
            role={if cancelled { "status" } else { "alert" }}
            data-kind={format!("{:?}", failure.kind)}
        >
            <strong>{ t(lang, title) }</strong>{ " " }{ t(lang, advice) }
            if !failure.message.is_empty() && !cancelled {
                <span class="bench-detail" translate="no">{ &failure.message }</span>
            }
        </div>
    }
}

/// The adapter: name, features, limits.
fn adapter_details(adapter: &Adapter, lang: Lang) -> Html {
    let yes_no = |on: bool| t(lang, if on { Key::BenchYes } else { Key::BenchNo });
    let mib = |b: u64| Bytes(b).to_string();
    let label = adapter.label();
    html! {
        <dl class="bench-adapter" id="bench-adapter">
            <div><dt>{ t(lang, Key::BenchGpu) }</dt><dd translate="no" id="bench-adapter-name">
                { if label.is_empty() { "?".to_string() } else { label } }
                if adapter.fallback { { " " }<span class="bench-tag">{ t(lang, Key::BenchSoftware) }</span> }
            </dd></div>
            <div><dt translate="no">{ "shader-f16" }</dt><dd id="bench-f16" data-on={adapter.shader_f16.to_string()}>{ yes_no(adapter.shader_f16) }</dd></div>
            <div><dt translate="no">{ "timestamp-query" }</dt><dd>{ yes_no(adapter.timestamp_query) }</dd></div>
            <div><dt>{ t(lang, Key::BenchLimitsLabel) }</dt><dd>{ tf(lang, Key::BenchLimitsValue, &[
                &mib(adapter.limits.max_buffer_size),
                &mib(adapter.limits.max_storage_buffer_binding_size),
                &Bytes(u64::from(adapter.limits.max_compute_workgroup_storage_size)).to_string(),
                &adapter.limits.max_compute_invocations_per_workgroup.to_string(),
            ]) }</dd></div>
        </dl>
    }
}

/// Props of [`PresetPicker`].
#[derive(Properties, PartialEq)]
struct PresetPickerProps {
    adapter: Adapter,
    presets: std::rc::Rc<Vec<GpuPreset>>,
    chosen: Option<String>,
    on_action: Callback<BenchAction>,
}

/// The GPU preset the percentages use: the name-matched one preselected,
/// the adapter's vendor first, "unknown" always possible.
#[function_component]
fn PresetPicker(props: &PresetPickerProps) -> Html {
    let lang = use_prefs().lang;
    let node = use_node_ref();
    let value = props.chosen.clone().unwrap_or_default();
    use_select_value(node.clone(), AttrValue::from(value.clone()));
    let matched = matching_preset(&props.adapter, &props.presets).map(|p| p.id.as_ref());
    let vendor = vendor_presets(&props.adapter, &props.presets);
    let on_change = {
        let on_action = props.on_action.clone();
        Callback::from(move |e: Event| {
            let id = e
                .target_dyn_into::<HtmlSelectElement>()
                .map(|s| s.value())
                .unwrap_or_default();
            on_action.emit(BenchAction::SetPreset(Some(id).filter(|s| !s.is_empty())));
        })
    };
    let option = |p: &GpuPreset| html! { <option value={p.id.to_string()} selected={p.id == value} translate="no">{ p.name.to_string() }</option> };
    let hint = match (matched, &props.chosen) {
        (Some(m), Some(c)) if m == c.as_str() => Key::BenchPresetMatched,
        (_, Some(_)) => Key::BenchPresetChosen,
        (_, None) => Key::BenchPresetUnknown,
    };
    html! {
        <div class="field bench-preset">
            <label for="bench-gpu">{ t(lang, Key::BenchPresetLabel) }</label>
            <select id="bench-gpu" ref={node} onchange={on_change}>
                <option value="" selected={value.is_empty()}>{ t(lang, Key::BenchPresetNone) }</option>
                if !vendor.is_empty() {
                    <optgroup label={t(lang, Key::BenchPresetVendor)}>{ for vendor.iter().map(|p| option(p)) }</optgroup>
                }
                <optgroup label={t(lang, Key::BenchPresetAll)}>{ for props.presets.iter().map(option) }</optgroup>
            </select>
            <p class="field-hint" id="bench-gpu-hint">{ t(lang, hint) }</p>
        </div>
    }
}

/// Choices, Start / Cancel, the progress bar and a failed run's message.
fn run_card(
    state: &BenchState,
    on_action: &Callback<BenchAction>,
    on_start: &Callback<()>,
    on_cancel: &Callback<()>,
    lang: Lang,
) -> Html {
    let running = matches!(state.phase, Phase::Running(_));
    let check = |id: String,
                 label: Html,
                 checked: bool,
                 disabled: bool,
                 action: fn(bool) -> Option<BenchAction>| {
        let on_action = on_action.clone();
        let onchange = Callback::from(move |e: Event| {
            let on = e
                .target_dyn_into::<HtmlInputElement>()
                .is_some_and(|i| i.checked());
            if let Some(a) = action(on) {
                on_action.emit(a);
            }
        });
        html! {
            <label class="bench-check"><input type="checkbox" id={id} {checked} disabled={disabled || running} {onchange} />{ label }</label>
        }
    };
    let kernel_check = |name: &'static str| {
        let on_action = on_action.clone();
        let onchange = Callback::from(move |e: Event| {
            let on = e
                .target_dyn_into::<HtmlInputElement>()
                .is_some_and(|i| i.checked());
            on_action.emit(BenchAction::Toggle(name, on));
        });
        html! {
            <label class="bench-check"><input type="checkbox" id={format!("bench-k-{name}")} checked={state.chosen.contains(&name)} disabled={running} {onchange} />
                <span translate="no">{ name }</span></label>
        }
    };
    let size_radio = |size: Size, key: Key| {
        let on_action = on_action.clone();
        html! {
            <label class="bench-check"><input type="radio" name="bench-size" id={format!("bench-size-{}", size.name())}
                checked={state.size == size} disabled={running} onchange={Callback::from(move |_| on_action.emit(BenchAction::SetSize(size)))} />{ t(lang, key) }</label>
        }
    };
    let f16_available = state.f16_available();
    let run_failure = state.failure.as_ref().filter(|f| !f.is_fatal());
    html! {
        <section class="card bench-run" aria-labelledby="bench-run-title">
            <h2 id="bench-run-title" class="card-title">{ t(lang, Key::BenchRunTitle) }</h2>
            <fieldset class="bench-group">
                <legend>{ t(lang, Key::BenchTypes) }</legend>
                { check("bench-f32".into(), html! { <span translate="no">{ "fp32" }</span> }, true, true, |_| None) }
                { check("bench-f16-on".into(), html! { <span translate="no">{ "fp16" }</span> }, state.f16 && f16_available, !f16_available, |on| Some(BenchAction::SetF16(on))) }
                if !f16_available {
                    <p class="field-hint bench-note" id="bench-no-f16">{ t(lang, Key::BenchNoF16) }</p>
                }
            </fieldset>
            <fieldset class="bench-group">
                <legend>{ t(lang, Key::BenchSize) }</legend>
                { size_radio(Size::Small, Key::BenchSizeSmall) }
                { size_radio(Size::Default, Key::BenchSizeDefault) }
                { size_radio(Size::Large, Key::BenchSizeLarge) }
            </fieldset>
            <fieldset class="bench-group">
                <legend>{ t(lang, Key::BenchKernels) }</legend>
                { for KERNELS.iter().map(|k| kernel_check(k)) }
                <span class="bench-sep" aria-hidden="true"></span>
                { for LAYERS.iter().map(|k| kernel_check(k)) }
                <p class="field-hint">{ t(lang, Key::BenchLayersHint) }</p>
            </fieldset>
            { check("bench-quick".into(), html! { { t(lang, Key::BenchQuick) } }, state.quick, false, |on| Some(BenchAction::SetQuick(on))) }
            <div class="bench-actions">
                <button type="button" class="button" id="bench-start" disabled={!state.can_start()}
                    onclick={ { let s = on_start.clone(); Callback::from(move |_| s.emit(())) } }>{ t(lang, Key::BenchStart) }</button>
                if running {
                    <button type="button" class="button button-secondary" id="bench-cancel"
                        onclick={ { let c = on_cancel.clone(); Callback::from(move |_| c.emit(())) } }>{ t(lang, Key::BenchCancel) }</button>
                }
            </div>
            if let Phase::Running(progress) = &state.phase {
                <div class="bench-progress" role="status">
                    <progress id="bench-progress" max="100" value={progress.percent().to_string()} aria-label={t(lang, Key::BenchProgress)}></progress>
                    <span class="bench-progress-text">
                        { tf(lang, Key::BenchProgressOf, &[&progress.done.to_string(), &progress.total.max(1).to_string()]) }
                        { " " }<span translate="no" id="bench-progress-label">{ &progress.label }</span>
                    </span>
                </div>
            }
            if let Some(failure) = run_failure {
                { failure_notice(failure, lang) }
            }
        </section>
    }
}
