//! The per-layer table: parameters, bytes saved for backward and forward
//! FLOPs of each layer, sortable by any column (the headers are buttons, so
//! sorting works from the keyboard), the first rows shown until expanded.

use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use crate::layers::{LayerColumn, LayerSort};
use crate::present::{bytes, count, flops};
use crate::report::Report;
use crate::state::Action;
use std::rc::Rc;
use yew::prelude::*;

/// Rows shown before "Show all".
const FIRST_ROWS: usize = 12;

/// Props of [`LayerTable`].
#[derive(Properties, PartialEq)]
pub struct LayerTableProps {
    /// The report whose layers are listed.
    pub report: Rc<Report>,
    /// The sort in effect.
    pub sort: LayerSort,
    /// Emits [`Action::SortLayers`].
    pub on_action: Callback<Action>,
}

/// The per-layer card.
#[function_component]
pub fn LayerTable(props: &LayerTableProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let expanded = use_state_eq(|| false);
    let rows = props.sort.apply(&props.report.estimate.layers);
    let mode = props.report.estimate.config.mode;
    let total = rows.len();
    let shown = if *expanded {
        total
    } else {
        total.min(FIRST_ROWS)
    };
    let header = |column: LayerColumn| {
        let key = match column {
            LayerColumn::Name => Key::ColLayer,
            LayerColumn::Parameters => Key::ColParameters,
            LayerColumn::Saved => crate::present::in_mode(Key::ColSaved, mode),
            LayerColumn::Flops => Key::ColFlops,
        };
        let sorted = props.sort.column == column;
        let aria_sort = match (sorted, props.sort.descending) {
            (false, _) => None,
            (true, false) => Some("ascending"),
            (true, true) => Some("descending"),
        };
        let on_action = props.on_action.clone();
        let label = t(lang, key);
        html! {
            <th scope="col" class={classes!((column != LayerColumn::Name).then_some("num"))} aria-sort={aria_sort}>
                <button
                    type="button"
                    class={classes!("sort", sorted.then_some("sorted"))}
                    id={format!("sort-{}", column.id())}
                    title={tf(lang, Key::SortBy, &[label])}
                    onclick={Callback::from(move |_| on_action.emit(Action::SortLayers(column)))}
                >
                    { label }
                    <span class="sort-icon" aria-hidden="true">
                        { match aria_sort { Some("ascending") => "▲", Some(_) => "▼", None => "↕" } }
                    </span>
                </button>
            </th>
        }
    };
    let toggle = {
        let expanded = expanded.clone();
        Callback::from(move |_| expanded.set(!*expanded))
    };
    html! {
        <section class="card" id="layers" aria-labelledby="layers-title">
            <h2 id="layers-title" class="card-title">{ t(lang, Key::LayersTitle) }</h2>
            <p class="card-sub">{ t(lang, crate::present::in_mode(Key::LayersSub, mode)) }</p>
            <div class="table-scroll">
                <table class="data-table" id="layer-table" aria-labelledby="layers-title">
                    <thead><tr>{ for LayerColumn::ALL.iter().copied().map(header) }</tr></thead>
                    <tbody>
                        { for rows.iter().take(shown).map(|r| html! {
                            <tr data-layer={r.name.clone()} data-saved={r.saved_bytes.0.to_string()}>
                                <th scope="row"><code translate="no">{ r.name.clone() }</code></th>
                                <td class="num">{ count(r.parameters, lang) }</td>
                                <td class="num">{ bytes(r.saved_bytes, prefs.units) }</td>
                                <td class="num">{ flops(r.forward_flops) }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
            if total > FIRST_ROWS {
                <button type="button" class="link-button more" id="layers-more" aria-expanded={expanded.to_string()} onclick={toggle}>
                    { if *expanded { t(lang, Key::ShowFewerLayers).to_string() } else { tf(lang, Key::ShowAllLayers, &[&total.to_string()]) } }
                </button>
            }
        </section>
    }
}
