//! What fills memory at the peak: a stacked bar and a table of the six categories.

use crate::labels;
use crate::present::{breakdown_rows, css_width, percent};
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
}

/// The breakdown card.
#[function_component]
pub fn PeakBreakdown(props: &PeakBreakdownProps) -> Html {
    let rows = breakdown_rows(&props.at_peak);
    let total = props.at_peak.total();
    let label = rows.iter().map(|r| format!("{} {}", r.label, percent(r.share))).collect::<Vec<_>>().join(", ");
    html! {
        <section class="card" id="breakdown" aria-labelledby="breakdown-title">
            <h2 id="breakdown-title" class="card-title">{ "What fills memory at the peak" }</h2>
            <p class="card-sub">
                { format!("During the {} of step {}, at ", labels::phase(props.phase), props.step) }
                <code class="op">{ props.op.clone() }</code>
            </p>
            <div class="stack" role="img" aria-label={label}>
                { for rows.iter().filter(|r| r.share > 0.0).map(|r| html! {
                    <div
                        class={classes!("stack-seg", format!("cat-{}", r.key))}
                        style={css_width(r.share)}
                        title={format!("{}: {} ({})", r.label, r.bytes, percent(r.share))}
                    ></div>
                }) }
            </div>
            <table class="breakdown-table">
                <thead>
                    <tr><th scope="col">{ "Category" }</th><th scope="col" class="num">{ "Memory" }</th><th scope="col" class="num">{ "Share" }</th></tr>
                </thead>
                <tbody>
                    { for rows.iter().map(|r| html! {
                        <tr id={format!("row-{}", r.key)} data-bytes={r.bytes.0.to_string()}>
                            <th scope="row">
                                <span class={classes!("swatch", format!("cat-{}", r.key))} aria-hidden="true"></span>
                                <span class="cat-name">{ r.label }</span>
                                <span class="cat-note">{ r.note }</span>
                            </th>
                            <td class="num">{ r.bytes.to_string() }</td>
                            <td class="num">{ percent(r.share) }</td>
                        </tr>
                    }) }
                </tbody>
                <tfoot>
                    <tr>
                        <th scope="row">{ "Total (allocated)" }</th>
                        <td class="num">{ total.to_string() }</td>
                        <td class="num">{ "100%" }</td>
                    </tr>
                </tfoot>
            </table>
        </section>
    }
}
