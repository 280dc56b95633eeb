//! Chart geometry, computed in plain Rust so the SVG components only draw:
//! the plot frame, scales, "nice" axis ticks, path strings and the
//! downsampling of long series. Coordinates are SVG user units equal to CSS
//! pixels (the components size the `viewBox` to the measured width).

mod batch;
mod svg;
mod timeline;

pub use batch::{BatchPlot, BatchPoint, batch_plot};
pub use svg::{batch_svg, num, timeline_svg};
pub use timeline::{
    Band, PhaseSpan, PointText, TimelinePlot, TimelineSample, phase_spans, timeline_plot,
};

use crate::prefs::Units;
use crate::present;
use vramfit_core::Bytes;

/// Most points a line chart draws; longer series are downsampled.
pub const MAX_POINTS: usize = 600;

/// The drawing area and its margins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Width of the whole SVG.
    pub width: f64,
    /// Height of the whole SVG.
    pub height: f64,
    /// Left margin (y-axis labels).
    pub left: f64,
    /// Right margin.
    pub right: f64,
    /// Top margin.
    pub top: f64,
    /// Bottom margin (x-axis labels).
    pub bottom: f64,
}

impl Frame {
    /// The x of the plot's left edge.
    pub fn x0(&self) -> f64 {
        self.left
    }

    /// The x of the plot's right edge.
    pub fn x1(&self) -> f64 {
        (self.width - self.right).max(self.left + 1.0)
    }

    /// The y of the plot's top edge.
    pub fn y0(&self) -> f64 {
        self.top
    }

    /// The y of the plot's bottom edge (the zero line).
    pub fn y1(&self) -> f64 {
        (self.height - self.bottom).max(self.top + 1.0)
    }

    /// The `viewBox` attribute.
    pub fn view_box(&self) -> String {
        format!("0 0 {:.0} {:.0}", self.width, self.height)
    }

    /// `v` in `[0, max]` mapped onto the plot's height (0 at the bottom).
    pub fn y(&self, v: f64, max: f64) -> f64 {
        let f = if max > 0.0 {
            (v / max).clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.y1() - f * (self.y1() - self.y0())
    }

    /// `f` in `[0, 1]` mapped onto the plot's width.
    pub fn x(&self, f: f64) -> f64 {
        self.x0() + f.clamp(0.0, 1.0) * (self.x1() - self.x0())
    }
}

/// A labelled position on an axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    /// Coordinate along the axis.
    pub pos: f64,
    /// The label.
    pub label: String,
}

/// A y axis for byte values up to `max`: ticks at round values in the
/// chosen units, and the axis maximum (the last tick, at least `max`).
pub fn byte_axis(max: Bytes, frame: &Frame, units: Units) -> (f64, Vec<Tick>) {
    let (unit, divisor) = present::axis_unit(max, units);
    let top = (max.0 as f64 / divisor).max(1e-9);
    let step = nice_step(top / 4.0);
    let count = (top / step).ceil().max(1.0) as usize;
    let axis_max = step * count as f64;
    // As many decimals as the step needs: 10, 2.5, 0.25.
    let decimals = (0..3)
        .find(|d| (step * 10f64.powi(*d)).fract().abs() < 1e-9)
        .unwrap_or(3) as usize;
    let ticks = (0..=count)
        .map(|i| {
            let v = step * i as f64;
            let label = if i == 0 {
                "0".to_string()
            } else {
                format!("{v:.decimals$} {unit}")
            };
            Tick {
                pos: frame.y(v, axis_max),
                label,
            }
        })
        .collect();
    (axis_max * divisor, ticks)
}

/// The round step (1, 2, 2.5 or 5 times a power of ten) nearest above `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let f = raw / magnitude;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// Indices of at most `max` points of `values` that keep its shape: the
/// first and last, and the lowest and highest of each of equal buckets in
/// between, in order. Every local extreme that is a bucket's extreme, and so
/// the overall maximum, survives.
pub fn downsample(values: &[u64], max: usize) -> Vec<usize> {
    let n = values.len();
    if n <= max {
        return (0..n).collect();
    }
    let max = max.max(4);
    let buckets = (max - 2) / 2;
    let inner = n - 2;
    let mut kept = Vec::with_capacity(max);
    kept.push(0);
    for b in 0..buckets {
        let start = 1 + b * inner / buckets;
        let end = 1 + (b + 1) * inner / buckets;
        let slice = values.get(start..end).unwrap_or_default();
        let lo = slice
            .iter()
            .enumerate()
            .min_by_key(|(_, v)| **v)
            .map(|(i, _)| start + i);
        let hi = slice
            .iter()
            .enumerate()
            .rev()
            .max_by_key(|(_, v)| **v)
            .map(|(i, _)| start + i);
        match (lo, hi) {
            (Some(lo), Some(hi)) if lo == hi => kept.push(lo),
            (Some(lo), Some(hi)) => {
                kept.push(lo.min(hi));
                kept.push(lo.max(hi));
            }
            _ => {}
        }
    }
    kept.push(n - 1);
    kept
}

/// An SVG path through `points` (`M x y L x y ...`), one decimal.
pub fn line_path(points: impl IntoIterator<Item = (f64, f64)>) -> String {
    let mut d = String::new();
    for (i, (x, y)) in points.into_iter().enumerate() {
        d.push_str(if i == 0 { "M" } else { "L" });
        push_tenths(&mut d, x);
        d.push(' ');
        push_tenths(&mut d, y);
    }
    d
}

/// `v` to a tenth, as integers: the charts' hundreds of coordinates per
/// change, without a float formatter's cost (or a `-0.0`).
pub fn push_tenths(d: &mut String, v: f64) {
    use std::fmt::Write;
    let tenths = (v * 10.0).round();
    // Screen coordinates: far inside i64 (and a NaN would draw nothing either way).
    let t = if tenths.is_finite() { tenths as i64 } else { 0 };
    if t < 0 {
        d.push('-');
    }
    let a = t.unsigned_abs();
    let _ = write!(d, "{}.{}", a / 10, a % 10);
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::units::GIB;

    #[test]
    fn coordinates_are_written_to_a_tenth() {
        let tenth = |v: f64| {
            let mut s = String::new();
            push_tenths(&mut s, v);
            s
        };
        assert_eq!(tenth(12.34), "12.3");
        assert_eq!(tenth(12.36), "12.4");
        assert_eq!(tenth(-3.25), "-3.3");
        assert_eq!(tenth(-0.04), "0.0");
        assert_eq!(tenth(640.0), "640.0");
        assert_eq!(tenth(f64::NAN), "0.0");
        assert_eq!(line_path([(1.0, 2.05), (3.5, -4.0)]), "M1.0 2.1L3.5 -4.0");
    }

    #[test]
    fn nice_steps_are_round() {
        assert_eq!(nice_step(0.9), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(2.4), 2.5);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(nice_step(140.0), 200.0);
        assert_eq!(nice_step(0.0), 1.0);
        assert_eq!(nice_step(f64::NAN), 1.0);
    }

    #[test]
    fn byte_axis_covers_the_maximum_with_round_ticks() {
        let frame = Frame {
            width: 600.0,
            height: 200.0,
            left: 50.0,
            right: 10.0,
            top: 10.0,
            bottom: 30.0,
        };
        let (max, ticks) = byte_axis(Bytes(22 * GIB), &frame, Units::Binary);
        assert!(max >= (22 * GIB) as f64);
        let labels: Vec<&str> = ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "10 GiB", "20 GiB", "30 GiB"]);
        assert_eq!(ticks.first().map(|t| t.pos), Some(frame.y1()));
        assert_eq!(ticks.last().map(|t| t.pos), Some(frame.y0()));
        let (_, ticks) = byte_axis(Bytes(GIB + GIB / 3), &frame, Units::Binary);
        assert_eq!(ticks.get(1).map(|t| t.label.as_str()), Some("0.5 GiB"));
        let (_, ticks) = byte_axis(Bytes(9 * GIB), &frame, Units::Binary);
        let labels: Vec<&str> = ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "2.5 GiB", "5.0 GiB", "7.5 GiB", "10.0 GiB"]);
    }

    #[test]
    fn downsampling_keeps_the_peak_ends_and_order() {
        let values: Vec<u64> = (0..1798u64)
            .map(|i| (i * 7919) % 1000 + if i == 1234 { 5000 } else { 0 })
            .collect();
        let kept = downsample(&values, MAX_POINTS);
        assert!(kept.len() <= MAX_POINTS, "{}", kept.len());
        assert!(kept.len() > MAX_POINTS / 2);
        assert_eq!(kept.first(), Some(&0));
        assert_eq!(kept.last(), Some(&1797));
        assert!(kept.contains(&1234), "the peak was dropped");
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "indices out of order");
        assert_eq!(
            downsample(&values[..10], MAX_POINTS),
            (0..10).collect::<Vec<_>>()
        );
        assert!(downsample(&[], MAX_POINTS).is_empty());
    }

    #[test]
    fn paths_start_with_a_move() {
        assert_eq!(line_path([(1.0, 2.0), (3.26, 4.0)]), "M1.0 2.0L3.3 4.0");
        assert_eq!(line_path(Vec::new()), "");
    }
}
