//! A development tool: prints one estimate's peak and breakdown, then the
//! timeline of step 2 (ops whose name contains FILTER) and the per-layer table.
//! `cargo run -p vramfit-core --example timeline -- MODEL BATCH SEQ IMAGE PRECISION OPTIMIZER CKPT [FILTER]`
#![allow(clippy::unwrap_used)] // A development tool: a bad argument may panic.
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let get = |i: usize, d: &str| a.get(i).cloned().unwrap_or_else(|| d.to_string());
    let p = vramfit_core::model_preset(&get(0, "gpt2")).unwrap();
    let cfg = vramfit_core::TrainConfig {
        batch: get(1, "8").parse().unwrap(),
        seq: get(2, "128").parse().unwrap(),
        image: get(3, "224").parse().unwrap(),
        precision: get(4, "fp32").parse().unwrap(),
        optimizer: get(5, "adamw").parse().unwrap(),
        checkpointing: get(6, "none").parse().unwrap(),
        ..Default::default()
    };
    let e = vramfit_core::estimate(&p.spec, &cfg, &Default::default(), None).unwrap();
    let b = &e.at_peak;
    println!(
        "peak {} ({} step {} at {}): {b:?}",
        e.peak_allocated_bytes.0, e.peak_phase, e.peak_step, e.peak_op
    );
    let filter = get(7, "");
    for t in e
        .timeline
        .iter()
        .filter(|t| t.step == 2 && t.op.contains(&filter))
    {
        println!("{} {:<50} {:.1}", t.phase, t.op, t.allocated_bytes.mib());
    }
    for l in &e.layers {
        println!("layer {:<40} {:.1} MiB", l.name, l.saved_bytes.mib());
    }
}
