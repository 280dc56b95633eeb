//! The static layer of each chart as SVG elements: grid, axes, bands, lines
//! and markers. It is built as virtual DOM (never as markup parsed by the
//! browser), so every text is a text node; what the user interacts with
//! (points, the cursor) stays in the components.

use super::{BatchPlot, Frame, Tick, TimelinePlot};
use yew::prelude::*;

/// A coordinate as an attribute value (one decimal).
pub fn num(v: f64) -> String {
    let mut s = String::new();
    super::push_tenths(&mut s, v);
    s
}

/// The batch chart's static layer.
pub fn batch_svg(plot: &BatchPlot) -> Html {
    let f = &plot.frame;
    let over = (plot.limit_y - f.y0()).max(0.0);
    let marker = plot.max_marker.as_ref().map(|(x, label)| {
        // Keep the label inside the plot: left of the line near the right edge.
        let right = *x > f.x0() + 0.7 * (f.x1() - f.x0());
        let (lx, anchor) = if right {
            (x - 6.0, "end")
        } else {
            (x + 6.0, "start")
        };
        html! {
            <>
                { line("max-line", *x, f.y0(), *x, f.y1()) }
                { text("marker-label", lx, f.y0() + 12.0, anchor, label) }
            </>
        }
    });
    html! {
        <svg class="chart-svg" viewBox={f.view_box()} aria-hidden="true" focusable="false">
            <rect class="over-limit" x={num(f.x0())} y={num(f.y0())} width={num(f.x1() - f.x0())} height={num(over)} />
            { y_axis(f, &plot.y_ticks) }
            { for plot.x_ticks.iter().map(|tick| text("axis-label", tick.pos, f.y1() + 18.0, "middle", &tick.label)) }
            { line("limit", f.x0(), plot.limit_y, f.x1(), plot.limit_y) }
            { marker.unwrap_or_default() }
            { path("series-allocated", &plot.allocated_path) }
            { path("series-device", &plot.device_path) }
        </svg>
    }
}

/// The timeline's static layer.
pub fn timeline_svg(plot: &TimelinePlot) -> Html {
    let f = &plot.frame;
    let bands = plot.bands.iter().map(|b| {
        html! {
            <g class={format!("band band-{}", b.phase.id())}>
                <title>{ b.title.clone() }</title>
                <rect x={num(b.x0)} y={num(f.y0())} width={num(b.x1 - b.x0)} height={num(f.y1() - f.y0())} />
                if let Some(label) = b.label {
                    { text("band-label", b.x0 + 4.0, f.y0() - 7.0, "start", label) }
                }
            </g>
        }
    });
    let steps = plot.steps.iter().map(|step| {
        html! {
            <>
                { line("step-mark", step.pos, f.y0(), step.pos, f.y1() + 6.0) }
                { text("axis-label", step.pos + 4.0, f.y1() + 18.0, "start", &step.label) }
            </>
        }
    });
    let peak = plot.samples.get(plot.peak).map(|p| {
        html! {
            <g class="peak">
                <title>{ plot.peak_label.clone() }</title>
                <circle cx={num(p.x)} cy={num(p.y)} r="5" />
            </g>
        }
    });
    html! {
        <svg class="chart-svg" viewBox={f.view_box()} aria-hidden="true" focusable="false">
            { for bands }
            { y_axis(f, &plot.y_ticks) }
            { for steps }
            { path("area", &plot.area_path) }
            { path("series-line", &plot.line_path) }
            { peak.unwrap_or_default() }
        </svg>
    }
}

fn y_axis(f: &Frame, ticks: &[Tick]) -> Html {
    html! {
        { for ticks.iter().map(|tick| html! {
            <>
                { line("grid", f.x0(), tick.pos, f.x1(), tick.pos) }
                <text class="axis-label" x={num(f.x0() - 8.0)} y={num(tick.pos)} text-anchor="end" dominant-baseline="middle">{ tick.label.clone() }</text>
            </>
        }) }
    }
}

fn line(class: &'static str, x1: f64, y1: f64, x2: f64, y2: f64) -> Html {
    html! { <line {class} x1={num(x1)} y1={num(y1)} x2={num(x2)} y2={num(y2)} /> }
}

fn text(class: &'static str, x: f64, y: f64, anchor: &'static str, content: &str) -> Html {
    html! { <text {class} x={num(x)} y={num(y)} text-anchor={anchor}>{ content.to_string() }</text> }
}

fn path(class: &'static str, d: &str) -> Html {
    html! { <path {class} d={d.to_string()} /> }
}
