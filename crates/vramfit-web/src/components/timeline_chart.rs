//! The step timeline, as SVG: allocated memory after each op of the two
//! simulated steps over bands for the forward pass, the backward pass and
//! the optimizer step, with the peak marked at its op. The chart is a
//! slider: hovering or the arrow keys move a cursor through the ops and the
//! readout above names the op and its memory; a visually hidden table gives
//! each phase's figures.

use crate::chart::{PointText, num, phase_spans, timeline_plot, timeline_svg};
use crate::hooks::{use_prefs, use_width};
use crate::i18n::{Key, t, tf};
use crate::labels;
use crate::present::{bytes, group_digits};
use crate::report::Report;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`TimelineChart`].
#[derive(Properties, PartialEq)]
pub struct TimelineChartProps {
    /// The report whose timeline is drawn.
    pub report: Rc<Report>,
    /// A measured timeline's allocated bytes to draw over it (from "Compare
    /// with a measurement").
    #[prop_or_default]
    pub measured: Option<Rc<Vec<vramfit_core::Bytes>>>,
}

/// The timeline card.
#[function_component]
pub fn TimelineChart(props: &TimelineChartProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let mode = props.report.estimate.config.mode;
    let node = use_node_ref();
    let width = use_width(node.clone()).unwrap_or(640);
    let plot = use_memo(
        (props.report.clone(), width, prefs, props.measured.clone()),
        |(r, w, p, m)| {
            timeline_plot(
                &r.estimate,
                f64::from(*w),
                *p,
                m.as_deref().map(Vec::as_slice),
            )
        },
    );
    // The static drawing (see `chart::svg`), rebuilt only when the plot changes.
    let background = use_memo(plot.clone(), |plot| timeline_svg(plot));
    let spans = use_memo(props.report.clone(), |r| phase_spans(&r.estimate.timeline));
    let cursor = use_state_eq(|| None::<usize>);
    let last = plot.samples.len().saturating_sub(1);
    let shown = cursor.filter(|i| *i <= last).unwrap_or(plot.peak);
    let f = plot.frame;
    let onkeydown = {
        let cursor = cursor.clone();
        let page = (plot.samples.len() / 10).max(1);
        let peak = plot.peak;
        Callback::from(move |e: KeyboardEvent| {
            let next = match e.key().as_str() {
                "ArrowRight" | "ArrowUp" => (shown + 1).min(last),
                "ArrowLeft" | "ArrowDown" => shown.saturating_sub(1),
                "PageUp" => (shown + page).min(last),
                "PageDown" => shown.saturating_sub(page),
                "Home" => 0,
                "End" => last,
                "p" | "P" => peak,
                _ => return,
            };
            e.prevent_default();
            cursor.set(Some(next));
        })
    };
    let onmousemove = {
        let cursor = cursor.clone();
        let node = node.clone();
        let xs: Vec<f64> = plot.samples.iter().map(|s| s.x).collect();
        let width = f.width;
        Callback::from(move |e: MouseEvent| {
            let Some(el) = node.cast::<web_sys::Element>() else {
                return;
            };
            let rect = el.get_bounding_client_rect();
            if rect.width() <= 0.0 {
                return;
            }
            let x = (f64::from(e.client_x()) - rect.left()) * width / rect.width();
            // The nearest drawn point (xs is sorted).
            let i = xs.partition_point(|&v| v < x);
            let nearest = match (i.checked_sub(1).and_then(|j| xs.get(j)), xs.get(i)) {
                (Some(&a), Some(&b)) if x - a < b - x => i - 1,
                (Some(_), None) => i - 1,
                _ => i,
            };
            cursor.set(Some(nearest));
        })
    };
    let onmouseleave = {
        let cursor = cursor.clone();
        Callback::from(move |_: MouseEvent| cursor.set(None))
    };
    let sample = plot.samples.get(shown);
    let timeline = &props.report.estimate.timeline;
    let point = sample.and_then(|s| timeline.get(s.index));
    let text = point.map(|p| PointText::of(p, prefs));
    // Op names are code: keep them out of translation, in a <code>.
    let readout = point.zip(text.as_ref()).map_or_else(Html::default, |(p, text)| {
        html! { <>{ text.context.clone() }{ " · " }<code translate="no">{ p.op.clone() }</code>{ " " }<strong>{ text.value.clone() }</strong></> }
    });
    let peak_legend = {
        let template = tf(lang, Key::PeakAt, &[&plot.peak_value, "{1}"]);
        let (before, after) = template
            .split_once("{1}")
            .map_or((template.clone(), String::new()), |(a, b)| {
                (a.to_string(), b.to_string())
            });
        html! { <>{ before }<code translate="no">{ props.report.estimate.peak_op.clone() }</code>{ after }</> }
    };
    html! {
        <section class="card chart-card" id="timeline" aria-labelledby="timeline-title">
            <h2 id="timeline-title" class="card-title">{ t(lang, crate::present::in_mode(Key::TimelineTitle, mode)) }</h2>
            <p class="card-sub">{ t(lang, crate::present::in_mode(Key::TimelineSub, mode)) }</p>
            <ul class="legend" aria-hidden="true">
                <li><span class="key band-forward"></span>{ labels::phase_short(vramfit_core::Phase::Forward, lang) }</li>
                <li><span class="key band-backward"></span>{ labels::phase_short(vramfit_core::Phase::Backward, lang) }</li>
                <li><span class="key band-optimizer"></span>{ labels::phase_short(vramfit_core::Phase::Optimizer, lang) }</li>
                <li><span class="key key-peak"></span>{ peak_legend }</li>
                if plot.measured_path.is_some() {
                    <li><span class="key key-measured"></span>{ t(lang, Key::TimelineMeasured) }</li>
                }
            </ul>
            <p class="chart-readout" id="timeline-readout" aria-hidden="true">{ readout }</p>
            <div
                class="chart scrub"
                ref={node}
                tabindex="0"
                role="slider"
                aria-label={t(lang, Key::TimelineScrub)}
                aria-describedby="timeline-table"
                aria-valuemin="0"
                aria-valuemax={last.to_string()}
                aria-valuenow={shown.to_string()}
                aria-valuetext={text.map(|t| t.label).unwrap_or_default()}
                data-peak-op={props.report.estimate.peak_op.clone()}
                data-bytes={props.report.estimate.peak_allocated_bytes.0.to_string()}
                data-points={plot.samples.len().to_string()}
                {onkeydown}
                {onmousemove}
                {onmouseleave}
            >
                { (*background).clone() }
                <svg class="chart-svg chart-overlay" viewBox={f.view_box()} aria-hidden="true" focusable="false">
                    if let Some(d) = &plot.measured_path {
                        <path class="measured-line" d={d.clone()} />
                    }
                    if let Some(s) = sample {
                        <line class="cursor" x1={num(s.x)} x2={num(s.x)} y1={num(f.y0())} y2={num(f.y1())} />
                        if shown != plot.peak {
                            <circle class="cursor-dot" cx={num(s.x)} cy={num(s.y)} r="3.5" />
                        }
                    }
                </svg>
            </div>
            if plot.samples.len() < plot.total {
                <p class="chart-note">{ tf(lang, Key::Downsampled, &[&group_digits(plot.samples.len() as u64), &group_digits(plot.total as u64)]) }</p>
            }
            <table class="visually-hidden" id="timeline-table">
                <caption>{ t(lang, crate::present::in_mode(Key::TimelineTitle, mode)) }</caption>
                <thead>
                    <tr>
                        <th scope="col">{ t(lang, Key::ColStep) }</th>
                        <th scope="col">{ t(lang, Key::ColPhase) }</th>
                        <th scope="col">{ t(lang, Key::ColOps) }</th>
                        <th scope="col">{ t(lang, Key::ColHighest) }</th>
                        <th scope="col">{ t(lang, Key::ColAtEnd) }</th>
                    </tr>
                </thead>
                <tbody>
                    { for spans.iter().map(|s| html! {
                        <tr>
                            <td>{ s.step }</td>
                            <th scope="row">{ labels::phase_short(s.phase, lang) }</th>
                            <td>{ s.end - s.start }</td>
                            <td>{ bytes(s.highest, prefs.units) }</td>
                            <td>{ bytes(s.at_end, prefs.units) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </section>
    }
}
