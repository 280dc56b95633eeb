//! Criterion benchmarks: one full estimate of Llama-2-70B; Qwen3-32B from
//! its `config.json` (import, lowering and estimate) at 4096 tokens; the
//! largest-batch search for ResNet-50 on an 80 GB GPU; the planner for
//! Llama-2-7B on 8 GPUs; the page's batch edit (one estimate on a warm
//! session, as each keystroke in the batch field asks for).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use vramfit_core::{
    Overheads, Precision, TrainConfig, estimate, gpu_preset, max_batch_for, model_preset,
};

fn bench(c: &mut Criterion) {
    let Ok(model) = model_preset("llama-2-70b") else {
        return;
    };
    let cfg = TrainConfig {
        batch: 1,
        seq: 4096,
        precision: Precision::AmpBf16,
        ..TrainConfig::default()
    };
    let o = Overheads::default();
    c.bench_function("estimate llama-2-70b (b1, s4096, amp-bf16, adamw)", |b| {
        b.iter(|| estimate(black_box(&model.spec), black_box(&cfg), &o, None))
    });
    // Qwen/Qwen3-32B's config.json (the fields the import reads).
    let qwen3 = r#"{"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","vocab_size":151936,
        "hidden_size":5120,"num_hidden_layers":64,"num_attention_heads":64,"num_key_value_heads":8,
        "head_dim":128,"intermediate_size":25600,"tie_word_embeddings":false,"attention_bias":false}"#;
    c.bench_function(
        "import + lower + estimate qwen3-32b config.json (b1, s4096, amp-bf16, adamw)",
        |b| {
            b.iter(|| {
                let model = vramfit_core::hf::import(black_box(qwen3))?;
                estimate(&model.spec, black_box(&cfg), &o, None)
            })
        },
    );
    let Ok(small) = model_preset("resnet50") else {
        return;
    };
    let Ok(gpu) = gpu_preset("a100-80gb") else {
        return;
    };
    let rcfg = TrainConfig {
        image: 224,
        ..TrainConfig::default()
    };
    c.bench_function("max batch resnet50 on a100-80gb", |b| {
        b.iter(|| {
            max_batch_for(
                black_box(&small.spec),
                black_box(&rcfg),
                &o,
                gpu.memory_bytes,
            )
        })
    });
}

fn bench_planner(c: &mut Criterion) {
    let (Ok(model), Ok(gpu)) = (model_preset("llama-2-7b"), gpu_preset("a100-80gb")) else {
        return;
    };
    let base = TrainConfig {
        seq: 1024,
        precision: Precision::Bf16,
        attention: vramfit_core::Attention::Flash,
        ..TrainConfig::default()
    };
    let req = vramfit_core::plan::PlanRequest {
        base,
        target_batch: 64,
        gpus_per_node: 8,
        nodes: 1,
        margin: 0.05,
        dataset_samples: 0,
        max_plans: vramfit_core::plan::SHOWN,
        measured: None,
    };
    let o = Overheads::for_gpu(&gpu);
    let mut group = c.benchmark_group("planner");
    group.sample_size(10);
    group.bench_function("plan llama-2-7b on 8 × a100-80gb, target batch 64", |b| {
        b.iter(|| vramfit_core::plan::plan(black_box(&model.spec), &gpu, &o, black_box(&req)))
    });
    group.finish();
}

/// What a keystroke in the page's batch field costs: the default page's
/// model and settings (GPT-2 on an RTX 4090, mixed bf16, AdamW), on a
/// session that has lowered the model and searched its largest batch
/// already, so each new batch is one simulation.
fn bench_batch_edit(c: &mut Criterion) {
    let (Ok(model), Ok(gpu)) = (model_preset("gpt2"), gpu_preset("rtx-4090")) else {
        return;
    };
    let cfg = TrainConfig {
        batch: 8,
        seq: 512,
        precision: Precision::AmpBf16,
        ..TrainConfig::default()
    };
    let o = Overheads::for_gpu(&gpu);
    let mut session = vramfit_core::session::Session::default();
    if session.estimate(&model.spec, &cfg, &o, Some(&gpu)).is_err() {
        return;
    }
    let mut batch = 8;
    c.bench_function("batch edit gpt2 on rtx-4090 (warm session)", |b| {
        b.iter(|| {
            // A new batch each time, as typed: 9, 10, ... 16, 9, ...
            batch = if batch >= 16 { 9 } else { batch + 1 };
            let cfg = TrainConfig { batch, ..cfg };
            session.estimate(black_box(&model.spec), black_box(&cfg), &o, Some(&gpu))
        })
    });
}

criterion_group!(benches, bench, bench_planner, bench_batch_edit);
criterion_main!(benches);
