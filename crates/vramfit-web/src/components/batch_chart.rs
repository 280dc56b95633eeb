//! Memory vs batch size, as SVG: device and allocated memory per batch size,
//! the GPU's usable memory, the largest batch that fits. Each point takes
//! focus (arrow keys move between points) and shows its values on hover or
//! focus; a visually hidden table carries the same numbers.

use crate::browser;
use crate::chart::{batch_plot, batch_svg, num};
use crate::hooks::{use_prefs, use_width};
use crate::i18n::{Key, t};
use crate::present::{bytes, group_digits};
use crate::report::Report;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`BatchChart`].
#[derive(Properties, PartialEq)]
pub struct BatchChartProps {
    /// The report whose curve is drawn.
    pub report: Rc<Report>,
}

/// The batch-curve card.
#[function_component]
pub fn BatchChart(props: &BatchChartProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let node = use_node_ref();
    let width = use_width(node.clone()).unwrap_or(640);
    let plot = use_memo((props.report.clone(), width, prefs), |(r, w, p)| {
        batch_plot(r, f64::from(*w), *p)
    });
    // The static drawing (see `chart::svg`), rebuilt only when the plot changes.
    let background = use_memo(plot.clone(), |plot| batch_svg(plot));
    let current = plot.points.iter().position(|p| p.current).unwrap_or(0);
    let active = use_state_eq(|| None::<usize>);
    let shown = active.filter(|i| *i < plot.points.len()).unwrap_or(current);
    let f = plot.frame;
    let onkeydown = {
        let active = active.clone();
        let last = plot.points.len().saturating_sub(1);
        Callback::from(move |e: KeyboardEvent| {
            let next = match e.key().as_str() {
                "ArrowRight" | "ArrowUp" => (shown + 1).min(last),
                "ArrowLeft" | "ArrowDown" => shown.saturating_sub(1),
                "Home" => 0,
                "End" => last,
                _ => return,
            };
            e.prevent_default();
            active.set(Some(next));
            browser::focus(&format!("batch-point-{next}"));
        })
    };
    let onmouseleave = {
        let active = active.clone();
        Callback::from(move |_: MouseEvent| active.set(None))
    };
    let readout = plot
        .points
        .get(shown)
        .map(|p| p.label.clone())
        .unwrap_or_default();
    html! {
        <section class="card chart-card" id="batch-chart" aria-labelledby="batch-chart-title">
            <h2 id="batch-chart-title" class="card-title">{ t(lang, Key::BatchChartTitle) }</h2>
            <p class="card-sub">{ t(lang, Key::BatchChartSub) }</p>
            <ul class="legend" aria-hidden="true">
                <li><span class="key key-device"></span>{ t(lang, Key::DeviceUsed) }</li>
                <li><span class="key key-allocated"></span>{ t(lang, Key::Allocated) }</li>
                <li><span class="key key-limit"></span>{ plot.limit_label.clone() }</li>
            </ul>
            <p class="chart-readout" id="batch-readout" aria-hidden="true">{ readout }</p>
            <div class="chart" ref={node} {onmouseleave}>
                { (*background).clone() }
                <svg
                    class="chart-svg chart-overlay"
                    viewBox={f.view_box()}
                    role="group"
                    aria-labelledby="batch-chart-title"
                    aria-describedby="batch-chart-table"
                    {onkeydown}
                >
                    if let Some(p) = plot.points.get(shown) {
                        <line class="cursor" x1={num(p.x)} x2={num(p.x)} y1={num(f.y0())} y2={num(f.y1())} />
                    }
                    { for plot.points.iter().enumerate().map(|(i, p)| {
                        let hover = {
                            let active = active.clone();
                            Callback::from(move |_: MouseEvent| active.set(Some(i)))
                        };
                        let focus = {
                            let active = active.clone();
                            Callback::from(move |_: FocusEvent| active.set(Some(i)))
                        };
                        html! {
                            <g
                                class={classes!("point", if p.fits { "fits" } else { "no-fit" }, p.current.then_some("current"), (i == shown).then_some("active"))}
                                id={format!("batch-point-{i}")}
                                data-batch={p.batch.to_string()}
                                data-bytes={p.device.0.to_string()}
                                tabindex={if i == shown { "0" } else { "-1" }}
                                role="img"
                                aria-label={p.label.clone()}
                                onmouseenter={hover}
                                onfocus={focus}
                            >
                                <title>{ p.label.clone() }</title>
                                <circle class="hit" cx={num(p.x)} cy={num(p.y)} r="11" />
                                <circle class="dot" cx={num(p.x)} cy={num(p.y)} r={if p.current { "5.5" } else { "3.5" }} />
                            </g>
                        }
                    }) }
                </svg>
            </div>
            <p class="axis-title" aria-hidden="true">{ t(lang, Key::AxisBatch) }</p>
            <table class="visually-hidden" id="batch-chart-table">
                <caption>{ t(lang, Key::BatchChartTitle) }</caption>
                <thead>
                    <tr>
                        <th scope="col">{ t(lang, Key::ColBatch) }</th>
                        <th scope="col">{ t(lang, Key::DeviceUsed) }</th>
                        <th scope="col">{ t(lang, Key::Allocated) }</th>
                        <th scope="col">{ t(lang, Key::ColFits) }</th>
                    </tr>
                </thead>
                <tbody>
                    { for plot.points.iter().map(|p| html! {
                        <tr>
                            <th scope="row">{ group_digits(p.batch) }</th>
                            <td>{ bytes(p.device, prefs.units) }</td>
                            <td>{ bytes(p.allocated, prefs.units) }</td>
                            <td>{ t(lang, if p.fits { Key::Yes } else { Key::No }) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </section>
    }
}
