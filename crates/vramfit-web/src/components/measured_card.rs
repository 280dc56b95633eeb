//! "Compare with a measurement": a file input and drop zone for a PyTorch
//! memory snapshot or `memory_stats()` JSON, read by a worker
//! ([`crate::measured::read_in_worker`]); the measurement beside the
//! estimate and the differences, largest first. A bad file shows its error
//! and leaves the configuration, the estimate and any earlier measurement
//! as they were.

use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use crate::measured::{self, difference, error_message};
use crate::present::{bytes, group_digits};
use crate::report::Report;
use std::rc::Rc;
use vramfit_core::measured::{ErrorData, Measurement, Source, compare};
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Props of [`MeasuredCard`].
#[derive(Properties, PartialEq)]
pub struct MeasuredCardProps {
    /// The estimate the measurement is compared with.
    pub report: Rc<Report>,
    /// The measurement read so far, if any, and its file's name.
    pub measured: Option<Rc<(String, Measurement)>>,
    /// Emits a newly read measurement, or `None` to remove it.
    pub on_measured: Callback<Option<Rc<(String, Measurement)>>>,
}

/// What the card is doing.
#[derive(Clone, Debug, PartialEq)]
enum Status {
    Idle,
    Reading(String),
    Failed(String, ErrorData),
}

/// The comparison card.
#[function_component]
pub fn MeasuredCard(props: &MeasuredCardProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let status = use_state_eq(|| Status::Idle);
    let take = {
        let (status, on_measured) = (status.clone(), props.on_measured.clone());
        Callback::from(move |file: web_sys::File| {
            let name = file.name();
            if let Some(e) = measured::too_large(file.size()) {
                status.set(Status::Failed(name, e));
                return;
            }
            status.set(Status::Reading(name.clone()));
            let (status, on_measured) = (status.clone(), on_measured.clone());
            measured::read_in_worker(
                file,
                Callback::from(move |r: Result<Measurement, ErrorData>| match r {
                    Ok(m) => {
                        status.set(Status::Idle);
                        on_measured.emit(Some(Rc::new((name.clone(), m))));
                    }
                    Err(e) => status.set(Status::Failed(name.clone(), e)),
                }),
            );
        })
    };
    let onchange = {
        let take = take.clone();
        Callback::from(move |e: Event| {
            let input = e.target_dyn_into::<HtmlInputElement>();
            if let Some(file) = input
                .as_ref()
                .and_then(|i| i.files())
                .and_then(|f| f.get(0))
            {
                take.emit(file);
            }
            // The same file chosen again is read again.
            if let Some(i) = input {
                i.set_value("");
            }
        })
    };
    let drop = crate::hooks::use_file_drop(take);
    let remove = {
        let (status, on_measured) = (status.clone(), props.on_measured.clone());
        Callback::from(move |_: MouseEvent| {
            status.set(Status::Idle);
            on_measured.emit(None);
        })
    };
    let comparison = use_memo((props.report.clone(), props.measured.clone()), |(r, m)| {
        m.as_ref().map(|m| compare(&m.1, &r.estimate))
    });
    let code = |s: &str| html! { <code translate="no">{ s.to_string() }</code> };
    let sub = {
        let template = t(lang, Key::MeasuredSub);
        let (a, rest) = template.split_once("{0}").unwrap_or((template, ""));
        let (b, c) = rest.split_once("{1}").unwrap_or((rest, ""));
        html! { <>{ a }{ code("torch.cuda.memory._dump_snapshot") }{ b }{ code("torch.cuda.memory_stats()") }{ c }</> }
    };
    let status_line = match &*status {
        Status::Idle => match &props.measured {
            Some(m) => {
                let what = match m.1.source {
                    Source::Snapshot => tf(
                        lang,
                        Key::MeasuredSnapshot,
                        &[&group_digits(m.1.trace_events)],
                    ),
                    Source::MemoryStats => t(lang, Key::MeasuredStats).to_string(),
                };
                html! { <p class="field-ok" id="measured-status">{ tf(lang, Key::MeasuredRead, &[&m.0, &what]) }</p> }
            }
            None => Html::default(),
        },
        Status::Reading(name) => html! {
            <p class="field-hint" id="measured-status" aria-live="polite">{ tf(lang, Key::MeasuredReading, &[name]) }</p>
        },
        Status::Failed(name, e) => {
            let (message, detail) = error_message(e, lang, prefs.units);
            html! {
                <p class="field-error" id="measured-status" role="alert">
                    <code translate="no">{ name.clone() }</code>{ ": " }{ message }
                    if let Some(d) = detail { { " " }<code translate="no" class="measured-detail">{ d }</code> }
                    { " " }{ t(lang, Key::MeasuredKept) }
                </p>
            }
        }
    };
    let table = comparison.as_ref().as_ref().map(|c| {
        let (m, s) = (&c.measured, &c.simulated);
        let b = |v| bytes(v, prefs.units);
        let opt = |v: Option<vramfit_core::Bytes>| v.map_or_else(|| "–".to_string(), b);
        let row = |key: Key, a: String, z: String| html! {
            <tr><th scope="row">{ t(lang, key) }</th><td>{ a }</td><td>{ z }</td></tr>
        };
        html! {
            <>
                <table class="measured-table" id="measured-table">
                    <thead><tr><td></td><th scope="col">{ t(lang, Key::MeasuredColMeasured) }</th><th scope="col">{ t(lang, Key::MeasuredColSimulated) }</th></tr></thead>
                    <tbody>
                        { row(Key::MeasuredRowAllocated, b(m.peak_allocated_bytes), b(s.peak_allocated_bytes)) }
                        { row(Key::MeasuredRowReserved, b(m.peak_reserved_bytes), b(s.peak_reserved_bytes)) }
                        { row(Key::MeasuredRowSegments, format!("{} / {}", m.segments.small, m.segments.large), format!("{} / {}", s.segments.small, s.segments.large)) }
                        { row(Key::MeasuredRowLargest, opt(m.segments.largest), opt(s.segments.largest)) }
                    </tbody>
                </table>
                <h3 class="card-subtitle">{ t(lang, Key::MeasuredDifferences) }</h3>
                if c.differences.is_empty() {
                    <p id="measured-differences">{ t(lang, Key::MeasuredSame) }</p>
                } else {
                    <ul class="measured-differences" id="measured-differences">
                        { for c.differences.iter().map(|d| html! { <li>{ difference(d, lang, prefs.units) }</li> }) }
                    </ul>
                }
                <button type="button" class="link-button" onclick={remove}>{ t(lang, Key::MeasuredRemove) }</button>
            </>
        }
    });
    html! {
        <section class="card" id="measured" aria-labelledby="measured-title">
            <h2 id="measured-title" class="card-title">{ t(lang, Key::MeasuredTitle) }</h2>
            <p class="card-sub">{ sub }</p>
            <div
                class={classes!("measured-drop", drop.dragging.then_some("dragging"))}
                ondragover={drop.ondragover.clone()}
                ondragleave={drop.ondragleave.clone()}
                ondrop={drop.ondrop.clone()}
            >
                <label class="file-button">
                    { t(lang, Key::MeasuredChoose) }
                    <input
                        type="file"
                        id="measured-file"
                        class="visually-hidden"
                        accept=".pickle,.pkl,.json,application/octet-stream,application/json"
                        aria-label={t(lang, Key::MeasuredDrop)}
                        aria-describedby="measured-status"
                        {onchange}
                    />
                </label>
            </div>
            { status_line }
            { table.unwrap_or_default() }
        </section>
    }
}
