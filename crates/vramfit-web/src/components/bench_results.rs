//! The Benchmark tab's results: the headline numbers (tuned vs naive
//! matmul, the layers' rate, the calculator's step at that rate), the
//! kernel and layer tables, the notes and the exports.

use std::rc::Rc;

use crate::bench::hook::Export;
use crate::bench::model::Projection;
use crate::bench::rows::{Rate, Sentence, kernel_rows, layer_rows};
use crate::bench::state::Finished;
use crate::hooks::use_prefs;
use crate::i18n::{Key, Lang, t, tf};
use crate::present;
use vramfit_core::{Bytes, GpuPreset};
use yew::prelude::*;

/// Props of [`BenchResults`].
#[derive(Properties, PartialEq)]
pub struct BenchResultsProps {
    /// The finished run.
    pub finished: Rc<Finished>,
    /// The preset to take percentages of (none: no percentages).
    pub preset: Option<GpuPreset>,
    /// The calculator's step at the measured rate.
    pub projection: Option<Projection>,
    /// Whether the run was on a software adapter (its times say little about a GPU).
    #[prop_or_default]
    pub software: bool,
    /// Download requests.
    pub on_export: Callback<Export>,
}

/// The results card.
#[function_component]
pub fn BenchResults(props: &BenchResultsProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let report = &props.finished.report;
    let kernels = kernel_rows(report, props.preset.as_ref());
    let layers = layer_rows(report);
    let export = |kind: Export| {
        let on_export = props.on_export.clone();
        Callback::from(move |_| on_export.emit(kind))
    };
    let dash = || html! { <span class="muted">{ "—" }</span> };
    let bytes = |b: u64| present::bytes(Bytes(b), prefs.units);
    // A difference with its sign, in the page's units (KiB, MiB …).
    let signed = |b: i64| {
        let sign = if b < 0 { "−" } else { "+" };
        format!("{sign}{}", bytes(b.unsigned_abs()))
    };
    let no_f16 = report.notes.iter().any(|n| n.starts_with("f16 skipped"));
    html! {
        <section class="card bench-results" id="bench-results" aria-labelledby="bench-results-title">
            <h2 id="bench-results-title" class="card-title">{ t(lang, Key::BenchResults) }</h2>
            <p class="card-sub">{ t(lang, Key::BenchResultsSub) }{ " " }<span translate="no">{ &report.size }</span></p>
            { headline(props, lang) }
            if !kernels.is_empty() {
                <h3 class="bench-h3">{ t(lang, Key::BenchKernelsTitle) }</h3>
                <div class="table-scroll">
                    <table class="data-table bench-table" id="bench-kernels">
                        <thead><tr>
                            <th scope="col">{ t(lang, Key::BenchColKernel) }</th>
                            <th scope="col">{ t(lang, Key::BenchColType) }</th>
                            <th scope="col">{ t(lang, Key::BenchColSize) }</th>
                            <th scope="col" class="num">{ t(lang, Key::BenchColMedian) }</th>
                            <th scope="col" class="num">{ t(lang, Key::BenchColRate) }</th>
                            <th scope="col" class="num">{ t(lang, Key::BenchColPeak) }</th>
                            <th scope="col" class="num">{ t(lang, Key::BenchColF16) }</th>
                        </tr></thead>
                        <tbody>
                            { for kernels.iter().map(|r| html! {
                                <tr data-kernel={r.name.clone()} data-dtype={r.dtype.clone()}>
                                    <th scope="row" translate="no">{ &r.name }</th>
                                    <td translate="no">{ &r.dtype }</td>
                                    <td translate="no">{ &r.shape }</td>
                                    <td class="num">{ format!("{:.3}", r.median_ms) }</td>
                                    <td class="num" data-value={r.value.to_string()}>{ format!("{:.1} ", r.value) }<span translate="no">{ if r.rate == Rate::Gbs { "GB/s" } else { "GFLOP/s" } }</span></td>
                                    <td class="num">{ r.peak_percent.map_or_else(dash, |p| html! { { format!("{p:.1} %") } }) }</td>
                                    <td class="num">{ r.f16_speedup.map_or_else(dash, |f| html! { { format!("{f:.2}×") } }) }</td>
                                </tr>
                            }) }
                        </tbody>
                    </table>
                </div>
                if props.preset.is_none() {
                    <p class="field-hint">{ t(lang, Key::BenchNoPeak) }</p>
                }
            }
            if !layers.is_empty() {
                <h3 class="bench-h3">{ t(lang, Key::BenchLayersTitle) }</h3>
                <p class="card-sub">{ t(lang, Key::BenchLayersSub) }</p>
                <div class="table-scroll">
                    <table class="data-table bench-table" id="bench-layers">
                        <thead><tr>
                            <th scope="col">{ t(lang, Key::BenchColLayer) }</th>
                            <th scope="col">{ t(lang, Key::BenchColType) }</th>
                            <th scope="col" class="num">{ t(lang, Key::BenchColMeasured) }</th>
                            <th scope="col" class="num">{ t(lang, Key::BenchColEstimated) }</th>
                            <th scope="col" class="num">{ t(lang, Key::BenchColStep) }</th>
                        </tr></thead>
                        { for layers.iter().map(|r| html! {
                            <tbody class="bench-layer" data-layer={r.layer.clone()}>
                                <tr>
                                    <th scope="row"><span translate="no">{ &r.layer }</span><span class="bench-shape" translate="no">{ &r.shape }</span></th>
                                    <td translate="no">{ &r.dtype }</td>
                                    <td class="num" data-bytes={r.measured_bytes.to_string()}>{ bytes(r.measured_bytes) }</td>
                                    <td class="num">{ r.estimated_bytes.map_or_else(dash, |b| html! { { bytes(b) } }) }</td>
                                    <td class="num">{ r.forward_backward.map_or_else(dash, |(ms, g)| html! { <>{ format!("{ms:.2} ") }{ t(lang, Key::UnitMs) }<br /><span class="muted">{ format!("{g:.1} ") }<span translate="no">{ "GFLOP/s" }</span></span></> }) }</td>
                                </tr>
                                { for r.differences.iter().map(|(what, b)| html! {
                                    <tr class="bench-why">{ sentence_cell(what, 4, lang) }<td class="num" data-bytes={b.to_string()}>{ signed(*b) }</td></tr>
                                }) }
                                { for r.notes.iter().map(|note| html! {
                                    <tr class="bench-why">{ sentence_cell(note, 5, lang) }</tr>
                                }) }
                            </tbody>
                        }) }
                    </table>
                </div>
            }
            if no_f16 {
                <p class="field-hint" id="bench-report-no-f16">{ t(lang, Key::BenchNoF16) }</p>
            }
            <div class="bench-actions bench-export">
                <button type="button" class="link-button" id="bench-export-json" onclick={export(Export::Json)}>{ t(lang, Key::BenchExportJson) }</button>
                <button type="button" class="link-button" id="bench-export-md" onclick={export(Export::Markdown)}>{ t(lang, Key::BenchExportMd) }</button>
            </div>
            <details class="bench-raw">
                <summary>{ t(lang, Key::BenchShowMarkdown) }</summary>
                <textarea id="bench-markdown" readonly=true rows="12" aria-label={t(lang, Key::BenchShowMarkdown)} translate="no" value={props.finished.markdown.clone()} />
            </details>
        </section>
    }
}

/// The headline: tuned vs naive matmul, the layers' rate, the projection.
fn headline(props: &BenchResultsProps, lang: Lang) -> Html {
    let report = &props.finished.report;
    let best = |dtype: &str| {
        report
            .results
            .iter()
            .filter(|r| r.kernel == "matmul" && r.dtype == dtype)
            .map(|r| r.gflops)
            .fold(None, |m: Option<f64>, g| Some(m.map_or(g, |m| m.max(g))))
    };
    let items: Vec<Html> = ["f32", "f16"]
        .iter()
        .filter_map(|dtype| {
            let factor = report.matmul_speedup(dtype)?;
            let gflops = best(dtype).unwrap_or_default();
            Some(html! {
                <li id={format!("bench-speedup-{dtype}")} data-factor={factor.to_string()} data-gflops={gflops.to_string()}>
                    { tf(lang, Key::BenchSpeedup, &[dtype, &format!("{factor:.1}"), &format!("{gflops:.1}")]) }
                </li>
            })
        })
        .collect();
    let has_f16 = report.layers.iter().any(|l| l.dtype == "f16");
    let throughput = report.throughput.map(|t| {
        let text = if has_f16 {
            tf(
                lang,
                Key::BenchThroughput,
                &[
                    &format!("{:.1}", t.fp32_flops_per_s / 1e9),
                    &format!("{:.1}", t.fp16_flops_per_s / 1e9),
                ],
            )
        } else {
            tf(
                lang,
                Key::BenchThroughputF32,
                &[&format!("{:.1}", t.fp32_flops_per_s / 1e9)],
            )
        };
        html! { <li id="bench-throughput">{ text }</li> }
    });
    let projection = props.projection.map(|p| {
        let dtype = if p.half && has_f16 { "fp16" } else { "fp32" };
        html! {
            <li id="bench-projection" data-seconds={p.step_seconds.to_string()}>
                <strong>{ tf(lang, Key::BenchProjection, &[&crate::planner::seconds(p.step_seconds, lang), &format!("{:.1}", p.flops_per_s / 1e9), dtype]) }</strong>
                if p.half && !has_f16 {
                    { " " }{ t(lang, Key::BenchProjectionNoF16) }
                }
                if props.software {
                    { " " }<span class="bench-tag" id="bench-projection-software">{ t(lang, Key::BenchSoftwareProjection) }</span>
                }
            </li>
        }
    });
    let no_projection = (report.throughput.is_none())
        .then(|| html! { <li class="muted">{ t(lang, Key::BenchNoProjection) }</li> });
    html! {
        <ul class="bench-highlights">
            { for items }
            { for throughput }
            { for projection }
            { for no_projection }
        </ul>
    }
}

/// A table cell saying `s` in `lang`, or in English (marked as such) when
/// the page does not know the sentence.
fn sentence_cell(s: &Sentence, colspan: u32, lang: Lang) -> Html {
    let colspan = colspan.to_string();
    match s {
        Sentence::Known(key, args) => {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            html! { <td colspan={colspan}>{ tf(lang, *key, &args) }</td> }
        }
        Sentence::English(text) => {
            html! { <td colspan={colspan} lang="en" translate="no">{ text }</td> }
        }
    }
}
