//! "Which GPUs can run it?": on request, every GPU preset (alone or 2, 4
//! or 8 of them) that takes the configuration's batch, smallest first, with
//! its memory and largest batch, and a Use button that picks it.

use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use crate::planner::{GpuOptions, gpu_rows};
use crate::present::group_digits;
use crate::state::Action;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`GpuFinder`].
#[derive(Properties, PartialEq)]
pub struct GpuFinderProps {
    /// The micro-batch on screen.
    pub batch: u64,
    /// The answer for the inputs on screen, once asked for.
    #[prop_or_default]
    pub options: Option<Rc<GpuOptions>>,
    /// Emits [`Action::FindGpus`] and [`Action::UseGpus`].
    pub on_action: Callback<Action>,
}

/// The "which GPUs" card.
#[function_component]
pub fn GpuFinder(props: &GpuFinderProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let on_find = {
        let on_action = props.on_action.clone();
        Callback::from(move |_| on_action.emit(Action::FindGpus))
    };
    let body = match props.options.as_deref().map(|o| &o.result) {
        None => html! {},
        Some(Err(e)) => {
            html! { <p class="field-error" role="alert">{ tf(lang, Key::GpusFailed, &[&crate::messages::core_error(e, lang)]) }</p> }
        }
        Some(Ok(options)) => {
            let (rows, more) = gpu_rows(options, prefs.units, lang);
            html! {
                <>
                    if rows.is_empty() {
                        <p class="empty" id="gpus-none">{ t(lang, Key::GpusNone) }</p>
                    } else {
                        { gpu_table("gpu-table", rows, lang, &props.on_action) }
                    }
                    if !more.is_empty() {
                        // The options that fit only a smaller batch, on request.
                        <details class="gpus-more" id="gpus-more">
                            <summary class="chart-note">{ tf(lang, Key::GpusMore, &[&group_digits(more.len() as u64)]) }</summary>
                            { gpu_table("gpu-table-more", more, lang, &props.on_action) }
                        </details>
                    }
                </>
            }
        }
    };
    html! {
        <section class="card" id="gpu-finder" aria-labelledby="gpu-finder-title">
            <h2 id="gpu-finder-title" class="card-title">{ t(lang, Key::GpusTitle) }</h2>
            <p class="card-sub">{ tf(lang, Key::GpusSub, &[&group_digits(props.batch)]) }</p>
            <button type="button" class="button" id="gpus-find" onclick={on_find}>{ t(lang, Key::GpusFind) }</button>
            { body }
        </section>
    }
}

/// A table of GPU options, each with its Apply button.
fn gpu_table(
    id: &'static str,
    rows: Vec<crate::planner::GpuRow>,
    lang: crate::i18n::Lang,
    on_action: &Callback<Action>,
) -> Html {
    html! {
        <div class="table-scroll">
            <table class="data-table gpu-table" id={id}>
                <thead>
                    <tr>
                        <th scope="col">{ t(lang, Key::GpusGpu) }</th>
                        <th scope="col" class="num max">{ t(lang, Key::GpusMemory) }</th>
                        <th scope="col" class="num max">{ t(lang, Key::GpusMaxBatch) }</th>
                        <th scope="col" class="action"><span class="visually-hidden">{ t(lang, Key::TechApply) }</span></th>
                    </tr>
                </thead>
                <tbody>
                    { for rows.into_iter().map(|row| {
                        let use_it = {
                            let on_action = on_action.clone();
                            let (gpu, count, ep, etp) = (row.gpu.to_string(), row.count, row.ep, row.etp);
                            Callback::from(move |_| on_action.emit(Action::UseGpus(gpu.clone(), count, ep, etp)))
                        };
                        html! {
                            <tr data-gpu={row.gpu} data-count={row.count.to_string()}>
                                <th scope="row">
                                    <span translate="no">{ row.title.clone() }</span>
                                    // Phones drop the columns: memory and largest batch go under the name.
                                    <span class="gpu-sub">{ tf(lang, Key::GpusMaxBatchSub, &[&row.memory, &row.max_batch]) }</span>
                                </th>
                                <td class="num max">{ row.memory.clone() }</td>
                                <td class="num max">{ row.max_batch.clone() }</td>
                                <td class="action">
                                    <button type="button" class="link-button" aria-label={tf(lang, Key::GpusUseLabel, &[&row.title])} onclick={use_it}>
                                        { t(lang, Key::TechApply) }
                                    </button>
                                </td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
        </div>
    }
}
