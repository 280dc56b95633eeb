//! The benchmark module's answers as data: the adapter, failures, progress,
//! the `vramfit.bench/1` report (the fields the page shows) and the
//! projection. Mirrors of `vramfit-bench-web`'s JSON, so this crate does
//! not link wgpu; every field has a default, so a newer report still reads.

use serde::Deserialize;

/// `{"ok": value}` or `{"err": failure}`, as the module resolves every call.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Outcome<T> {
    Ok(T),
    Err(Failure),
}

/// Reads a module answer; text that does not parse becomes a
/// [`FailureKind::Other`] failure quoting the parser.
pub fn parse_outcome<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, Failure> {
    match serde_json::from_str::<Outcome<T>>(json) {
        Ok(Outcome::Ok(value)) => Ok(value),
        Ok(Outcome::Err(failure)) => Err(failure),
        Err(error) => Err(Failure {
            kind: FailureKind::Other,
            message: format!("unreadable answer from the benchmark module: {error}"),
        }),
    }
}

/// Which way the benchmark failed; each has its own message on the page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// `navigator.gpu` is missing.
    NoWebgpu,
    /// No adapter was offered.
    NoAdapter,
    /// The adapter refused a device.
    RequestDevice,
    /// The device's limits are too small.
    Limits,
    /// A buffer allocation failed.
    OutOfMemory,
    /// A shader failed to compile.
    Shader,
    /// Another GPU validation error.
    Validation,
    /// The device was lost.
    DeviceLost,
    /// The user cancelled.
    Cancelled,
    /// Bad options or report.
    Invalid,
    /// The benchmark module could not be downloaded or started.
    LoadFailed,
    /// The benchmark module stopped with an internal error.
    Crashed,
    /// Anything else.
    #[default]
    #[serde(other)]
    Other,
}

/// A failure and its technical details.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Failure {
    /// Which way it failed.
    pub kind: FailureKind,
    /// The browser's or driver's words.
    pub message: String,
}

/// The device limits the page lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// `maxBufferSize`, bytes.
    pub max_buffer_size: u64,
    /// `maxStorageBufferBindingSize`, bytes.
    pub max_storage_buffer_binding_size: u64,
    /// `maxComputeWorkgroupStorageSize`, bytes.
    pub max_compute_workgroup_storage_size: u32,
    /// `maxComputeInvocationsPerWorkgroup`.
    pub max_compute_invocations_per_workgroup: u32,
}

/// The detected adapter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Adapter {
    /// The driver's name (often empty in browsers).
    pub name: String,
    /// e.g. `nvidia`, `apple`, `google`.
    pub vendor: String,
    /// e.g. `lovelace`, `swiftshader`.
    pub architecture: String,
    /// Usually empty in browsers.
    pub description: String,
    /// `webgpu` in a browser.
    pub backend: String,
    /// A software adapter.
    pub fallback: bool,
    /// The f16 kernels can run.
    pub shader_f16: bool,
    /// GPU timestamps are available.
    pub timestamp_query: bool,
    /// The limits.
    pub limits: Limits,
}

impl Adapter {
    /// Whether the adapter renders in software on the CPU — flagged as a
    /// fallback, or named as one of the CPU rasterizers (Chrome's
    /// SwiftShader, Mesa's llvmpipe / lavapipe) — so its times say little
    /// about a GPU.
    pub fn is_software(&self) -> bool {
        let names = [
            &self.name,
            &self.description,
            &self.vendor,
            &self.architecture,
        ];
        self.fallback
            || names.iter().any(|n| {
                let n = n.to_ascii_lowercase();
                ["swiftshader", "llvmpipe", "lavapipe"]
                    .iter()
                    .any(|s| n.contains(s))
            })
    }

    /// What to call the adapter: its name, else `vendor architecture`.
    pub fn label(&self) -> String {
        let name = if self.name.is_empty() {
            &self.description
        } else {
            &self.name
        };
        if !name.is_empty() {
            return name.clone();
        }
        [self.vendor.as_str(), self.architecture.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A run's position, for the progress bar.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Progress {
    /// Steps finished.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
    /// What runs or just ran.
    pub label: String,
}

impl Progress {
    /// Percent done, 0–100.
    pub fn percent(&self) -> u32 {
        (100 * self.done.min(self.total))
            .checked_div(self.total)
            .map_or(0, |p| p as u32)
    }
}

/// A finished run: the report and its two exports.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct RunOutput {
    /// The `vramfit.bench/1` JSON (the JSON export).
    pub json: String,
    /// The Markdown rendering (the Markdown export).
    pub markdown: String,
}

/// The calculator's step priced at the measured throughput.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Projection {
    /// Seconds per optimizer step.
    pub step_seconds: f64,
    /// The measured rate used, FLOP/s.
    pub flops_per_s: f64,
    /// The f16 rate (half-precision training) rather than f32.
    pub half: bool,
}

/// One kernel row of the report.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct KernelResult {
    /// e.g. `matmul`.
    pub kernel: String,
    /// e.g. `tiled dA`.
    pub variant: String,
    /// `f32` or `f16`.
    pub dtype: String,
    /// The problem size in words.
    pub shape: String,
    /// `gflops` or `gbs`.
    pub metric: String,
    /// Median milliseconds per call.
    pub median_ms: f64,
    /// GFLOP/s at the median.
    pub gflops: f64,
    /// GB/s at the median.
    pub gbs: f64,
}

/// A speed-up the report derived.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Speedup {
    /// e.g. `matmul tiled vs naive (f32)`.
    pub what: String,
    /// Baseline time over candidate time.
    pub factor: f64,
}

/// A timed layer pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PassTiming {
    /// Median milliseconds.
    pub median_ms: f64,
    /// GFLOP/s at the median.
    pub gflops: f64,
}

/// One itemised difference between estimate and measurement.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Difference {
    /// What differs, in words (English, from the report).
    pub what: String,
    /// Estimated minus measured, bytes.
    pub bytes: i64,
    /// The sentence's stable id (empty in older reports).
    pub id: String,
    /// The values the sentence quotes.
    pub args: Vec<String>,
}

/// A sentence of a layer's notes as a stable id and the values it quotes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Phrase {
    /// Stable id, e.g. `scaled`.
    pub id: String,
    /// The values.
    pub args: Vec<String>,
}

/// The estimator's number for a measured layer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct EstimateComparison {
    /// The model the estimate is for.
    pub model: String,
    /// The estimator's layer name.
    pub layer: String,
    /// Saved bytes the estimator predicts.
    pub estimated_bytes: u64,
    /// Saved bytes measured.
    pub measured_bytes: u64,
    /// The itemised differences.
    pub differences: Vec<Difference>,
    /// The allocator's rounding.
    pub rounding_bytes: i64,
}

/// One measured layer.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LayerResult {
    /// `transformer` or `resnet`.
    pub layer: String,
    /// `f32` or `f16`.
    pub dtype: String,
    /// The sizes that ran (`{"layer": ..., "batch": ..., ...}`).
    pub shape: serde_json::Value,
    /// How the sizes were scaled to fit, if they were.
    pub scaling: Option<String>,
    /// Bytes kept for backward, from the real buffers.
    pub saved_bytes: u64,
    /// The forward pass.
    pub forward: Option<PassTiming>,
    /// Forward then backward.
    pub forward_backward: Option<PassTiming>,
    /// The estimator's number.
    pub estimate: Option<EstimateComparison>,
    /// Notes (English, from the report).
    pub notes: Vec<String>,
    /// `scaling` then `notes` as phrases (absent in older reports).
    pub phrases: Vec<Phrase>,
}

impl LayerResult {
    /// The sizes as `batch 1, seq 128, hidden 768, heads 12`.
    pub fn describe_shape(&self) -> String {
        let Some(map) = self.shape.as_object() else {
            return String::new();
        };
        map.iter()
            .filter(|(k, _)| k.as_str() != "layer")
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The layers' measured rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Throughput {
    /// Forward + backward FLOP/s in f32.
    pub fp32_flops_per_s: f64,
    /// Forward + backward FLOP/s in f16.
    pub fp16_flops_per_s: f64,
}

/// The fields of a `vramfit.bench/1` report the page shows.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Report {
    /// `vramfit.bench/1`.
    pub schema: String,
    /// The size preset.
    pub size: String,
    /// Kernel rows.
    pub results: Vec<KernelResult>,
    /// Derived speed-ups.
    pub speedups: Vec<Speedup>,
    /// What was skipped and why.
    pub notes: Vec<String>,
    /// Measured layers.
    pub layers: Vec<LayerResult>,
    /// The layers' rate.
    pub throughput: Option<Throughput>,
}

impl Report {
    /// Parses the JSON export.
    ///
    /// # Errors
    ///
    /// A [`FailureKind::Other`] failure if it does not parse.
    pub fn parse(json: &str) -> Result<Report, Failure> {
        serde_json::from_str(json).map_err(|e| Failure {
            kind: FailureKind::Other,
            message: format!("the report does not parse: {e}"),
        })
    }

    /// The tuned-over-naive matmul speed-up for `dtype`, if both ran.
    pub fn matmul_speedup(&self, dtype: &str) -> Option<f64> {
        let what = format!("matmul tiled vs naive ({dtype})");
        self.speedups
            .iter()
            .find(|s| s.what == what)
            .map(|s| s.factor)
    }
}
