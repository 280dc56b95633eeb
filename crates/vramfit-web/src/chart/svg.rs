//! The static layer of each chart as SVG markup: grid, axes, bands, lines
//! and markers. Writing it as one string is far smaller in wasm than a
//! virtual-DOM tree of the same elements, and faster to replace; what the
//! user interacts with (points, the cursor) stays in components. Every text
//! is escaped.

use super::{BatchPlot, Frame, Tick, TimelinePlot};
use std::fmt::Write;

/// Markup of the batch chart's static layer.
pub fn batch_svg(plot: &BatchPlot) -> String {
    let f = &plot.frame;
    let mut s = open(f);
    let over = (plot.limit_y - f.y0()).max(0.0);
    let _ =
        write!(s, r#"<rect class="over-limit" x="{:.1}" y="{:.1}" width="{:.1}" height="{over:.1}"/>"#, f.x0(), f.y0(), f.x1() - f.x0());
    y_axis(&mut s, f, &plot.y_ticks);
    for tick in &plot.x_ticks {
        text(&mut s, "axis-label", tick.pos, f.y1() + 18.0, "middle", &tick.label);
    }
    line(&mut s, "limit", f.x0(), plot.limit_y, f.x1(), plot.limit_y);
    if let Some((x, label)) = &plot.max_marker {
        line(&mut s, "max-line", *x, f.y0(), *x, f.y1());
        // Keep the label inside the plot: left of the line near the right edge.
        let right = *x > f.x0() + 0.7 * (f.x1() - f.x0());
        let (lx, anchor) = if right { (x - 6.0, "end") } else { (x + 6.0, "start") };
        text(&mut s, "marker-label", lx, f.y0() + 12.0, anchor, label);
    }
    path(&mut s, "series-allocated", &plot.allocated_path);
    path(&mut s, "series-device", &plot.device_path);
    s.push_str("</svg>");
    s
}

/// Markup of the timeline's static layer.
pub fn timeline_svg(plot: &TimelinePlot) -> String {
    let f = &plot.frame;
    let mut s = open(f);
    for b in &plot.bands {
        let _ = write!(
            s,
            r#"<g class="band band-{}"><title>{}</title><rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}"/>"#,
            b.phase.id(),
            escape(&b.title),
            b.x0,
            f.y0(),
            b.x1 - b.x0,
            f.y1() - f.y0()
        );
        if let Some(label) = b.label {
            text(&mut s, "band-label", b.x0 + 4.0, f.y0() - 7.0, "start", label);
        }
        s.push_str("</g>");
    }
    y_axis(&mut s, f, &plot.y_ticks);
    for step in &plot.steps {
        line(&mut s, "step-mark", step.pos, f.y0(), step.pos, f.y1() + 6.0);
        text(&mut s, "axis-label", step.pos + 4.0, f.y1() + 18.0, "start", &step.label);
    }
    path(&mut s, "area", &plot.area_path);
    path(&mut s, "series-line", &plot.line_path);
    if let Some(p) = plot.samples.get(plot.peak) {
        let _ =
            write!(s, r#"<g class="peak"><title>{}</title><circle cx="{:.1}" cy="{:.1}" r="5"/></g>"#, escape(&plot.peak_label), p.x, p.y);
    }
    s.push_str("</svg>");
    s
}

fn open(f: &Frame) -> String {
    let mut s = String::with_capacity(16 * 1024);
    let _ = write!(s, r#"<svg class="chart-svg" viewBox="{}" aria-hidden="true" focusable="false">"#, f.view_box());
    s
}

fn y_axis(s: &mut String, f: &Frame, ticks: &[Tick]) {
    for tick in ticks {
        line(s, "grid", f.x0(), tick.pos, f.x1(), tick.pos);
        let _ = write!(
            s,
            r#"<text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="end" dominant-baseline="middle">{}</text>"#,
            f.x0() - 8.0,
            tick.pos,
            escape(&tick.label)
        );
    }
}

fn line(s: &mut String, class: &str, x1: f64, y1: f64, x2: f64, y2: f64) {
    let _ = write!(s, r#"<line class="{class}" x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}"/>"#);
}

fn text(s: &mut String, class: &str, x: f64, y: f64, anchor: &str, content: &str) {
    let _ = write!(s, r#"<text class="{class}" x="{x:.1}" y="{y:.1}" text-anchor="{anchor}">{}</text>"#, escape(content));
}

fn path(s: &mut String, class: &str, d: &str) {
    let _ = write!(s, r#"<path class="{class}" d="{d}"/>"#);
}

/// Escapes text for SVG markup.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::timeline_plot;
    use crate::prefs::Prefs;
    use vramfit_core::{Overheads, TrainConfig, estimate, model_preset};

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape(r#"a<b>&"c""#), "a&lt;b&gt;&amp;&quot;c&quot;");
        assert_eq!(escape("第 2 步"), "第 2 步");
    }

    #[test]
    fn the_timeline_markup_is_one_balanced_svg() {
        let spec = model_preset("resnet18").map(|m| m.spec).unwrap();
        let e = estimate(&spec, &TrainConfig::default(), &Overheads::default(), None).unwrap();
        let svg = timeline_svg(&timeline_plot(&e, 600.0, Prefs::default()));
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<g ").count(), svg.matches("</g>").count());
        assert_eq!(svg.matches("<text ").count(), svg.matches("</text>").count());
        assert!(svg.contains(r#"class="band band-backward""#) && svg.contains(r#"class="peak""#));
    }
}
