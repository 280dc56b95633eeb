//! Report rows as the Benchmark tab shows them (percent of the chosen GPU
//! preset's peak, f16 speed-ups, estimate vs measurement), and matching
//! the adapter to a GPU preset. Only a preset the user confirmed has a
//! peak: an unknown GPU gets no percentage.

use vramfit_core::GpuPreset;

use super::model::{Adapter, LayerResult, Report};
use crate::i18n::Key;

/// A sentence of the report, to say in the reader's language when the page
/// knows it, else as the report's English.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sentence {
    /// A translated sentence and the values it quotes.
    Known(Key, Vec<String>),
    /// Only the English text (an id this page does not know).
    English(String),
}

impl Sentence {
    /// The sentence for `id` with `args`, or `english` when `id` is unknown
    /// or quotes a different number of values than the translation expects.
    pub fn of(id: &str, args: &[String], english: &str) -> Sentence {
        let known = match id {
            "block-input-vs-output" => Some((Key::BenchWhyBlockIo, 0)),
            "attention-dropout" => Some((Key::BenchWhyAttnDropout, 2)),
            "residual-dropout" => Some((Key::BenchWhyResidDropout, 1)),
            "gelu-new" => Some((Key::BenchWhyGeluNew, 0)),
            "resnet-block-input" => Some((Key::BenchWhyResnetInput, 0)),
            "fp16-resnet-in-fp32" => Some((Key::BenchWhyFp16Resnet, 0)),
            "allocator-rounding" => Some((Key::BenchWhyRounding, 0)),
            "scaled" => Some((Key::BenchNoteScaled, 4)),
            "no-estimate" => Some((Key::BenchNoteNoEstimate, 1)),
            "no-resnet-stage" => Some((Key::BenchNoteNoStage, 0)),
            _ => None,
        };
        match known {
            Some((key, n)) if n == args.len() => Sentence::Known(key, args.to_vec()),
            _ => Sentence::English(english.to_string()),
        }
    }
}

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
            let rate = if r.metric == "gbs" {
                Rate::Gbs
            } else {
                Rate::Gflops
            };
            let value = if rate == Rate::Gbs { r.gbs } else { r.gflops };
            let peak = preset.map(|p| match (rate, r.dtype.as_str()) {
                (Rate::Gbs, _) => p.bandwidth_gbs,
                (Rate::Gflops, "f16") => p.fp16_tflops * 1e3,
                (Rate::Gflops, _) => p.fp32_tflops * 1e3,
            });
            let f16_speedup = (r.dtype == "f16")
                .then(|| {
                    report
                        .results
                        .iter()
                        .find(|b| b.dtype == "f32" && name(b) == name(r))
                })
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
    pub differences: Vec<(Sentence, i64)>,
    /// How the sizes were scaled, and other notes.
    pub notes: Vec<Sentence>,
}

/// The layer rows of `report`.
pub fn layer_rows(report: &Report) -> Vec<LayerRow> {
    report.layers.iter().map(layer_row).collect()
}

fn layer_row(r: &LayerResult) -> LayerRow {
    let mut differences: Vec<(Sentence, i64)> = r
        .estimate
        .iter()
        .flat_map(|e| {
            e.differences
                .iter()
                .map(|d| (Sentence::of(&d.id, &d.args, &d.what), d.bytes))
        })
        .collect();
    if let Some(e) = r.estimate.as_ref().filter(|e| e.rounding_bytes != 0) {
        differences.push((
            Sentence::Known(Key::BenchWhyRounding, Vec::new()),
            e.rounding_bytes,
        ));
    }
    let english: Vec<&String> = r.scaling.iter().chain(r.notes.iter()).collect();
    // Phrases say the same as the English notes, in order; an older report has none.
    let notes = if r.phrases.len() == english.len() {
        r.phrases
            .iter()
            .zip(&english)
            .map(|(p, e)| Sentence::of(&p.id, &p.args, e))
            .collect()
    } else {
        english
            .into_iter()
            .map(|e| Sentence::English(e.clone()))
            .collect()
    };
    LayerRow {
        layer: r.layer.clone(),
        dtype: r.dtype.clone(),
        shape: r.describe_shape(),
        measured_bytes: r.saved_bytes,
        estimated_bytes: r.estimate.as_ref().map(|e| e.estimated_bytes),
        forward_backward: r.forward_backward.map(|p| (p.median_ms, p.gflops)),
        differences,
        notes,
    }
}

/// Lowercase words of `s`, ASCII letters and digits only (adapter and GPU names).
fn words(s: &str) -> Vec<String> {
    s.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The preset whose name appears, word for word, in the adapter's name or
/// description (`NVIDIA GeForce RTX 4090` → `GeForce RTX 4090`), if exactly
/// one does; the longest name wins (`RTX 4090` over `RTX 40`). Browsers
/// usually hide the name, so this is often `None`; the user then picks.
pub fn matching_preset<'a>(adapter: &Adapter, presets: &'a [GpuPreset]) -> Option<&'a GpuPreset> {
    let haystack = words(&format!("{} {}", adapter.name, adapter.description));
    let contains = |needle: &[String]| {
        !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
    };
    presets
        .iter()
        .filter(|p| {
            let name = words(&p.name);
            // Vendor words are often absent from one side ("GeForce", "NVIDIA").
            let core: Vec<String> = name
                .iter()
                .filter(|w| !["nvidia", "geforce", "amd", "radeon", "intel"].contains(&w.as_str()))
                .cloned()
                .collect();
            contains(&name) || (core.len() >= 2 && contains(&core))
        })
        .max_by_key(|p| p.name.len())
}

/// Presets of the adapter's vendor (`GPUAdapterInfo.vendor`), offered
/// first in the picker.
pub fn vendor_presets<'a>(adapter: &Adapter, presets: &'a [GpuPreset]) -> Vec<&'a GpuPreset> {
    let vendor = adapter.vendor.to_ascii_lowercase();
    presets
        .iter()
        .filter(|p| !vendor.is_empty() && p.vendor().id() == vendor)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Rate, Sentence, kernel_rows, layer_rows, matching_preset, vendor_presets};
    use crate::bench::model::{Adapter, Report};
    use crate::i18n::Key;
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
          "notes":[],"future_field":1},
          {"layer":"transformer","dtype":"f16","shape":{"layer":"transformer","batch":2},"scaling":"scaled batch 8 -> 2: ...",
           "saved_bytes":10,"estimate":{"estimated_bytes":30,"measured_bytes":10,"rounding_bytes":4,
             "differences":[{"what":"residual dropouts (p = 0.1): ...","bytes":16,"id":"residual-dropout","args":["0.1"]},
                            {"what":"a reason from a newer report","bytes":0,"id":"newer-reason","args":[]}]},
           "notes":["no estimate: x"],
           "phrases":[{"id":"scaled","args":["batch 8 -> 2","4096","f16","65536"]},{"id":"no-estimate","args":["x"]}]}]}"#;

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
        assert!(
            kernel_rows(&report, None)
                .iter()
                .all(|r| r.peak_percent.is_none())
        );
        assert_eq!(report.matmul_speedup("f32"), Some(6.5));
    }

    #[test]
    fn layer_rows_put_the_estimate_next_to_the_measurement_with_reasons() {
        let rows = layer_rows(&Report::parse(REPORT).unwrap());
        assert_eq!(
            (rows[0].measured_bytes, rows[0].estimated_bytes),
            (1000, Some(1100))
        );
        assert_eq!(rows[0].differences.len(), 1);
        assert_eq!(rows[0].shape, "batch 1, side 28");
    }

    #[test]
    fn reasons_and_notes_are_translatable_by_id_and_unknown_ones_stay_english() {
        let rows = layer_rows(&Report::parse(REPORT).unwrap());
        // A report without ids (older): the English.
        assert_eq!(
            rows[0].differences[0].0,
            Sentence::English("the block's input is counted in the previous layer".into())
        );
        let t = &rows[1];
        assert_eq!(
            t.differences[0],
            (
                Sentence::Known(Key::BenchWhyResidDropout, vec!["0.1".into()]),
                16
            )
        );
        assert_eq!(
            t.differences[1].0,
            Sentence::English("a reason from a newer report".into())
        );
        assert_eq!(
            t.differences[2],
            (Sentence::Known(Key::BenchWhyRounding, vec![]), 4)
        );
        assert_eq!(
            t.notes,
            vec![
                Sentence::Known(
                    Key::BenchNoteScaled,
                    ["batch 8 -> 2", "4096", "f16", "65536"]
                        .map(String::from)
                        .to_vec()
                ),
                Sentence::Known(Key::BenchNoteNoEstimate, vec!["x".into()]),
            ]
        );
        // The wrong number of values for the translation: the English.
        assert_eq!(
            Sentence::of("residual-dropout", &[], "english"),
            Sentence::English("english".into())
        );
    }

    #[test]
    fn presets_match_only_by_name_and_unknown_gpus_get_none() {
        let presets = gpu_presets();
        let named = Adapter {
            name: "NVIDIA GeForce RTX 4090".into(),
            vendor: "nvidia".into(),
            ..Adapter::default()
        };
        assert_eq!(
            matching_preset(&named, &presets).map(|p| p.id.as_ref()),
            Some("rtx-4090")
        );
        let hidden = Adapter {
            vendor: "nvidia".into(),
            architecture: "lovelace".into(),
            ..Adapter::default()
        };
        assert!(matching_preset(&hidden, &presets).is_none());
        assert!(!vendor_presets(&hidden, &presets).is_empty());
        let swiftshader = Adapter {
            vendor: "google".into(),
            architecture: "swiftshader".into(),
            ..Adapter::default()
        };
        assert!(matching_preset(&swiftshader, &presets).is_none());
        assert!(vendor_presets(&swiftshader, &presets).is_empty());
        assert_eq!(swiftshader.label(), "google swiftshader");
        assert!(swiftshader.is_software(), "SwiftShader draws on the CPU");
        // A real GPU is not; Mesa's CPU rasterizer is, whatever it is flagged.
        assert!(!hidden.is_software());
        let llvmpipe = Adapter {
            description: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            ..Adapter::default()
        };
        assert!(llvmpipe.is_software());
    }
}
