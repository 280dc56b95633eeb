//! The stacked bar of what fills memory at the peak, optionally with a
//! compact legend (the widget's whole breakdown).

use crate::hooks::use_prefs;
use crate::i18n::t;
use crate::present::{breakdown_rows, bytes, css_width, percent};
use vramfit_core::Breakdown;
use yew::prelude::*;

/// Props of [`BreakdownBar`].
#[derive(Properties, PartialEq)]
pub struct BreakdownBarProps {
    /// Memory by category at the peak.
    pub at_peak: Breakdown,
    /// Show a legend with each category's bytes under the bar.
    #[prop_or_default]
    pub legend: bool,
}

/// The bar (an image with a text alternative) and the optional legend.
#[function_component]
pub fn BreakdownBar(props: &BreakdownBarProps) -> Html {
    let prefs = use_prefs();
    let (lang, units) = (prefs.lang, prefs.units);
    let rows = breakdown_rows(&props.at_peak);
    let label = rows
        .iter()
        .map(|r| format!("{} {}", t(lang, r.label), percent(r.share)))
        .collect::<Vec<_>>()
        .join(", ");
    html! {
        <>
            <div class="stack" role="img" aria-label={label}>
                { for rows.iter().filter(|r| r.share > 0.0).map(|r| html! {
                    <div
                        class={classes!("stack-seg", format!("cat-{}", r.key))}
                        style={css_width(r.share)}
                        title={format!("{}: {} ({})", t(lang, r.label), bytes(r.bytes, units), percent(r.share))}
                    ></div>
                }) }
            </div>
            if props.legend {
                <ul class="legend">
                    { for rows.iter().filter(|r| r.share > 0.0).map(|r| html! {
                        <li data-bytes={r.bytes.0.to_string()} data-cat={r.key}>
                            <span class={classes!("swatch", format!("cat-{}", r.key))} aria-hidden="true"></span>
                            { t(lang, r.label) }{ " " }<span class="legend-value">{ bytes(r.bytes, units) }</span>
                        </li>
                    }) }
                </ul>
            }
        </>
    }
}
