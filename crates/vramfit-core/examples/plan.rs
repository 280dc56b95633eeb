//! A development tool: runs the planner for bert-large on an RTX 3060.
#![allow(clippy::unwrap_used)] // A development tool.
fn main() {
    use vramfit_core::*;
    let spec = model_preset("bert-large").unwrap().spec;
    let gpu = gpu_preset("rtx-3060-12gb").unwrap();
    let base = TrainConfig {
        seq: 512,
        batch: 4,
        ..TrainConfig::default()
    };
    let e = estimate(&spec, &base, &Overheads::for_gpu(&gpu), Some(&gpu)).unwrap();
    println!(
        "fp32 b4: {} fits={}",
        e.device_used_bytes,
        e.gpu.unwrap().fits
    );
    let t = std::time::Instant::now();
    let r = plan::plan(
        &spec,
        &gpu,
        &Overheads::for_gpu(&gpu),
        &plan::PlanRequest {
            base,
            target_batch: 32,
            gpus_per_node: 1,
            nodes: 1,
            margin: 0.05,
            dataset_samples: 100_000,
            max_plans: plan::SHOWN,
            measured: None,
        },
    )
    .unwrap();
    println!(
        "{} tried, {} plans, {:?}",
        r.tried,
        r.plans.len(),
        t.elapsed()
    );
    for p in r.plans.iter().take(8) {
        println!(
            "{:>8.3}s {} {}x{} {} {} {} | {:?}",
            p.step_seconds,
            p.device_used_bytes,
            p.config.batch,
            p.config.grad_accum,
            p.config.precision,
            p.config.checkpointing,
            p.config.optimizer,
            p.tradeoffs
        );
    }
}
