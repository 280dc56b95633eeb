//! vramfit against real GPUs: every run in `tests/reference/real_gpu/runs.csv`
//! (published measurements, written by `build_runs.py` there) and every CSV
//! that `tests/gpu/memory_truth.py` left in `tests/reference/real_gpu/measured/`
//! is estimated, and the device memory (what nvidia-smi / NVML shows), the
//! caching allocator's reserved memory and the allocated peak are compared
//! wherever the run published them.
//!
//! Run with `--nocapture` to see the table; the folder's README keeps a copy.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

mod common;

use common::split_csv;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use vramfit_core::config::{
    AttentionMask, AutocastRegion, LoopOutputs, TorchRelease, TrainingCache, ZeroGrad,
};
use vramfit_core::driver_reserve::{self, DeviceReading};
use vramfit_core::parallel::{Parallel, Strategy};
use vramfit_core::{
    ModelSpec, ModuleLoading, Overheads, TrainConfig, estimate, gpu_preset, model_preset,
};

/// The published runs.
const RUNS: &str = include_str!("../../../tests/reference/real_gpu/runs.csv");

/// Allocated peak: vramfit's claim, held on every run that published it.
const MAX_ALLOCATED_ERROR: f64 = 0.05;

/// Device used: the bound held on every exact run, once there is one.
///
/// TODO(#21): the lead sets this to `Some(DEVICE_USED_TARGET)` when the
/// caching allocator, the CUDA context by GPU generation and the optimizer
/// implementations are modelled; on the current core the errors are printed
/// only (the README keeps the table).
const DEVICE_USED_TOLERANCE: Option<f64> = None;

/// Device used: the bound issue #21 asks for ("within 10 % of every
/// published real-GPU run that states its configuration"); the table says
/// how many runs meet it.
const DEVICE_USED_TARGET: f64 = 0.10;

/// One run read from a CSV: its named fields.
struct Run {
    fields: HashMap<String, String>,
    /// The folder that the CSV lies in (config paths are relative to it).
    dir: PathBuf,
}

impl Run {
    fn get(&self, name: &str) -> &str {
        self.fields
            .get(name)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("column {name}"))
    }

    /// A measured byte count; `None` where the run did not publish it.
    fn bytes(&self, name: &str) -> Option<f64> {
        let v = self.get(name);
        (!v.is_empty()).then(|| v.parse().unwrap_or_else(|e| panic!("{name}={v}: {e}")))
    }
}

fn read_runs(text: &str, dir: &Path) -> Vec<Run> {
    let mut lines = text.lines();
    let header = split_csv(lines.next().expect("header"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f = split_csv(l);
            assert_eq!(f.len(), header.len(), "{l}");
            Run {
                fields: header.iter().cloned().zip(f).collect(),
                dir: dir.to_path_buf(),
            }
        })
        .collect()
}

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/real_gpu")
}

/// Whether a `memory_truth.py` row holds a measurement vramfit can be held
/// to: measured (not skipped, failed or a dry run) on a GPU with a preset.
/// Published runs have no `status` column and always count.
fn measured(run: &Run) -> bool {
    let status = run.fields.get("status").map_or("ok", String::as_str);
    if status != "ok" || run.get("gpu").is_empty() {
        println!(
            "not compared: {} ({status}, gpu {:?})",
            run.get("id"),
            run.get("gpu")
        );
        return false;
    }
    true
}

/// The published runs and any real-GPU measurements of `memory_truth.py`.
fn all_runs() -> Vec<Run> {
    let dir = reference_dir();
    let mut runs = read_runs(RUNS, &dir);
    if let Ok(entries) = std::fs::read_dir(dir.join("measured")) {
        let mut files: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            runs.extend(
                read_runs(&text, &dir.join("measured"))
                    .into_iter()
                    .filter(measured),
            );
        }
    }
    runs
}

/// A preset id, or a `config.json` beside the CSV imported as a pasted one.
fn model(run: &Run) -> ModelSpec {
    let id = run.get("model");
    if let Ok(p) = model_preset(id) {
        return p.spec;
    }
    let path = run.dir.join(id);
    let json = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    vramfit_core::hf::import(&json)
        .unwrap_or_else(|e| panic!("{path:?}: {e}"))
        .spec
}

fn config(run: &Run) -> TrainConfig {
    let num = |name: &str| run.get(name).parse::<u64>().unwrap_or(0);
    let attention = match run.get("attention") {
        "none" | "" => "eager",
        a => a,
    };
    let strategy: Strategy = run.get("strategy").parse().unwrap();
    TrainConfig {
        batch: num("batch"),
        seq: num("seq").max(1),
        image: num("image").max(1),
        precision: run.get("precision").parse().unwrap(),
        optimizer: run.get("optimizer").parse().unwrap(),
        checkpointing: run.get("checkpointing").parse().unwrap(),
        attention: attention.parse().unwrap(),
        grad_accum: num("grad_accum").max(1),
        parallel: Parallel {
            strategy,
            gpus_per_node: num("gpus_per_node").max(1),
            nodes: num("nodes").max(1),
            ..Parallel::default()
        },
        optimizer_impl: run.get("optimizer_impl").parse().unwrap(),
        // `memory_truth.py`'s loop calls `zero_grad(set_to_none=True)`; its
        // CSVs before 2026-12-04 have no such column, nor the three below.
        zero_grad: run
            .fields
            .get("zero_grad")
            .map_or(Ok(ZeroGrad::SetToNone), |v| v.parse())
            .unwrap(),
        // `memory_truth.py`'s loop returns the loss alone.
        loop_outputs: run
            .fields
            .get("loop_outputs")
            .map_or(Ok(LoopOutputs::Dropped), |v| v.parse())
            .unwrap(),
        // `memory_truth.py` runs today's PyTorch.
        pytorch: run
            .fields
            .get("pytorch")
            .map_or(Ok(TorchRelease::Current), |v| v.parse())
            .unwrap(),
        // `memory_truth.py` leaves autocast before backward.
        autocast_region: run
            .fields
            .get("autocast_region")
            .map_or(Ok(AutocastRegion::Forward), |v| v.parse())
            .unwrap(),
        training_cache: training_cache(run),
        attention_mask: attention_mask(run),
        ..TrainConfig::default()
    }
}

/// The run's `attention_mask` column; where it has none, what transformers
/// did on its CUDA GPU: `memory_truth.py` passes no mask (so SDPA reads
/// grouped heads, PyTorch 2.5 and later) unless its notes say it passed one
/// with a padded position. Published runs name no release: the default.
fn attention_mask(run: &Run) -> AttentionMask {
    if let Some(v) = run.fields.get("attention_mask").filter(|v| !v.is_empty()) {
        return v.parse().unwrap();
    }
    let library = run.fields.get("library").map_or("", String::as_str);
    let notes = run.fields.get("notes").map_or("", String::as_str);
    let torch = run.fields.get("torch_version").map_or("", String::as_str);
    let mut parts = torch
        .split(['.', '+'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let release = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if !library.starts_with("transformers") || release < (2, 5) {
        AttentionMask::Expanded
    } else if notes.contains("an attention_mask with") {
        AttentionMask::Padding
    } else {
        AttentionMask::None
    }
}

/// The run's `training_cache` column; where it has none, what its
/// transformers release did: `memory_truth.py`'s runs before that column
/// name it in `library`, and transformers 5 copies a decoder's keys and
/// values into its cache unless the notes say `use_cache` was off (the
/// lowering ignores it for encoders). Published runs name no release: off.
fn training_cache(run: &Run) -> TrainingCache {
    if let Some(v) = run.fields.get("training_cache").filter(|v| !v.is_empty()) {
        return v.parse().unwrap();
    }
    let library = run.fields.get("library").map_or("", String::as_str);
    let notes = run.fields.get("notes").map_or("", String::as_str);
    if library.starts_with("transformers 5") && !notes.contains("use_cache off") {
        TrainingCache::Copies
    } else {
        TrainingCache::Off
    }
}

/// How the run's CUDA loaded kernels: from the CUDA version its PyTorch was
/// built with, else from the driver (one older than R515 runs no CUDA 11.7,
/// so loading was eager); lazy when neither is stated (PyTorch's default
/// since 1.13).
fn loading(run: &Run) -> ModuleLoading {
    let version = |v: &str| -> Option<(u32, u32)> {
        let mut parts = v.split('.').map(|p| p.trim().parse::<u32>());
        Some((
            parts.next()?.ok()?,
            parts.next().and_then(Result::ok).unwrap_or(0),
        ))
    };
    if let Some((major, minor)) = version(run.get("cuda_version")) {
        return ModuleLoading::for_cuda(major, minor);
    }
    match version(run.get("driver")) {
        Some((driver, _)) if driver < 515 => ModuleLoading::Eager,
        _ => ModuleLoading::Lazy,
    }
}

/// The driver branch the run's NVML answered from: the stated driver, else
/// the least a CUDA 12 runtime runs on (R525, NVIDIA's minor-version
/// compatibility), else unknown.
fn driver_branch(run: &Run) -> Option<u32> {
    let major = |v: &str| v.split('.').next()?.trim().parse::<u32>().ok();
    major(run.get("driver")).or_else(|| match major(run.get("cuda_version")) {
        Some(cuda) if cuda >= 12 => Some(525),
        _ => None,
    })
}

/// vramfit's figure for the run's device reading, like for like: nvidia-smi's
/// (`device_used_bytes`), or NVML v1 `used`, which on an R510 or later driver
/// adds what the driver reserves on the GPU ([`driver_reserve`]); `None` when
/// that reservation is not published for the GPU.
fn device_like_measured(run: &Run, device: u64) -> Option<u64> {
    let reading: DeviceReading = match run.get("device_reading") {
        "nvml-v1-used" => DeviceReading::NvmlV1Used,
        "nvidia-smi" => DeviceReading::NvidiaSmi,
        other => panic!("{}: device_reading {other:?}", run.get("id")),
    };
    if !driver_reserve::includes_reservation(reading, driver_branch(run)) {
        return Some(device);
    }
    let reserved = driver_reserve::driver_reserved(run.get("gpu"));
    if reserved.is_none() {
        println!(
            "not compared: {} (NVML v1 used, and no published reservation for {})",
            run.get("id"),
            run.get("gpu")
        );
    }
    reserved.map(|r| device + r.0)
}

/// One quantity of one run: measured and ours, in bytes.
#[derive(Clone, Copy)]
struct Pair {
    measured: f64,
    ours: f64,
}

impl Pair {
    fn error(self) -> f64 {
        (self.ours - self.measured) / self.measured
    }
}

/// A run compared: device used, reserved, allocated (each where published).
struct Compared {
    id: String,
    kind: vramfit_core::models::InputKind,
    exact: bool,
    /// The CUDA context alone (NVML used after CUDA initialised), where measured.
    context: Option<Pair>,
    device: Option<Pair>,
    reserved: Option<Pair>,
    allocated: Option<Pair>,
}

fn compare(run: &Run) -> Compared {
    let gpu = gpu_preset(run.get("gpu")).unwrap();
    let mut overheads = Overheads::for_gpu(&gpu);
    overheads.cuda_context = loading(run).context_on(&gpu);
    overheads.kernel_images = loading(run).kernel_images(gpu.arch);
    // `PYTORCH_CUDA_ALLOC_CONF` as the run set it (empty: PyTorch's defaults).
    if let Some(conf) = run.fields.get("allocator_conf").filter(|c| !c.is_empty()) {
        overheads.allocator = conf
            .parse()
            .unwrap_or_else(|err| panic!("{}: allocator_conf {conf:?}: {err}", run.get("id")));
    }
    let e = estimate(&model(run), &config(run), &overheads, Some(&gpu))
        .unwrap_or_else(|err| panic!("{}: {err}", run.get("id")));
    // The run did not fail: on its GPU the allocator stayed within the
    // memory (returning cached segments if it had to).
    let device = e
        .gpu
        .as_ref()
        .and_then(|g| g.device_used_bytes)
        .unwrap_or(e.device_used_bytes);
    let pair = |col: &str, ours: u64| {
        run.bytes(col).map(|measured| Pair {
            measured,
            ours: ours as f64,
        })
    };
    let device = match run.bytes("device_used_bytes") {
        Some(measured) => device_like_measured(run, device.0).map(|ours| Pair {
            measured,
            ours: ours as f64,
        }),
        None => None,
    };
    Compared {
        id: run.get("id").to_string(),
        kind: model(run).input_kind(),
        exact: run.get("fidelity") == "exact",
        context: pair("context_used_bytes", e.overheads.cuda_context.0),
        device,
        reserved: pair("reserved_bytes", e.peak_reserved_bytes.0),
        allocated: pair("allocated_bytes", e.peak_allocated_bytes.0),
    }
}

fn cell(p: Option<Pair>) -> String {
    let mib = |b: f64| b / (1u64 << 20) as f64;
    match p {
        Some(p) => format!(
            "{:>8.0} {:>8.0} {:>+7.1}",
            mib(p.measured),
            mib(p.ours),
            100.0 * p.error()
        ),
        None => format!("{:>8} {:>8} {:>7}", "-", "-", "-"),
    }
}

/// Mean |error| and the worst, over the runs that published the quantity.
fn summary(rows: &[&Compared], pick: impl Fn(&Compared) -> Option<Pair>) -> String {
    let errs: Vec<(f64, &str)> = rows
        .iter()
        .filter_map(|c| pick(c).map(|p| (p.error(), c.id.as_str())))
        .collect();
    if errs.is_empty() {
        return "no runs".to_string();
    }
    let mean = errs.iter().map(|(e, _)| e.abs()).sum::<f64>() / errs.len() as f64;
    let (worst, id) = errs
        .iter()
        .copied()
        .max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()))
        .unwrap();
    format!(
        "{} runs, mean |error| {:.1} %, worst {:+.1} % ({id})",
        errs.len(),
        100.0 * mean,
        100.0 * worst
    )
}

fn print_table(title: &str, rows: &[&Compared]) {
    println!("\n{title}");
    println!(
        "{:<44} {:^25} {:^25} {:^25}",
        "run", "device used MiB", "reserved MiB", "allocated MiB"
    );
    println!(
        "{:<44} {x} {x} {x}",
        "",
        x = format!("{:>8} {:>8} {:>7}", "real", "vramfit", "err %")
    );
    for c in rows {
        println!(
            "{:<44} {} {} {}",
            c.id,
            cell(c.device),
            cell(c.reserved),
            cell(c.allocated)
        );
    }
    println!("device used: {}", summary(rows, |c| c.device));
    println!("reserved:    {}", summary(rows, |c| c.reserved));
    println!("allocated:   {}", summary(rows, |c| c.allocated));
    println!("CUDA context: {}", summary(rows, |c| c.context));
}

#[test]
fn the_csv_reader_splits_quoted_fields_as_python_writes_them() {
    assert_eq!(
        split_csv(r#"a,"| FSDP | 5,762 | 82.4 |",b"#),
        ["a", "| FSDP | 5,762 | 82.4 |", "b"]
    );
    assert_eq!(split_csv(r#""say ""hi""",,x"#), [r#"say "hi""#, "", "x"]);
}

#[test]
fn every_real_gpu_run_is_estimated_and_compared() {
    let runs = all_runs();
    assert!(runs.len() >= 40, "only {} runs", runs.len());
    let compared: Vec<Compared> = runs.iter().map(compare).collect();
    for c in &compared {
        assert!(
            c.device.is_some() || c.reserved.is_some() || c.allocated.is_some(),
            "{}: no measurement",
            c.id
        );
    }
    let exact: Vec<&Compared> = compared.iter().filter(|c| c.exact).collect();
    let approx: Vec<&Compared> = compared.iter().filter(|c| !c.exact).collect();
    print_table(
        "Runs whose configuration vramfit represents exactly",
        &exact,
    );
    print_table(
        "Runs vramfit represents approximately (see notes in runs.csv; not asserted)",
        &approx,
    );

    let devices: Vec<f64> = exact
        .iter()
        .filter_map(|c| c.device.map(Pair::error))
        .collect();
    println!(
        "\ndevice used within the ±{:.0} % target: {} of {} exact runs",
        100.0 * DEVICE_USED_TARGET,
        devices
            .iter()
            .filter(|e| e.abs() <= DEVICE_USED_TARGET)
            .count(),
        devices.len()
    );

    let mut failures = Vec::new();
    for c in &compared {
        if let Some(p) = c.allocated
            && p.error().abs() > MAX_ALLOCATED_ERROR
        {
            failures.push(format!("{} allocated {:+.1} %", c.id, 100.0 * p.error()));
        }
    }
    for c in &exact {
        if let (Some(p), Some(tolerance)) = (c.device, DEVICE_USED_TOLERANCE)
            && p.error().abs() > tolerance
        {
            failures.push(format!("{} device used {:+.1} %", c.id, 100.0 * p.error()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_published_number_appears_in_its_quoted_line() {
    // A transcription guard: the bytes in runs.csv are the quoted number
    // in the unit the source printed (MiB as a whole number, or GiB with
    // one decimal).
    for run in read_runs(RUNS, &reference_dir()) {
        let quote = run.get("quote");
        for col in ["device_used_bytes", "reserved_bytes", "allocated_bytes"] {
            let Some(bytes) = run.bytes(col) else {
                continue;
            };
            let mib = bytes / (1u64 << 20) as f64;
            let printed = [
                format!("{mib:.0}"),
                format!("{:.1}", bytes / (1u64 << 30) as f64),
            ];
            assert!(
                printed.iter().any(|p| quote.contains(p.as_str())),
                "{}: {col} reads {printed:?}, not in {quote:?}",
                run.get("id")
            );
        }
    }
}

/// The spread table in `src/spread.rs` is what the exact runs give on the
/// current estimator (per kind of model, the lowest and highest
/// `measured / estimated − 1` of device memory); `VRAMFIT_WRITE_SPREAD=1`
/// rewrites it.
#[test]
fn the_spread_table_is_the_runs_spread() {
    use vramfit_core::models::InputKind;
    use vramfit_core::spread::{SPREADS, Spread};
    let compared: Vec<Compared> = all_runs().iter().map(compare).collect();
    let mut want: Vec<Spread> = Vec::new();
    for kind in [InputKind::Tokens, InputKind::Image, InputKind::Features] {
        let ratios: Vec<f64> = compared
            .iter()
            .filter(|c| c.exact && c.kind == kind)
            .filter_map(|c| c.device.map(|p| p.measured / p.ours - 1.0))
            .collect();
        if ratios.is_empty() {
            continue;
        }
        // Three decimals: the table is read as percentages to one decimal.
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        want.push(Spread {
            kind,
            runs: ratios.len() as u32,
            below: round(ratios.iter().copied().fold(f64::INFINITY, f64::min)),
            above: round(ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
        });
    }
    let text: String = want
        .iter()
        .map(|s| {
            format!(
                "    Spread {{\n        kind: InputKind::{:?},\n        runs: {},\n        below: {:?},\n        above: {:?},\n    }},\n",
                s.kind, s.runs, s.below, s.above
            )
        })
        .collect();
    if std::env::var("VRAMFIT_WRITE_SPREAD").is_ok_and(|v| v == "1") {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/spread.rs");
        let source = std::fs::read_to_string(&path).unwrap();
        let (head, rest) = source.split_once("    // BEGIN GENERATED\n").unwrap();
        let (_, tail) = rest.split_once("    // END GENERATED\n").unwrap();
        std::fs::write(
            &path,
            format!("{head}    // BEGIN GENERATED\n{text}    // END GENERATED\n{tail}"),
        )
        .unwrap();
        println!("wrote {}", path.display());
        return;
    }
    assert_eq!(
        SPREADS,
        want.as_slice(),
        "src/spread.rs is out of date: rerun with VRAMFIT_WRITE_SPREAD=1"
    );
}

/// `driver_reserve::READINGS` are the preset rows of
/// `tests/reference/real_gpu/driver_reserved.csv` (written from captured
/// `nvidia-smi -q` output by `build_driver_reserved.py`), each GPU once, and
/// every other NVIDIA preset has no size.
#[test]
fn the_driver_reservations_are_the_published_readings() {
    let csv = include_str!("../../../tests/reference/real_gpu/driver_reserved.csv");
    let rows = read_runs(csv, &reference_dir());
    let published: Vec<&Run> = rows
        .iter()
        .filter(|r| !r.get("preset").is_empty())
        .collect();
    assert_eq!(published.len(), driver_reserve::READINGS.len());
    for row in published {
        let ours = driver_reserve::READINGS
            .iter()
            .find(|r| r.preset == row.get("preset"))
            .unwrap_or_else(|| panic!("{} has no reading", row.get("preset")));
        let mib = |col: &str| row.get(col).parse::<u64>().unwrap();
        assert_eq!(ours.product, row.get("product"));
        assert_eq!(ours.driver, row.get("driver"));
        assert_eq!(ours.total_mib, mib("total_mib"));
        assert_eq!(ours.reserved_mib, mib("reserved_mib"));
        assert!(row.get("source_url").ends_with(ours.file), "{}", ours.file);
    }
    for gpu in vramfit_core::gpu_presets() {
        let known = driver_reserve::READINGS.iter().any(|r| r.preset == gpu.id);
        assert_eq!(
            driver_reserve::driver_reserved(&gpu.id).is_some(),
            known,
            "{}",
            gpu.id
        );
    }
}

/// The fixed terms outside the allocator that vramfit takes on a Hopper GPU
/// (the context, the cuBLAS handles' memory and the kernel images) against
/// every libraries probe `memory_truth.py` ran on one: the context step, and
/// everything outside the allocator once the probe's training step ran,
/// each loading mode within 5 %.
#[test]
fn the_hopper_fixed_terms_are_the_libraries_probes_readings() {
    let dir = reference_dir().join("measured/libraries");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut checked = 0;
    for path in entries.map(|e| e.unwrap().path()) {
        let text = std::fs::read_to_string(&path).unwrap();
        let rows = read_runs(&text, &dir);
        let Some(gpu) = rows
            .first()
            .map(|r| r.get("gpu_name"))
            .and_then(|name| match name {
                n if n.contains("H200") => gpu_preset("h200").ok(),
                n if n.contains("H100 PCIe") => gpu_preset("h100-pcie").ok(),
                n if n.contains("H100") => gpu_preset("h100-sxm").ok(),
                _ => None,
            })
        else {
            continue;
        };
        for (mode, loading) in [
            ("LAZY", ModuleLoading::Lazy),
            ("EAGER", ModuleLoading::Eager),
        ] {
            let steps: Vec<&Run> = rows
                .iter()
                .filter(|r| r.get("loading") == mode && r.get("status") == "ok")
                .collect();
            let outside = |r: &Run| r.bytes("delta_outside_allocator_bytes").unwrap_or(0.0);
            let Some(context) = steps.iter().find(|r| r.get("step") == "context") else {
                continue;
            };
            let total: f64 = steps.iter().map(|r| outside(r)).sum();
            let mut o = Overheads::for_gpu(&gpu);
            o.cuda_context = loading.context_on(&gpu);
            o.kernel_images = loading.kernel_images(gpu.arch);
            let ours = o.outside_allocator(vramfit_core::config::Mode::Train).0 as f64;
            for (what, measured, ours) in [
                ("context", outside(context), o.cuda_context.0 as f64),
                ("after a training step", total, ours),
            ] {
                let error = ours / measured - 1.0;
                println!("{} {mode} {what}: measured {measured}, ours {ours}", gpu.id);
                assert!(
                    error.abs() <= 0.05,
                    "{path:?} {mode} {what}: {:+.1} %",
                    100.0 * error
                );
            }
            checked += 1;
        }
    }
    println!("{checked} probe runs checked");
}
