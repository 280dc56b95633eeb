//! Benchmark results as data, with Markdown and JSON renderings, so the CLI
//! and the browser print the same report.

use std::fmt::Write as _;

use crate::context::AdapterSummary;
use crate::dtype::DType;
use crate::layers::{LayerResult, MeasuredThroughput};
use crate::timing::{Timer, Timing};
use vramfit_core::Bytes;

/// The `schema` value of the JSON rendering.
pub const REPORT_SCHEMA: &str = "vramfit.bench/1";

/// Which rate a kernel is judged by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Compute-bound: GFLOP/s.
    Gflops,
    /// Memory-bound: GB/s (10^9 bytes).
    Gbs,
}

/// The adapter a report was measured on.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AdapterReport {
    /// The driver's name for the adapter.
    pub name: String,
    /// The backend, e.g. `vulkan` or `webgpu`.
    pub backend: String,
    /// Whether `f16` kernels could run.
    pub shader_f16: bool,
    /// Whether GPU timestamps were available.
    pub timestamp_query: bool,
}

impl From<&AdapterSummary> for AdapterReport {
    fn from(summary: &AdapterSummary) -> Self {
        Self {
            name: summary.name.clone(),
            backend: summary.backend.to_string(),
            shader_f16: summary.shader_f16,
            timestamp_query: summary.timestamp_query,
        }
    }
}

/// One kernel variant in one type at one shape.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelResult {
    /// The kernel family, e.g. `matmul`.
    pub kernel: String,
    /// The implementation and operation, e.g. `tiled` or `tiled dA`.
    pub variant: String,
    /// The element type.
    pub dtype: DType,
    /// The problem size in words, e.g. `512x512x512`.
    pub shape: String,
    /// Floating-point operations per call.
    pub flops: f64,
    /// Bytes that must move per call (each input read and output written
    /// once).
    pub bytes: f64,
    /// The rate the kernel is judged by.
    pub metric: Metric,
    /// The clock used.
    pub timer: Timer,
    /// Calls per timed run.
    pub batch: u32,
    /// Timed runs.
    pub runs: usize,
    /// Median milliseconds per call.
    pub median_ms: f64,
    /// Fastest run, milliseconds per call.
    pub min_ms: f64,
    /// 10th percentile, milliseconds per call.
    pub p10_ms: f64,
    /// 90th percentile, milliseconds per call.
    pub p90_ms: f64,
    /// Slowest run, milliseconds per call.
    pub max_ms: f64,
    /// GFLOP/s at the median time.
    pub gflops: f64,
    /// GB/s at the median time.
    pub gbs: f64,
}

impl KernelResult {
    /// Summarises `timing` of a call doing `flops` and moving `bytes`.
    #[allow(
        clippy::too_many_arguments,
        reason = "a plain constructor of a report row"
    )]
    pub fn new(
        kernel: &str,
        variant: &str,
        dtype: DType,
        shape: String,
        flops: f64,
        bytes: f64,
        metric: Metric,
        timing: &Timing,
    ) -> Self {
        let ms = |q| timing.quantile(q) * 1e3;
        let median = timing.median();
        Self {
            kernel: kernel.to_string(),
            variant: variant.to_string(),
            dtype,
            shape,
            flops,
            bytes,
            metric,
            timer: timing.timer,
            batch: timing.batch,
            runs: timing.seconds.len(),
            median_ms: ms(0.5),
            min_ms: ms(0.0),
            p10_ms: ms(0.1),
            p90_ms: ms(0.9),
            max_ms: ms(1.0),
            gflops: flops / median / 1e9,
            gbs: bytes / median / 1e9,
        }
    }

    /// `kernel variant`, the row's name.
    pub fn name(&self) -> String {
        format!("{} {}", self.kernel, self.variant)
    }

    /// The value of [`KernelResult::metric`].
    pub fn rate(&self) -> f64 {
        match self.metric {
            Metric::Gflops => self.gflops,
            Metric::Gbs => self.gbs,
        }
    }
}

/// How much faster `candidate` ran than `baseline` (median time ratio).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Speedup {
    /// What is compared, in words.
    pub what: String,
    /// `baseline time / candidate time`.
    pub factor: f64,
}

/// A whole benchmark run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BenchReport {
    /// Always [`REPORT_SCHEMA`].
    pub schema: String,
    /// Where it ran.
    pub adapter: AdapterReport,
    /// The size preset.
    pub size: String,
    /// One row per kernel variant and type.
    pub results: Vec<KernelResult>,
    /// Tuned vs naive, fused vs materialised, f16 vs f32.
    pub speedups: Vec<Speedup>,
    /// What was skipped and why.
    pub notes: Vec<String>,
    /// Layers measured (forward + backward, saved bytes vs the estimate).
    #[serde(default)]
    pub layers: Vec<LayerResult>,
    /// The layers' forward + backward rates, for the planner.
    #[serde(default)]
    pub throughput: Option<MeasuredThroughput>,
}

impl BenchReport {
    /// A report over `results`, with [`speedups`] derived from them.
    pub fn new(
        adapter: AdapterReport,
        size: &str,
        results: Vec<KernelResult>,
        notes: Vec<String>,
    ) -> Self {
        let speedups = speedups(&results);
        Self {
            schema: REPORT_SCHEMA.to_string(),
            adapter,
            size: size.to_string(),
            results,
            speedups,
            notes,
            layers: Vec::new(),
            throughput: None,
        }
    }

    /// This report with `layers` and the throughput derived from them.
    pub fn with_layers(mut self, layers: Vec<LayerResult>) -> Self {
        self.throughput = MeasuredThroughput::from_results(&layers);
        self.layers = layers;
        self
    }

    /// Pretty-printed JSON.
    ///
    /// # Errors
    ///
    /// Only if serialisation fails, which these plain types never do.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// A Markdown table of the results, then the speed-ups and notes.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let a = &self.adapter;
        let first = self.results.first().map(|r| r.timer);
        let timer = first
            .or_else(|| {
                self.layers
                    .iter()
                    .find_map(|l| l.forward.as_ref().map(|p| p.timer))
            })
            .map_or("-", |t| match t {
                Timer::GpuTimestamps => "GPU timestamps",
                Timer::WallClock => "wall clock",
            });
        let _ = writeln!(
            out,
            "## vramfit bench: {} ({}), size {}, timer: {timer}\n",
            a.name, a.backend, self.size
        );
        if self.results.is_empty() {
            out.push_str(&layers_markdown(&self.layers));
            self.push_notes(&mut out);
            return out;
        }
        out.push_str("| kernel | dtype | shape | median ms | p10–p90 ms | GFLOP/s | GB/s |\n|---|---|---|---:|---:|---:|---:|\n");
        for r in &self.results {
            let bold = |metric: Metric, value: f64| {
                if r.metric == metric {
                    format!("**{value:.1}**")
                } else {
                    format!("{value:.1}")
                }
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.3} | {:.3}–{:.3} | {} | {} |",
                r.name(),
                r.dtype,
                r.shape,
                r.median_ms,
                r.p10_ms,
                r.p90_ms,
                bold(Metric::Gflops, r.gflops),
                bold(Metric::Gbs, r.gbs)
            );
        }
        if !self.speedups.is_empty() {
            out.push_str("\n| speed-up | factor |\n|---|---:|\n");
            for s in &self.speedups {
                let _ = writeln!(out, "| {} | {:.2}× |", s.what, s.factor);
            }
        }
        if !self.layers.is_empty() {
            out.push('\n');
            out.push_str(&layers_markdown(&self.layers));
        }
        self.push_notes(&mut out);
        out
    }

    fn push_notes(&self, out: &mut String) {
        if let Some(t) = &self.throughput {
            let _ = writeln!(
                out,
                "\nMeasured throughput (layers, forward + backward): fp32 {:.1} GFLOP/s, fp16 {:.1} GFLOP/s",
                t.fp32_flops_per_s / 1e9,
                t.fp16_flops_per_s / 1e9
            );
        }
        for note in &self.notes {
            let _ = writeln!(out, "\nNote: {note}");
        }
    }
}

/// Markdown for measured layers: a summary table, then per layer the saved
/// tensors with their buffer sizes, the estimator's number and the
/// itemised differences.
pub fn layers_markdown(layers: &[LayerResult]) -> String {
    let mut out = String::from(
        "### Layers: saved for backward (real buffers) vs vramfit-core's estimate\n\n",
    );
    out.push_str("| layer | dtype | shape | saved, measured | saved, estimated | forward ms | GFLOP/s | fwd+bwd ms | GFLOP/s |\n");
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|\n");
    let pass = |p: &Option<crate::layers::PassTiming>| {
        p.as_ref().map_or(("-".into(), "-".into()), |p| {
            (format!("{:.2}", p.median_ms), format!("{:.1}", p.gflops))
        })
    };
    for r in layers {
        let estimated = r.estimate.as_ref().map_or("-".to_string(), |e| {
            format!("{} ({})", Bytes(e.estimated_bytes), e.layer)
        });
        let ((fm, fg), (bm, bg)) = (pass(&r.forward), pass(&r.forward_backward));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {estimated} | {fm} | {fg} | {bm} | {bg} |",
            r.layer,
            r.dtype,
            r.shape.describe(),
            Bytes(r.saved_bytes)
        );
    }
    for r in layers {
        let _ = writeln!(
            out,
            "\n#### {} {}: {}\n",
            r.layer,
            r.dtype,
            r.shape.describe()
        );
        if let Some(scaling) = &r.scaling {
            let _ = writeln!(out, "Scaled to fit the adapter: {scaling}.\n");
        }
        out.push_str("| saved tensor | shape | dtype | data bytes | buffer bytes |\n|---|---|---|---:|---:|\n");
        for s in &r.saved {
            let shape: Vec<String> = s.shape.iter().map(usize::to_string).collect();
            let _ = writeln!(
                out,
                "| {} | [{}] | {} | {} | {} |",
                s.name,
                shape.join(", "),
                s.dtype,
                s.data_bytes,
                s.allocated_bytes
            );
        }
        let _ = writeln!(
            out,
            "| **total** | | | | **{}** ({}) |",
            r.saved_bytes,
            Bytes(r.saved_bytes)
        );
        if let Some(e) = &r.estimate {
            let _ = writeln!(
                out,
                "\nEstimated by vramfit-core for {} `{}` ({}): {} bytes, {:+} vs measured.\n",
                e.model,
                e.layer,
                e.precision,
                e.estimated_bytes,
                e.estimated_bytes as i64 - e.measured_bytes as i64
            );
            out.push_str("| difference (estimated − measured) | bytes |\n|---|---:|\n");
            for d in &e.differences {
                let _ = writeln!(out, "| {} | {:+} |", d.what, d.bytes);
            }
            let _ = writeln!(
                out,
                "| PyTorch's allocator rounds each block to 512 B (here: 4 B) | {:+} |",
                e.rounding_bytes
            );
        }
        for note in &r.notes {
            let _ = writeln!(out, "\nNote: {note}");
        }
    }
    out
}

/// Tuned matmul vs naive and fused attention vs materialised, per type;
/// then f16 vs f32 for every row measured in both.
pub fn speedups(results: &[KernelResult]) -> Vec<Speedup> {
    let find = |name: &str, dtype: DType| {
        results
            .iter()
            .find(|r| r.name() == name && r.dtype == dtype)
    };
    let mut out = Vec::new();
    for dtype in DType::ALL {
        for (fast, slow, what) in [
            ("matmul tiled", "matmul naive", "matmul tiled vs naive"),
            (
                "attention flash",
                "attention materialized",
                "attention flash vs materialized",
            ),
        ] {
            if let (Some(f), Some(s)) = (find(fast, dtype), find(slow, dtype)) {
                out.push(Speedup {
                    what: format!("{what} ({dtype})"),
                    factor: s.median_ms / f.median_ms,
                });
            }
        }
    }
    for r in results.iter().filter(|r| r.dtype == DType::F16) {
        if let Some(base) = find(&r.name(), DType::F32) {
            out.push(Speedup {
                what: format!("{}: f16 vs f32", r.name()),
                factor: base.median_ms / r.median_ms,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{AdapterReport, BenchReport, KernelResult, Metric};
    use crate::dtype::DType;
    use crate::timing::{Timer, Timing};

    fn row(variant: &str, dtype: DType, seconds: f64) -> KernelResult {
        let timing = Timing {
            timer: Timer::WallClock,
            batch: 1,
            seconds: vec![seconds],
        };
        KernelResult::new(
            "matmul",
            variant,
            dtype,
            "8x8x8".into(),
            1e9,
            1e6,
            Metric::Gflops,
            &timing,
        )
    }

    #[test]
    fn report_derives_speedups_and_renders_both_formats() {
        let adapter = AdapterReport {
            name: "test".into(),
            backend: "vulkan".into(),
            shader_f16: true,
            timestamp_query: false,
        };
        let results = vec![
            row("naive", DType::F32, 1.0),
            row("tiled", DType::F32, 0.25),
            row("tiled", DType::F16, 0.125),
        ];
        let report = BenchReport::new(adapter, "small", results, vec![]);
        let factors: Vec<_> = report
            .speedups
            .iter()
            .map(|s| (s.what.as_str(), s.factor))
            .collect();
        assert_eq!(
            factors,
            [
                ("matmul tiled vs naive (f32)", 4.0),
                ("matmul tiled: f16 vs f32", 2.0)
            ]
        );
        assert!(
            report
                .to_markdown()
                .contains("| matmul tiled | f32 | 8x8x8 | 250.000")
        );
        let json = report.to_json().unwrap();
        let back: BenchReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, report);
        assert!(json.contains("\"schema\": \"vramfit.bench/1\""));
    }
}
