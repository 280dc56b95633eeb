//! The step-timeline chart: allocated memory after every op of the two
//! simulated steps, downsampled to [`MAX_POINTS`](super::MAX_POINTS), over
//! bands shading the forward pass, the backward pass and the optimizer step,
//! with the peak marked at its op.

use super::{Frame, MAX_POINTS, Tick, byte_axis, downsample, line_path};
use crate::i18n::{Key, tf};
use crate::labels;
use crate::prefs::Prefs;
use crate::present;
use vramfit_core::{Bytes, Estimate, Phase, TimelinePoint};

/// A run of consecutive timeline points in one phase of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseSpan {
    /// The step (1-based).
    pub step: u32,
    /// The phase.
    pub phase: Phase,
    /// First point (index into the timeline).
    pub start: usize,
    /// One past the last point.
    pub end: usize,
    /// The highest allocation in the span.
    pub highest: Bytes,
    /// The allocation after its last op.
    pub at_end: Bytes,
}

/// The phase spans of a timeline, in order (the chart's bands and its text alternative).
pub fn phase_spans(timeline: &[TimelinePoint]) -> Vec<PhaseSpan> {
    let mut spans: Vec<PhaseSpan> = Vec::new();
    for (i, p) in timeline.iter().enumerate() {
        match spans.last_mut() {
            Some(s) if s.step == p.step && s.phase == p.phase => {
                s.end = i + 1;
                s.highest = s.highest.max(p.allocated_bytes);
                s.at_end = p.allocated_bytes;
            }
            _ => spans.push(PhaseSpan {
                step: p.step,
                phase: p.phase,
                start: i,
                end: i + 1,
                highest: p.allocated_bytes,
                at_end: p.allocated_bytes,
            }),
        }
    }
    spans
}

/// A shaded band behind the line.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    /// Left edge.
    pub x0: f64,
    /// Right edge.
    pub x1: f64,
    /// The phase (for its CSS class).
    pub phase: Phase,
    /// Its short name, when the band is wide enough to print it.
    pub label: Option<&'static str>,
    /// Step, phase and highest value, for the band's `<title>`.
    pub title: String,
}

/// One drawn point of the (downsampled) line.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineSample {
    /// Index into the full timeline.
    pub index: usize,
    /// Horizontal position.
    pub x: f64,
    /// Vertical position.
    pub y: f64,
}

/// What the chart's readout says of one moment: worded for the point the
/// cursor is on only (a plot has hundreds of points, redrawn on every edit).
#[derive(Clone, Debug, PartialEq)]
pub struct PointText {
    /// Step, phase, op and value, as one line.
    pub label: String,
    /// Step and phase ("Step 2 · Backward").
    pub context: String,
    /// The memory after the op.
    pub value: String,
}

impl PointText {
    /// The texts of the timeline's moment `p`.
    pub fn of(p: &TimelinePoint, prefs: Prefs) -> PointText {
        PointText {
            label: point_label(p, prefs),
            context: format!(
                "{} · {}",
                tf(prefs.lang, Key::StepN, &[&p.step.to_string()]),
                labels::phase_short(p.phase, prefs.lang)
            ),
            value: present::bytes(p.allocated_bytes, prefs.units),
        }
    }
}

/// Everything the timeline chart draws.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelinePlot {
    /// The frame.
    pub frame: Frame,
    /// The filled area under the line.
    pub area_path: String,
    /// The line.
    pub line_path: String,
    /// Phase bands.
    pub bands: Vec<Band>,
    /// Where each step starts, labelled ("Step 2").
    pub steps: Vec<Tick>,
    /// Memory ticks.
    pub y_ticks: Vec<Tick>,
    /// The drawn points.
    pub samples: Vec<TimelineSample>,
    /// Which sample is the peak.
    pub peak: usize,
    /// The peak's label ("Peak 8.93 GiB at head.loss").
    pub peak_label: String,
    /// The peak's value.
    pub peak_value: String,
    /// Points in the full timeline.
    pub total: usize,
    /// A measured timeline drawn over the same span, when one was brought
    /// (its first moment at the left edge, its last at the right: the two
    /// share a scale of progress, not a clock).
    pub measured_path: Option<String>,
}

/// Lays out the timeline of `e` at `width` pixels, with the allocated bytes
/// of `measured` (a measured timeline, resampled) drawn over it when given.
pub fn timeline_plot(
    e: &Estimate,
    width: f64,
    prefs: Prefs,
    measured: Option<&[Bytes]>,
) -> TimelinePlot {
    let lang = prefs.lang;
    let frame = Frame {
        width: width.max(240.0),
        height: 220.0,
        left: 60.0,
        right: 12.0,
        top: 24.0,
        bottom: 26.0,
    };
    let tl = &e.timeline;
    let values: Vec<u64> = tl.iter().map(|p| p.allocated_bytes.0).collect();
    let measured = measured.filter(|m| m.len() > 1);
    let measured_top = measured.and_then(|m| m.iter().max().copied());
    let highest =
        Bytes(values.iter().copied().max().unwrap_or(0)).max(measured_top.unwrap_or_default());
    let (axis_max, y_ticks) = byte_axis(highest, &frame, prefs.units);
    let last = tl.len().saturating_sub(1).max(1) as f64;
    let x_of = |i: usize| frame.x(i as f64 / last);
    let samples: Vec<TimelineSample> = downsample(&values, MAX_POINTS)
        .into_iter()
        .filter_map(|i| tl.get(i).map(|p| (i, p)))
        .map(|(i, p)| TimelineSample {
            index: i,
            x: x_of(i),
            y: frame.y(p.allocated_bytes.0 as f64, axis_max),
        })
        .collect();
    // The first highest point; the core's peak is the same moment.
    let peak_index = values
        .iter()
        .enumerate()
        .rev()
        .max_by_key(|(_, v)| **v)
        .map_or(0, |(i, _)| i);
    let peak = samples
        .iter()
        .position(|s| s.index == peak_index)
        .unwrap_or(0);
    let spans = phase_spans(tl);
    let bands = spans
        .iter()
        .map(|s| {
            let (x0, x1) = (
                x_of(s.start),
                x_of(s.end.saturating_sub(1)).max(x_of(s.start) + 1.0),
            );
            let short = labels::phase_short(s.phase, lang);
            let fits = (x1 - x0)
                > 8.0
                    + 7.5
                        * short
                            .chars()
                            .map(|c| if c.is_ascii() { 1.0 } else { 1.8 })
                            .sum::<f64>();
            Band {
                x0,
                x1,
                phase: s.phase,
                label: fits.then_some(short),
                title: format!(
                    "{} · {}: {}",
                    tf(lang, Key::StepN, &[&s.step.to_string()]),
                    short,
                    present::bytes(s.highest, prefs.units)
                ),
            }
        })
        .collect();
    let steps = spans
        .iter()
        .filter(|s| s.phase == Phase::Forward)
        .map(|s| Tick {
            pos: x_of(s.start),
            label: tf(lang, Key::StepN, &[&s.step.to_string()]),
        })
        .collect();
    let points = samples.iter().map(|s| (s.x, s.y));
    let line = line_path(points);
    let area = match (samples.first(), samples.last()) {
        (Some(a), Some(b)) => format!(
            "M{:.1} {:.1}{}L{:.1} {:.1}Z",
            a.x,
            frame.y1(),
            line.replacen('M', "L", 1),
            b.x,
            frame.y1()
        ),
        _ => String::new(),
    };
    TimelinePlot {
        frame,
        area_path: area,
        line_path: line,
        bands,
        steps,
        y_ticks,
        peak,
        peak_label: tf(
            lang,
            Key::PeakAt,
            &[
                &present::bytes(e.peak_allocated_bytes, prefs.units),
                &e.peak_op,
            ],
        ),
        peak_value: present::bytes(e.peak_allocated_bytes, prefs.units),
        total: tl.len(),
        measured_path: measured.map(|m| {
            let last = (m.len() - 1) as f64;
            line_path(
                m.iter()
                    .enumerate()
                    .map(|(i, b)| (frame.x(i as f64 / last), frame.y(b.0 as f64, axis_max))),
            )
        }),
        samples,
    }
}

/// "Step 2 · Backward · h.3.mlp: 8.10 GiB".
fn point_label(p: &TimelinePoint, prefs: Prefs) -> String {
    tf(
        prefs.lang,
        Key::TimelineAt,
        &[
            &tf(prefs.lang, Key::StepN, &[&p.step.to_string()]),
            labels::phase_short(p.phase, prefs.lang),
            &p.op,
            &present::bytes(p.allocated_bytes, prefs.units),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::{Overheads, Precision, TrainConfig, estimate, model_preset};

    fn gpt2() -> Estimate {
        let spec = model_preset("gpt2").map(|m| m.spec).unwrap();
        let cfg = TrainConfig {
            batch: 8,
            seq: 512,
            precision: Precision::AmpBf16,
            ..TrainConfig::default()
        };
        estimate(&spec, &cfg, &Overheads::default(), None).unwrap()
    }

    #[test]
    fn the_plot_is_downsampled_and_keeps_the_peak() {
        let e = gpt2();
        let plot = timeline_plot(&e, 700.0, Prefs::default(), None);
        assert!(
            e.timeline.len() > MAX_POINTS,
            "GPT-2's timeline should need downsampling"
        );
        assert!(plot.samples.len() <= MAX_POINTS);
        assert_eq!(plot.total, e.timeline.len());
        let peak = plot.samples.get(plot.peak).unwrap();
        assert_eq!(
            e.timeline.get(peak.index).map(|p| p.allocated_bytes),
            Some(e.peak_allocated_bytes)
        );
        assert!(
            plot.samples.iter().all(|s| s.y >= peak.y),
            "the peak is the highest point drawn"
        );
        assert!(plot.peak_label.contains(&e.peak_op));
        assert!(plot.area_path.ends_with('Z') && plot.line_path.starts_with('M'));
    }

    #[test]
    fn the_readout_words_the_moment_under_the_cursor() {
        let e = gpt2();
        let plot = timeline_plot(&e, 700.0, Prefs::default(), None);
        let peak = plot
            .samples
            .get(plot.peak)
            .and_then(|s| e.timeline.get(s.index))
            .unwrap();
        let text = PointText::of(peak, Prefs::default());
        assert!(text.context.starts_with("Step 2 · "), "{text:?}");
        assert_eq!(
            text.value,
            present::bytes(e.peak_allocated_bytes, Prefs::default().units)
        );
        assert!(
            text.label.contains(&*peak.op) && text.label.contains(&text.value),
            "{text:?}"
        );
    }

    #[test]
    fn spans_cover_both_steps_in_phase_order() {
        let e = gpt2();
        let spans = phase_spans(&e.timeline);
        let order: Vec<(u32, Phase)> = spans.iter().map(|s| (s.step, s.phase)).collect();
        assert_eq!(
            order,
            [
                (1, Phase::Forward),
                (1, Phase::Backward),
                (1, Phase::Optimizer),
                (2, Phase::Forward),
                (2, Phase::Backward),
                (2, Phase::Optimizer)
            ]
        );
        assert_eq!(spans.first().map(|s| s.start), Some(0));
        assert_eq!(spans.last().map(|s| s.end), Some(e.timeline.len()));
        assert!(spans.windows(2).all(|w| w[0].end == w[1].start));
        let plot = timeline_plot(&e, 700.0, Prefs::default(), None);
        assert_eq!(
            plot.steps
                .iter()
                .map(|t| t.label.as_str())
                .collect::<Vec<_>>(),
            ["Step 1", "Step 2"]
        );
        assert_eq!(plot.bands.len(), spans.len());
    }
}
