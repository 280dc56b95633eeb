//! Criterion benchmarks: one full estimate of Llama-2-70B, and the
//! largest-batch search for it on an 80 GB GPU.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use vramfit_core::{Overheads, Precision, TrainConfig, estimate, gpu_preset, max_batch_for, model_preset};

fn bench(c: &mut Criterion) {
    let Ok(model) = model_preset("llama-2-70b") else { return };
    let cfg = TrainConfig { batch: 1, seq: 4096, precision: Precision::AmpBf16, ..TrainConfig::default() };
    let o = Overheads::default();
    c.bench_function("estimate llama-2-70b (b1, s4096, amp-bf16, adamw)", |b| {
        b.iter(|| estimate(black_box(&model.spec), black_box(&cfg), &o, None))
    });
    let Ok(small) = model_preset("resnet50") else { return };
    let Ok(gpu) = gpu_preset("a100-80gb") else { return };
    let rcfg = TrainConfig { image: 224, ..TrainConfig::default() };
    c.bench_function("max batch resnet50 on a100-80gb", |b| {
        b.iter(|| max_batch_for(black_box(&small.spec), black_box(&rcfg), &o, gpu.memory_bytes))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
