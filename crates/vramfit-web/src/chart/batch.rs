//! The memory-vs-batch chart: device memory and allocated memory at each
//! batch size of the curve (log₂ x axis, since the batches double), the GPU's
//! usable memory as a horizontal line, the largest batch that fits marked.

use super::{Frame, Tick, byte_axis, line_path};
use crate::i18n::{Key, tf};
use crate::prefs::Prefs;
use crate::present;
use crate::report::Report;
use vramfit_core::Bytes;

/// One point of the curve, placed.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchPoint {
    /// Micro-batch size.
    pub batch: u64,
    /// Horizontal position.
    pub x: f64,
    /// Height of the device-memory value.
    pub y: f64,
    /// Height of the allocated value.
    pub y_allocated: f64,
    /// Device memory (nvidia-smi).
    pub device: Bytes,
    /// Allocated (PyTorch).
    pub allocated: Bytes,
    /// Whether it fits in the usable memory.
    pub fits: bool,
    /// Whether it is the batch of the report.
    pub current: bool,
    /// What the point says, as one sentence (tooltip, screen readers, readout).
    pub label: String,
}

/// Everything the batch chart draws.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchPlot {
    /// The frame.
    pub frame: Frame,
    /// The points, by batch size.
    pub points: Vec<BatchPoint>,
    /// The device-memory line.
    pub device_path: String,
    /// The allocated-memory line.
    pub allocated_path: String,
    /// Height of the usable-memory line, when it is within the plot.
    pub limit_y: f64,
    /// Its label ("24 GiB usable").
    pub limit_label: String,
    /// Position and label of the largest batch that fits, if one does.
    pub max_marker: Option<(f64, String)>,
    /// Batch-size ticks.
    pub x_ticks: Vec<Tick>,
    /// Memory ticks.
    pub y_ticks: Vec<Tick>,
}

/// Lays out the batch chart of `report` at `width` pixels.
pub fn batch_plot(report: &Report, width: f64, prefs: Prefs) -> BatchPlot {
    let lang = prefs.lang;
    let frame = Frame {
        width: width.max(240.0),
        height: 260.0,
        left: 60.0,
        right: 16.0,
        top: 16.0,
        bottom: 30.0,
    };
    let fit = report.estimate.gpu.as_ref();
    let usable = fit.map_or(Bytes::ZERO, |g| g.usable_bytes);
    let max_batch = fit.map_or(0, |g| g.max_batch);
    let highest = report
        .curve
        .iter()
        .map(|p| p.device_used_bytes)
        .max()
        .unwrap_or_default()
        .max(usable);
    let (axis_max, y_ticks) = byte_axis(highest, &frame, prefs.units);
    let last = report.curve.last().map_or(1, |p| p.batch).max(2);
    let span = (last as f64).log2();
    let x_of = |batch: u64| frame.x((batch.max(1) as f64).log2() / span);
    let y_of = |b: Bytes| frame.y(b.0 as f64, axis_max);
    let points: Vec<BatchPoint> = report
        .curve
        .iter()
        .map(|p| {
            let fits = p.device_used_bytes <= usable;
            let label = tf(
                lang,
                Key::PointLabel,
                &[
                    &present::group_digits(p.batch),
                    &present::bytes(p.device_used_bytes, prefs.units),
                    &present::bytes(p.allocated_bytes, prefs.units),
                ],
            );
            let verdict = crate::i18n::t(
                lang,
                if fits {
                    Key::PointFits
                } else {
                    Key::PointNoFit
                },
            );
            BatchPoint {
                batch: p.batch,
                x: x_of(p.batch),
                y: y_of(p.device_used_bytes),
                y_allocated: y_of(p.allocated_bytes),
                device: p.device_used_bytes,
                allocated: p.allocated_bytes,
                fits,
                current: p.batch == report.estimate.config.batch,
                label: format!("{label} ({verdict})"),
            }
        })
        .collect();
    let max_marker = (max_batch > 0).then(|| {
        (
            x_of(max_batch),
            tf(lang, Key::LargestMark, &[&present::group_digits(max_batch)]),
        )
    });
    BatchPlot {
        device_path: line_path(points.iter().map(|p| (p.x, p.y))),
        allocated_path: line_path(points.iter().map(|p| (p.x, p.y_allocated))),
        limit_y: y_of(usable),
        limit_label: tf(
            lang,
            Key::GpuLimit,
            &[&present::capacity(usable, prefs.units)],
        ),
        max_marker,
        x_ticks: batch_ticks(&points, &frame, lang),
        y_ticks,
        points,
        frame,
    }
}

/// Labels for the powers of two among the points, thinned so labels stay
/// at least 44 px apart.
fn batch_ticks(points: &[BatchPoint], frame: &Frame, lang: crate::i18n::Lang) -> Vec<Tick> {
    let powers: Vec<&BatchPoint> = points
        .iter()
        .filter(|p| p.batch.is_power_of_two())
        .collect();
    let spacing = match powers.as_slice() {
        [a, b, ..] => (b.x - a.x).max(1.0),
        _ => frame.x1() - frame.x0(),
    };
    let every = (44.0 / spacing).ceil().max(1.0) as usize;
    powers
        .iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0)
        .map(|(_, p)| Tick {
            pos: p.x,
            label: present::count(p.batch, lang),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::Field;
    use crate::i18n::Lang;
    use vramfit_core::{TrainConfig, gpu_preset, model_preset};

    fn report(model: &str, batch: u64) -> Report {
        let spec = model_preset(model).map(|m| m.spec).unwrap();
        let gpu = gpu_preset("rtx-4090").unwrap();
        let cfg = TrainConfig {
            batch,
            seq: 512,
            ..TrainConfig::default()
        };
        Report::compute(
            &spec,
            &cfg,
            &gpu,
            model,
            Some(Field::Seq),
            &mut crate::report::Memo::default(),
        )
        .unwrap()
    }

    #[test]
    fn points_rise_left_to_right_and_the_limit_separates_fits() {
        let r = report("gpt2", 8);
        let plot = batch_plot(&r, 640.0, Prefs::default());
        assert_eq!(plot.points.len(), r.curve.len());
        assert!(
            plot.points
                .windows(2)
                .all(|w| w[0].x < w[1].x && w[0].y >= w[1].y),
            "x grows, values grow (y shrinks)"
        );
        assert_eq!(plot.points.iter().filter(|p| p.current).count(), 1);
        for p in &plot.points {
            assert_eq!(
                p.fits,
                p.y >= plot.limit_y,
                "batch {}: fits={} but y={} vs limit {}",
                p.batch,
                p.fits,
                p.y,
                plot.limit_y
            );
            assert!(p.x >= plot.frame.x0() && p.x <= plot.frame.x1());
        }
        let max = r.estimate.gpu.as_ref().map(|g| g.max_batch).unwrap();
        assert!(
            plot.max_marker
                .as_ref()
                .is_some_and(|(_, l)| l == &format!("largest {max}"))
        );
        assert!(plot.points.iter().any(|p| p.batch == max && p.fits));
        assert!(
            plot.points.iter().any(|p| !p.fits),
            "the curve goes past the largest batch"
        );
        assert!(plot.device_path.starts_with('M'));
    }

    #[test]
    fn tick_labels_do_not_crowd_on_a_phone() {
        let r = report("mlp-small", 8);
        let plot = batch_plot(
            &r,
            320.0,
            Prefs {
                lang: Lang::Zh,
                ..Prefs::default()
            },
        );
        assert!(
            plot.x_ticks.windows(2).all(|w| w[1].pos - w[0].pos >= 44.0),
            "{:?}",
            plot.x_ticks
        );
        assert!(plot.points.iter().all(|p| p.label.starts_with("批大小")));
    }
}
