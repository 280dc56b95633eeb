//! Report rows as the Benchmark tab shows them (percent of the chosen GPU
//! preset's peak, f16 speed-ups, estimate vs measurement), and matching
//! the adapter to a GPU preset. Only a preset the user confirmed has a
//! peak: an unknown GPU gets no percentage.

use vramfit_core::GpuPreset;

use super::model::{Adapter, LayerResult, Report};

/// Whether a kernel is judged by compute or by memory traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// GFLOP/s.
    Gflops,
    /// GB/s.
    Gbs,
}

/// One row of the kernel table.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelRow {
    /// `matmul tiled`.
    pub name: String,
    /// `f32` or `f16`.
    pub dtype: String,
    /// The problem size.
    pub shape: String,
    /// Median milliseconds per call.
    pub median_ms: f64,
    /// Which rate the kernel is judged by.
    pub rate: Rate,
    /// That rate's value.
    pub value: f64,
    /// Percent of the preset's peak for that rate and type, if a preset is chosen.
    pub peak_percent: Option<f64>,
    /// f32 time over f16 time, on the f16 row of a kernel run in both.
    pub f16_speedup: Option<f64>,
}

/// The kernel rows of `report`, with percentages of `preset`'s peaks.
pub fn kernel_rows(report: &Report, preset: Option<&GpuPreset>) -> Vec<KernelRow> {
    let name = |r: &super::model::KernelResult| format!("{} {}", r.kernel, r.variant);
    report
        .results
        .iter()
        .map(|r| {
            let rate = if r.metric == "gbs" { Rate::Gbs } else { Rate::Gflops };
            let value = if rate == Rate::Gbs { r.gbs } else { r.gflops };
            let peak = preset.map(|p| match (rate, r.dtype.as_str()) {
                (Rate::Gbs, _) => p.bandwidth_gbs,
                (Rate::Gflops, "f16") => p.fp16_tflops * 1e3,
                (Rate::Gflops, _) => p.fp32_tflops * 1e3,
            });
            let f16_speedup = (r.dtype == "f16")
                .then(|| report.results.iter().find(|b| b.dtype == "f32" && name(b) == name(r)))
                .flatten()
                .filter(|_| r.median_ms > 0.0)
                .map(|b| b.median_ms / r.median_ms);
            KernelRow {
                name: name(r),
                dtype: r.dtype.clone(),
                shape: r.shape.clone(),
                median_ms: r.median_ms,
                rate,
                value,
                peak_percent: peak.filter(|p| *p > 0.0).map(|p| 100.0 * value / p),
                f16_speedup,
            }
        })
        .collect()
}

/// One layer row: the saved bytes measured from the real buffers next to
/// the estimator's, and the reasons they differ.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerRow {
    /// `transformer` or `resnet`.
    pub layer: String,
    /// `f32` or `f16`.
    pub dtype: String,
    /// The sizes that ran.
    pub shape: String,
    /// Saved for backward, measured.
    pub measured_bytes: u64,
    /// Saved for backward, estimated (if the estimator covers the layer).
    pub estimated_bytes: Option<u64>,
    /// Forward + backward milliseconds and GFLOP/s.
    pub forward_backward: Option<(f64, f64)>,
    /// The explanation rows: (what, estimated − measured bytes).
    pub differences: Vec<(String, i64)>,
    /// How the sizes were scaled, and other notes.
    pub notes: Vec<String>,
}

/// The layer rows of `report`.
pub fn layer_rows(report: &Report) -> Vec<LayerRow> {
    report.layers.iter().map(layer_row).collect()
}

fn layer_row(r: &LayerResult) -> LayerRow {
    let mut differences: Vec<(String, i64)> =
        r.estimate.iter().flat_map(|e| e.differences.iter().map(|d| (d.what.clone(), d.bytes))).collect();
    if let Some(e) = r.estimate.as_ref().filter(|e| e.rounding_bytes != 0) {
        differences.push(("allocator rounding (512 B blocks)".into(), e.rounding_bytes));
    }
    LayerRow {
        layer: r.layer.clone(),
        dtype: r.dtype.clone(),
        shape: r.describe_shape(),
        measured_bytes: r.saved_bytes,
        estimated_bytes: r.estimate.as_ref().map(|e| e.estimated_bytes),
        forward_backward: r.forward_backward.map(|p| (p.median_ms, p.gflops)),
        differences,
        notes: r.scaling.iter().cloned().chain(r.notes.iter().cloned()).collect(),
    }
}

/// Lowercase words of `s`, letters and digits only.
fn words(s: &str) -> Vec<String> {
    s.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_string).collect()
}

/// The preset whose name appears, word for word, in the adapter's name or
/// description (`NVIDIA GeForce RTX 4090` → `GeForce RTX 4090`), if exactly
/// one does; the longest name wins (`RTX 4090` over `RTX 40`). Browsers
/// usually hide the name, so this is often `None`; the user then picks.
pub fn matching_preset<'a>(adapter: &Adapter, presets: &'a [GpuPreset]) -> Option<&'a GpuPreset> {
    let haystack = words(&format!("{} {}", adapter.name, adapter.description));
    let contains = |needle: &[String]| !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle);
    presets
        .iter()
        .filter(|p| {
            let name = words(p.name);
            // Vendor words are often absent from one side ("GeForce", "NVIDIA").
            let core: Vec<String> =
                name.iter().filter(|w| !["nvidia", "geforce", "amd", "radeon", "intel"].contains(&w.as_str())).cloned().collect();
            contains(&name) || (core.len() >= 2 && contains(&core))
        })
        .max_by_key(|p| p.name.len())
}

/// Presets of the adapter's vendor (`GPUAdapterInfo.vendor`), offered
/// first in the picker.
pub fn vendor_presets<'a>(adapter: &Adapter, presets: &'a [GpuPreset]) -> Vec<&'a GpuPreset> {
    let vendor = adapter.vendor.to_lowercase();
    presets.iter().filter(|p| !vendor.is_empty() && p.vendor == vendor).collect()
}

#[cfg(test)]
mod tests {
    use super::{Rate, kernel_rows, layer_rows, matching_preset, vendor_presets};
    use crate::bench::model::{Adapter, Report};
    use vramfit_core::gpu_presets;

    const REPORT: &str = r#"{"schema":"vramfit.bench/1","size":"small","results":[
        {"kernel":"matmul","variant":"tiled","dtype":"f32","shape":"256x256x256","metric":"gflops","median_ms":2.0,"gflops":1000.0,"gbs":1.0},
        {"kernel":"matmul","variant":"tiled","dtype":"f16","shape":"256x256x256","metric":"gflops","median_ms":1.0,"gflops":2000.0,"gbs":1.0},
        {"kernel":"gelu","variant":"tanh","dtype":"f32","shape":"1048576","metric":"gbs","median_ms":0.1,"gflops":5.0,"gbs":504.0}],
        "speedups":[{"what":"matmul tiled vs naive (f32)","factor":6.5}],
        "layers":[{"layer":"resnet","dtype":"f32","shape":{"layer":"resnet","batch":1,"side":28},"scaling":null,"saved_bytes":1000,
          "forward_backward":{"median_ms":3.0,"gflops":40.0},
          "estimate":{"model":"resnet50","layer":"layer1.1","estimated_bytes":1100,"measured_bytes":1000,
            "differences":[{"what":"the block's input is counted in the previous layer","bytes":100}],"rounding_bytes":0},
          "notes":[],"future_field":1}]}"#;

    #[test]
    fn rows_show_percent_of_the_chosen_presets_peak_and_none_without_one() {
        let report = Report::parse(REPORT).unwrap();
        let presets = gpu_presets();
        let rtx4090 = presets.iter().find(|p| p.id == "rtx-4090").unwrap();
        let rows = kernel_rows(&report, Some(rtx4090));
        let pct = |i: usize| rows[i].peak_percent.unwrap();
        assert!((pct(0) - 100.0 * 1000.0 / (rtx4090.fp32_tflops * 1e3)).abs() < 1e-9);
        assert!((pct(1) - 100.0 * 2000.0 / (rtx4090.fp16_tflops * 1e3)).abs() < 1e-9);
        assert_eq!(rows[2].rate, Rate::Gbs);
        assert!((pct(2) - 100.0 * 504.0 / rtx4090.bandwidth_gbs).abs() < 1e-9);
        assert_eq!(rows[1].f16_speedup, Some(2.0));
        assert_eq!(rows[0].f16_speedup, None);
        assert!(kernel_rows(&report, None).iter().all(|r| r.peak_percent.is_none()));
        assert_eq!(report.matmul_speedup("f32"), Some(6.5));
    }

    #[test]
    fn layer_rows_put_the_estimate_next_to_the_measurement_with_reasons() {
        let rows = layer_rows(&Report::parse(REPORT).unwrap());
        assert_eq!((rows[0].measured_bytes, rows[0].estimated_bytes), (1000, Some(1100)));
        assert_eq!(rows[0].differences.len(), 1);
        assert_eq!(rows[0].shape, "batch 1, side 28");
    }

    #[test]
    fn presets_match_only_by_name_and_unknown_gpus_get_none() {
        let presets = gpu_presets();
        let named = Adapter { name: "NVIDIA GeForce RTX 4090".into(), vendor: "nvidia".into(), ..Adapter::default() };
        assert_eq!(matching_preset(&named, &presets).map(|p| p.id), Some("rtx-4090"));
        let hidden = Adapter { vendor: "nvidia".into(), architecture: "lovelace".into(), ..Adapter::default() };
        assert!(matching_preset(&hidden, &presets).is_none());
        assert!(!vendor_presets(&hidden, &presets).is_empty());
        let swiftshader = Adapter { vendor: "google".into(), architecture: "swiftshader".into(), ..Adapter::default() };
        assert!(matching_preset(&swiftshader, &presets).is_none());
        assert!(vendor_presets(&swiftshader, &presets).is_empty());
        assert_eq!(swiftshader.label(), "google swiftshader");
    }
}
