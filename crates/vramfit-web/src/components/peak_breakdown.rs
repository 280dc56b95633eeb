//! What fills memory at the peak: a stacked bar and a table of the six categories.

use super::BreakdownBar;
use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use crate::labels;
use crate::present::{breakdown_rows, bytes, in_mode, percent};
use vramfit_core::config::Mode;
use vramfit_core::{Breakdown, Phase};
use yew::prelude::*;

/// Props of [`PeakBreakdown`].
#[derive(Properties, PartialEq)]
pub struct PeakBreakdownProps {
    /// Memory by category at the peak.
    pub at_peak: Breakdown,
    /// Phase of the peak.
    pub phase: Phase,
    /// Training step of the peak.
    pub step: u32,
    /// Op at the peak.
    pub op: AttrValue,
    /// Training, fine-tuning or inference (which words the notes use).
    #[prop_or(Mode::Train)]
    pub mode: Mode,
}

/// The breakdown card.
#[function_component]
pub fn PeakBreakdown(props: &PeakBreakdownProps) -> Html {
    let prefs = use_prefs();
    let (lang, units) = (prefs.lang, prefs.units);
    let rows = breakdown_rows(&props.at_peak);
    let total = props.at_peak.total();
    html! {
        <section class="card" id="breakdown" aria-labelledby="breakdown-title">
            <h2 id="breakdown-title" class="card-title">{ t(lang, Key::BreakdownTitle) }</h2>
            <p class="card-sub">
                { tf(lang, Key::BreakdownWhen, &[labels::phase(props.phase, lang), &props.step.to_string()]) }
                { " " }
                <code class="op" translate="no">{ props.op.clone() }</code>
            </p>
            <BreakdownBar at_peak={props.at_peak} />
            <table class="breakdown-table">
                <thead>
                    <tr>
                        <th scope="col">{ t(lang, Key::ColCategory) }</th>
                        <th scope="col" class="num">{ t(lang, Key::ColMemory) }</th>
                        <th scope="col" class="num">{ t(lang, Key::ColShare) }</th>
                    </tr>
                </thead>
                <tbody>
                    { for rows.iter().map(|r| html! {
                        <tr id={format!("row-{}", r.key)} data-bytes={r.bytes.0.to_string()}>
                            <th scope="row">
                                <span class={classes!("swatch", format!("cat-{}", r.key))} aria-hidden="true"></span>
                                <span class="cat-name">{ t(lang, r.label) }</span>
                                <span class="cat-note">{ t(lang, in_mode(r.note, props.mode)) }</span>
                            </th>
                            <td class="num">{ bytes(r.bytes, units) }</td>
                            <td class="num">{ percent(r.share) }</td>
                        </tr>
                    }) }
                </tbody>
                <tfoot>
                    <tr>
                        <th scope="row">{ t(lang, Key::TotalAllocated) }</th>
                        <td class="num">{ bytes(total, units) }</td>
                        <td class="num">{ "100%" }</td>
                    </tr>
                </tfoot>
            </table>
        </section>
    }
}
