//! Prints one estimate's peak and breakdown, for development:
#![allow(clippy::unwrap_used)] // A development tool: a bad argument may panic.
//! `cargo run -p vramfit-core --example params -- MODEL BATCH SEQ IMAGE PRECISION OPTIMIZER CKPT [ACCUM]`
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
        grad_accum: get(7, "1").parse().unwrap(),
        ..Default::default()
    };
    let e = vramfit_core::estimate(&p.spec, &cfg, &Default::default(), None).unwrap();
    let b = &e.at_peak;
    println!(
        "peak {} ({:?} step {} at {})\n  params {} grads {} opt {} act {} temp {} other {}",
        e.peak_allocated_bytes.0,
        e.peak_phase,
        e.peak_step,
        e.peak_op,
        b.parameters.0,
        b.gradients.0,
        b.optimizer_states.0,
        b.activations.0,
        b.temporary.0,
        b.other.0
    );
}
