//! Benchmark results as data, with Markdown and JSON renderings, so the CLI
//! and the browser print the same report.

use std::fmt::Write as _;

use crate::context::AdapterSummary;
use crate::dtype::DType;
use crate::timing::{Timer, Timing};

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
    #[allow(clippy::too_many_arguments, reason = "a plain constructor of a report row")]
    pub fn new(kernel: &str, variant: &str, dtype: DType, shape: String, flops: f64, bytes: f64, metric: Metric, timing: &Timing) -> Self {
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
}

impl BenchReport {
    /// A report over `results`, with [`speedups`] derived from them.
    pub fn new(adapter: AdapterReport, size: &str, results: Vec<KernelResult>, notes: Vec<String>) -> Self {
        let speedups = speedups(&results);
        Self { schema: REPORT_SCHEMA.to_string(), adapter, size: size.to_string(), results, speedups, notes }
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
        let timer = self.results.first().map_or("-", |r| match r.timer {
            Timer::GpuTimestamps => "GPU timestamps",
            Timer::WallClock => "wall clock",
        });
        let _ = writeln!(out, "## vramfit bench: {} ({}), size {}, timer: {timer}\n", a.name, a.backend, self.size);
        out.push_str("| kernel | dtype | shape | median ms | p10–p90 ms | GFLOP/s | GB/s |\n|---|---|---|---:|---:|---:|---:|\n");
        for r in &self.results {
            let bold = |metric: Metric, value: f64| if r.metric == metric { format!("**{value:.1}**") } else { format!("{value:.1}") };
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
        for note in &self.notes {
            let _ = writeln!(out, "\nNote: {note}");
        }
        out
    }
}

/// Tuned matmul vs naive and fused attention vs materialised, per type;
/// then f16 vs f32 for every row measured in both.
pub fn speedups(results: &[KernelResult]) -> Vec<Speedup> {
    let find = |name: &str, dtype: DType| results.iter().find(|r| r.name() == name && r.dtype == dtype);
    let mut out = Vec::new();
    for dtype in DType::ALL {
        for (fast, slow, what) in [
            ("matmul tiled", "matmul naive", "matmul tiled vs naive"),
            ("attention flash", "attention materialized", "attention flash vs materialized"),
        ] {
            if let (Some(f), Some(s)) = (find(fast, dtype), find(slow, dtype)) {
                out.push(Speedup { what: format!("{what} ({dtype})"), factor: s.median_ms / f.median_ms });
            }
        }
    }
    for r in results.iter().filter(|r| r.dtype == DType::F16) {
        if let Some(base) = find(&r.name(), DType::F32) {
            out.push(Speedup { what: format!("{}: f16 vs f32", r.name()), factor: base.median_ms / r.median_ms });
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
        let timing = Timing { timer: Timer::WallClock, batch: 1, seconds: vec![seconds] };
        KernelResult::new("matmul", variant, dtype, "8x8x8".into(), 1e9, 1e6, Metric::Gflops, &timing)
    }

    #[test]
    fn report_derives_speedups_and_renders_both_formats() {
        let adapter = AdapterReport { name: "test".into(), backend: "vulkan".into(), shader_f16: true, timestamp_query: false };
        let results = vec![row("naive", DType::F32, 1.0), row("tiled", DType::F32, 0.25), row("tiled", DType::F16, 0.125)];
        let report = BenchReport::new(adapter, "small", results, vec![]);
        let factors: Vec<_> = report.speedups.iter().map(|s| (s.what.as_str(), s.factor)).collect();
        assert_eq!(factors, [("matmul tiled vs naive (f32)", 4.0), ("matmul tiled: f16 vs f32", 2.0)]);
        assert!(report.to_markdown().contains("| matmul tiled | f32 | 8x8x8 | 250.000"));
        let json = report.to_json().unwrap();
        let back: BenchReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, report);
        assert!(json.contains("\"schema\": \"vramfit.bench/1\""));
    }
}
