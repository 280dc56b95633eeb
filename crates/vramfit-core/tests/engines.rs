//! Inference as the engines run it (`engines`), against what the engines
//! and the files they load publish: GGUF file sizes
//! (`tests/reference/engines/gguf_sizes.csv`), llama.cpp's KV cache and a
//! vLLM start-up log.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::engines::llama_cpp::{compute_buffers, pipeline_compute_buffer};
use vramfit_core::engines::mix::GgufMix;
use vramfit_core::engines::{Engine, KvDtype, ServeConfig, ServeWeights, serve};
use vramfit_core::error::{Error, ServeFault};
use vramfit_core::{ModelSpec, gpu_preset, model_preset};

fn llama_cpp(mix: GgufMix) -> ServeConfig {
    ServeConfig {
        weights: ServeWeights::Gguf(mix),
        ..ServeConfig::default()
    }
}

#[test]
fn weights_are_within_two_percent_of_every_published_gguf_file() {
    let csv = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference/engines/gguf_sizes.csv"
    ))
    .unwrap();
    let gpu = gpu_preset("h100-sxm").unwrap();
    let mut report = String::new();
    let mut worst = 0.0_f64;
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (model, file, mix, published) = (f[0], f[1], f[2], f[3].parse::<u64>().unwrap());
        let spec = model_preset(model).unwrap().spec;
        let r = serve(&spec, &gpu, &llama_cpp(mix.parse().unwrap())).unwrap();
        let err = r.weights_bytes.0 as f64 / published as f64 - 1.0;
        worst = worst.max(err.abs());
        report += &format!(
            "{file:<45} {mix:<7} computed {:>14} published {published:>14} {:+.2} %\n",
            r.weights_bytes.0,
            100.0 * err
        );
    }
    println!("{report}");
    assert!(worst < 0.02, "a file is off by more than 2 %:\n{report}");
}

#[test]
fn f16_kv_of_llama_3_8b_at_8192_tokens_is_exactly_one_gib() {
    // 32 layers × 8192 positions × (8 heads × 128) × 2 (K and V) × 2 bytes;
    // llama.cpp prints "KV self size = 1024.00 MiB".
    let spec = model_preset("llama-3-8b").unwrap().spec;
    let gpu = gpu_preset("rtx-4090").unwrap();
    let cfg = ServeConfig {
        context: 8192,
        ..llama_cpp(GgufMix::Q4KM)
    };
    let r = serve(&spec, &gpu, &cfg).unwrap();
    assert_eq!(r.kv_cache_bytes.0, 1 << 30);
    // Q8_0 keeps 34 bytes per 32 values, Q4_0 18.
    let q8 = serve(
        &spec,
        &gpu,
        &ServeConfig {
            kv: KvDtype::Q8_0,
            ..cfg
        },
    )
    .unwrap();
    assert_eq!(q8.kv_cache_bytes.0, (1u64 << 29) / 32 * 34);
    let q4 = serve(
        &spec,
        &gpu,
        &ServeConfig {
            kv: KvDtype::Q4_0,
            ..cfg
        },
    )
    .unwrap();
    assert_eq!(q4.kv_cache_bytes.0, (1u64 << 29) / 32 * 18);
}

#[test]
fn the_token_embedding_stays_in_host_memory_and_gpu_layers_move_the_rest() {
    let spec = model_preset("llama-3-8b").unwrap().spec;
    let gpu = gpu_preset("rtx-4090").unwrap();
    let cfg = llama_cpp(GgufMix::Q4KM);
    let all = serve(&spec, &gpu, &cfg).unwrap();
    // token_embd.weight, 128256 × 4096 in Q4_K: llama.cpp's "CPU buffer size
    // = 281.81 MiB", and the graph's inputs (the pinned host compute buffer).
    let ModelSpec::Transformer(t) = &spec else {
        unreachable!()
    };
    let inputs = compute_buffers(t, cfg.context, cfg.n_ubatch, cfg.flash_attention).host;
    assert_eq!(all.host_bytes.0, 128_256 * 4096 / 256 * 144 + inputs.0);
    let mut last = all;
    for ngl in (0..=32).rev() {
        let cfg = ServeConfig {
            gpu_layers: Some(ngl),
            ..llama_cpp(GgufMix::Q4KM)
        };
        let r = serve(&spec, &gpu, &cfg).unwrap();
        assert!(
            r.host_bytes > last.host_bytes && r.gpu_bytes < last.gpu_bytes,
            "ngl {ngl}"
        );
        assert_eq!(r.weights_bytes, all.weights_bytes);
        last = r;
    }
}

#[test]
fn vllm_holds_the_concurrency_its_start_up_log_printed() {
    // vllm-project/vllm#10517: Llama-3.1-8B-Instruct on an RTX 3090
    // (total_gpu_memory=23.58GiB), gpu_memory_utilization=0.90,
    // --max-model-len 20000 (V0: max_num_batched_tokens = max_model_len):
    // "# GPU blocks: 1952", "Maximum concurrency for 20000 tokens per request: 1.56x".
    use vramfit_core::engines::budget;
    use vramfit_core::units::{Bytes, GIB};
    let spec = model_preset("llama-3.1-8b").unwrap().spec;
    let vramfit_core::ModelSpec::Transformer(t) = &spec else {
        unreachable!()
    };
    // "Loading model weights took 14.9888 GB" (GiB): the bf16 parameters
    // and the rotary cos/sin cache vLLM keeps for 131,072 positions (128 ×
    // 131,072 × 2 bytes = 32 MiB), which the model's shape here lacks.
    let logged = Bytes((14.9888 * GIB as f64) as u64);
    let weights = vramfit_core::engines::format_weights(t, ServeWeights::Native);
    let rope = Bytes(128 * 131_072 * 2);
    assert!(
        ((weights + rope).gib() / logged.gib() - 1.0).abs() < 1e-4,
        "{}",
        weights.gib()
    );
    let b = budget::Budget {
        total: Bytes((23.58 * GIB as f64) as u64),
        fraction: 0.9,
        weights: logged,
        activations: Bytes::of(
            20_000 * budget::activation_per_token(t.hidden, t.intermediate),
            2,
        ),
        // The log's non_torch_memory=0.35GiB.
        non_torch: Bytes((0.35 * GIB as f64) as u64),
    };
    // V0's blocks were 16 tokens.
    let blocks = budget::vllm_blocks_of(budget::vllm_kv_budget(&b), t.layers, 8 * 128 * 2 * 2, 16);
    let concurrency = budget::vllm_max_concurrency_of(blocks, 20_000, 16);
    println!("blocks {blocks}, concurrency {concurrency:.3}");
    assert!(
        (1941..=1963).contains(&blocks),
        "{blocks} blocks against 1952"
    );
    assert!((concurrency - 1.56).abs() < 0.015, "{concurrency}");
}

#[test]
fn each_engine_refuses_what_it_cannot_run_naming_why() {
    let spec = model_preset("llama-3-8b").unwrap().spec;
    let ada = gpu_preset("rtx-4090").unwrap();
    let ampere = gpu_preset("rtx-3090").unwrap();
    let vllm = ServeConfig {
        engine: Engine::Vllm,
        weights: ServeWeights::Native,
        ..ServeConfig::default()
    };
    let fault = |gpu, cfg: ServeConfig| match serve(&spec, gpu, &cfg) {
        Err(Error::Serve(f)) => f,
        other => panic!("{other:?}"),
    };
    assert!(matches!(
        fault(
            &ada,
            ServeConfig {
                weights: ServeWeights::Gguf(GgufMix::Q4KM),
                ..vllm
            }
        ),
        ServeFault::Weights {
            engine: "vllm",
            weights: "q4_k_m",
            ..
        }
    ));
    assert!(matches!(
        fault(
            &ada,
            ServeConfig {
                weights: ServeWeights::AwqInt4,
                ..ServeConfig::default()
            }
        ),
        ServeFault::Weights {
            engine: "llama.cpp",
            weights: "awq-int4",
            ..
        }
    ));
    assert!(matches!(
        fault(
            &ada,
            ServeConfig {
                kv: KvDtype::Fp8,
                ..ServeConfig::default()
            }
        ),
        ServeFault::KvDtype {
            engine: "llama.cpp",
            kv: "fp8",
            ..
        }
    ));
    assert!(matches!(
        fault(
            &ada,
            ServeConfig {
                kv: KvDtype::Q4_0,
                ..vllm
            }
        ),
        ServeFault::KvDtype {
            engine: "vllm",
            kv: "q4_0",
            ..
        }
    ));
    assert!(matches!(
        fault(
            &ampere,
            ServeConfig {
                kv: KvDtype::Fp8,
                ..vllm
            }
        ),
        ServeFault::NoFp8 { .. }
    ));
    assert!(
        serve(
            &spec,
            &ada,
            &ServeConfig {
                kv: KvDtype::Fp8,
                ..vllm
            }
        )
        .is_ok()
    );
    assert!(matches!(
        fault(&ada, ServeConfig { tp: 3, ..vllm }),
        ServeFault::HeadsSplit { heads: 32, tp: 3 }
    ));
    let bert = model_preset("bert-base").unwrap().spec;
    assert!(matches!(
        serve(&bert, &ada, &vllm),
        Err(Error::Serve(ServeFault::NotADecoder))
    ));
}

#[test]
fn fp8_kv_doubles_vllm_s_blocks_and_more_utilization_never_holds_fewer() {
    let spec = model_preset("llama-3.1-8b").unwrap().spec;
    let gpu = gpu_preset("h100-sxm").unwrap();
    let base = ServeConfig {
        engine: Engine::Vllm,
        weights: ServeWeights::Native,
        context: 8192,
        ..ServeConfig::default()
    };
    let f16 = serve(&spec, &gpu, &base).unwrap();
    let fp8 = serve(
        &spec,
        &gpu,
        &ServeConfig {
            kv: KvDtype::Fp8,
            ..base
        },
    )
    .unwrap();
    // Blocks of 64 tokens: half the page, twice the blocks (one more where
    // the halved page fits once more in the rest).
    let (a, b) = (f16.kv_tokens.unwrap() / 64, fp8.kv_tokens.unwrap() / 64);
    assert!(b == 2 * a || b == 2 * a + 1, "{a} vs {b} blocks");
    let mut last = 0.0;
    for util in [0.5, 0.6, 0.7, 0.8, 0.9, 0.95] {
        for engine in [Engine::Vllm, Engine::Sglang] {
            let r = serve(
                &spec,
                &gpu,
                &ServeConfig {
                    engine,
                    gpu_memory_utilization: util,
                    ..base
                },
            )
            .unwrap();
            assert!(r.max_concurrency.unwrap() >= 0.0);
            if engine == Engine::Vllm {
                assert!(r.max_concurrency.unwrap() >= last);
                last = r.max_concurrency.unwrap();
            }
        }
    }
}

#[test]
fn every_decoder_preset_grows_through_the_mixes_and_splits_into_gpu_and_host_whole() {
    // The mixes in llama-quantize's order of size; IQ4 mixes sit between
    // Q3_K_L and Q4_K_S but their rules depend on GQA, so they are left out.
    let ladder = [
        GgufMix::Q3KS,
        GgufMix::Q3KM,
        GgufMix::Q3KL,
        GgufMix::Q4KS,
        GgufMix::Q4KM,
        GgufMix::Q5KS,
        GgufMix::Q5KM,
        GgufMix::Q6K,
        GgufMix::Q8_0,
        GgufMix::F16,
    ];
    let gpu = gpu_preset("h100-sxm").unwrap();
    let mut seen = 0;
    for preset in vramfit_core::model_presets() {
        let Ok(first) = serve(&preset.spec, &gpu, &llama_cpp(ladder[0])) else {
            continue;
        };
        seen += 1;
        let mut last = first.weights_bytes;
        for mix in &ladder[1..] {
            let r = serve(&preset.spec, &gpu, &llama_cpp(*mix)).unwrap();
            assert!(r.weights_bytes >= last, "{} {mix}", preset.id);
            last = r.weights_bytes;
        }
        // Total = sum of parts at every offload.
        let layers = match &preset.spec {
            vramfit_core::ModelSpec::Transformer(t) => t.layers,
            _ => unreachable!(),
        };
        for ngl in [0, layers / 2, layers, layers + 1] {
            let cfg = ServeConfig {
                gpu_layers: Some(ngl),
                ..llama_cpp(GgufMix::Q4KM)
            };
            let r = serve(&preset.spec, &gpu, &cfg).unwrap();
            assert_eq!(
                r.gpu_bytes + r.host_bytes,
                r.weights_bytes + r.kv_cache_bytes + r.compute_buffer_bytes,
                "{} -ngl {ngl}",
                preset.id
            );
        }
    }
    assert!(seen >= 20, "only {seen} decoder presets");
}

/// Latent attention's cache in the engines: one row of `kv_lora_rank +
/// qk_rope_head_dim` per token and layer, on every tensor-parallel rank
/// (vLLM, SGLang), and llama.cpp's V-less K cache of the same row; GQA
/// models keep their keys and values of the rank's heads.
#[test]
fn latent_attention_caches_one_latent_row_per_token_in_the_engines() {
    use vramfit_core::engines::{budget, gguf::GgmlType, llama_cpp};
    let transformer = |id: &str| match model_preset(id).unwrap().spec {
        vramfit_core::ModelSpec::Transformer(t) => t,
        _ => unreachable!("a transformer preset"),
    };
    let v3 = transformer("deepseek-v3");
    assert_eq!(budget::kv_token_layer(&v3, 2, 1), (512 + 64) * 2);
    assert_eq!(budget::kv_token_layer(&v3, 2, 8), (512 + 64) * 2);
    assert_eq!(
        llama_cpp::kv_layer_bytes(&v3, GgmlType::F16, 8192).0,
        8192 * 576 * 2
    );
    // The same K-only latent row in q8_0 blocks: ikawrakow/ik_llama.cpp#259
    // (a llama.cpp fork's MLA mode, DeepSeek-R1 at -c 32768) printed "KV
    // self size = 1166.62 MiB, c^KV (q8_0): 1166.62 MiB, kv^T: not used".
    let q8: u64 = (0..v3.layers)
        .map(|_| llama_cpp::kv_layer_bytes(&v3, GgmlType::Q8_0, 32_768).0)
        .sum();
    assert_eq!(format!("{:.2}", q8 as f64 / (1 << 20) as f64), "1166.62");
    let llama = transformer("llama-3-8b");
    assert_eq!(budget::kv_token_layer(&llama, 2, 2), 2 * 4 * 128 * 2);
    assert_eq!(
        llama_cpp::kv_layer_bytes(&llama, GgmlType::F16, 8192).0,
        2 * 8192 * 1024 * 2
    );
}

/// The compute buffers llama.cpp printed in public logs
/// (`tests/reference/engines/llama_cpp_buffers.csv`, each row's source and
/// quoted lines in `llama_cpp_buffers_sources.csv`): the GPU's (or, with
/// nothing offloaded, the CPU's) within 0.5 %, the pinned host one of the
/// graph's inputs within 0.05 MiB. Runs split over several GPUs use
/// pipeline parallelism, which keeps `PIPELINE_COPIES` (4) copies of each
/// GPU's inputs: within 3 % (the logs do not say which GPU's buffer they
/// print first, nor the builds' exact graphs). The host buffer of the one
/// flash-attention run is not held either: its December 2024 build kept an
/// f32 mask there, today's trees an f16 one.
#[test]
fn compute_buffers_match_every_single_device_llama_cpp_log() {
    let csv = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference/engines/llama_cpp_buffers.csv"
    ))
    .unwrap();
    const MIB: f64 = (1u64 << 20) as f64;
    let mut report = String::new();
    let mut failures = Vec::new();
    let mut held = 0;
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let n = |i: usize| f[i].parse::<u64>().unwrap();
        let (url, devices) = (f[0], n(10));
        let t = vramfit_core::models::llama::decoder(n(6), n(2), n(1), n(3), n(4), n(5));
        let (n_ctx, fa) = (n(7), f[9] == "1");
        let b = compute_buffers(&t, n_ctx, n(8).min(n_ctx), fa);
        let printed: f64 = f[11].parse().unwrap();
        let gpu = if devices > 1 {
            pipeline_compute_buffer(&t, n_ctx, n(8).min(n_ctx), fa)
        } else {
            b.gpu
        };
        let ours = gpu.0 as f64 / MIB;
        let err = ours / printed - 1.0;
        report += &format!(
            "{url:<55} ctx {n_ctx:>6} fa {} devices {devices}: printed {printed:>8.2} MiB, computed {ours:>8.2} ({:+.2} %)",
            u8::from(fa),
            100.0 * err
        );
        held += 1;
        if devices > 1 {
            report += "  [pipeline parallelism]\n";
            if err.abs() > 0.03 {
                failures.push(url);
            }
            continue;
        }
        if err.abs() > 0.005 {
            failures.push(url);
        }
        if let (Ok(host), true, false) = (f[12].parse::<f64>(), devices == 1, fa) {
            let ours = b.host.0 as f64 / MIB;
            report += &format!("; host printed {host:.2}, computed {ours:.2}");
            if (ours - host).abs() > 0.05 {
                failures.push(url);
            }
        }
        report += "\n";
    }
    println!("{report}");
    assert!(held >= 8, "only {held} rows held:\n{report}");
    assert!(failures.is_empty(), "off: {failures:?}\n{report}");
}

/// vLLM start-up logs of a mixture of experts and a latent-attention
/// model (`tests/reference/engines/vllm_logs.csv`): the weights every
/// rank loads — all experts resident, their matrices sharded by tensor
/// parallelism, routers and norms replicated — and the latent cache one
/// request needs. The weights may only fall short of the log, by vLLM's
/// rotary cos/sin cache (`max_position × rotary_dim`, 10 MiB for Qwen3's
/// 40,960 × 128 in bf16, 20–40 MiB for DeepSeek-V2-Lite's 163,840 × 64,
/// which that log printed), which the model's shape does not carry: under
/// 0.25 % of either.
#[test]
fn vllm_loads_every_expert_and_caches_the_latent_as_its_logs_print() {
    use vramfit_core::engines::{budget, weights_per_gpu};
    use vramfit_core::units::Bytes;
    let transformer = |id: &str| match model_preset(id).unwrap().spec {
        vramfit_core::ModelSpec::Transformer(t) => t,
        _ => unreachable!("a transformer preset"),
    };
    // vllm#4650 (v0.5.0.post1, bf16): "Loading model weights took 29.3010 GB"
    // (GiB); vllm#17469 (v0.8.5, Qwen/Qwen3-30B-A3B bf16 on 4 × A10, TP 4):
    // "Model loading took 14.2474 GiB" on every rank.
    for (id, tp, logged) in [
        ("deepseek-v2-lite", 1, 29.3010),
        ("qwen3-30b-a3b", 4, 14.2474),
    ] {
        let t = transformer(id);
        let per_rank = weights_per_gpu(&t, ServeWeights::Native, tp).gib();
        println!("{id} tp {tp}: {per_rank:.4} GiB against {logged}");
        let short = 1.0 - per_rank / logged;
        assert!((0.0..0.0025).contains(&short), "{id}: {per_rank} GiB");
    }
    // vllm#15871 (v0.8.3 V1, DeepSeek-V2-Lite-Chat, --max-model-len 32768):
    // "To serve at least one request with the models's max seq len (32768),
    // (0.95 GiB KV cache is needed": cdiv(32768, 16) blocks of a 16-token
    // latent page in each of 27 layers.
    let lite = transformer("deepseek-v2-lite");
    let page = 16 * budget::kv_token_layer(&lite, 2, 1);
    let need = Bytes::of(32_768 / 16 * lite.layers, page).gib();
    println!("DeepSeek-V2-Lite, 32768 tokens: {need:.4} GiB");
    assert!((need - 0.95).abs() <= 0.005, "{need}");
}

/// vLLM's `MiniMaxM2MoE` and `Ernie4_5_MoeMoE` (and SGLang's MiniMax)
/// build the router (`gate`) with `params_dtype=torch.float32` and the
/// `e_score_correction_bias` in fp32; everything else loads in 16 bits. Both are replicated:
/// every tensor-parallel rank holds them whole.
#[test]
fn minimax_m2_and_ernie_keep_their_routers_in_fp32() {
    use vramfit_core::engines::{format_weights, weights_per_gpu};
    let vramfit_core::ModelSpec::Transformer(t) = model_preset("minimax-m2").unwrap().spec else {
        unreachable!("a transformer preset")
    };
    let params = 228_689_748_992u64;
    let router = 62 * (256 * 3072 * 2 + 256 * 4);
    assert_eq!(
        format_weights(&t, ServeWeights::Native).0,
        2 * params + router
    );
    // ERNIE-4.5-21B-A3B: the same in its 27 sparse layers (its frozen
    // `e_score_correction_bias` is among the 16-bit parameters once).
    let vramfit_core::ModelSpec::Transformer(ernie) =
        model_preset("ernie-4.5-21b-a3b").unwrap().spec
    else {
        unreachable!("a transformer preset")
    };
    assert_eq!(
        format_weights(&ernie, ServeWeights::Native).0,
        2 * 21_825_437_888 + 27 * (64 * 2560 * 2 + 64 * 2)
    );
    // What two ranks do not split is replicated: at least the fp32 routers.
    let per_rank = |tp| weights_per_gpu(&t, ServeWeights::Native, tp).0;
    let sharded = 2 * (per_rank(1) - per_rank(2));
    let replicated = per_rank(1) - sharded;
    assert!(
        replicated >= 62 * (256 * 3072 * 4 + 256 * 4),
        "{replicated}"
    );
}

/// `llama-quantize`'s rules for experts (`src/llama-quant.cpp`): an
/// 8-expert model's attention K and V in Q8_0 and output in Q5_K under
/// Q4_K_M, the expert banks by their layer (`use_more_bits` for
/// `ffn_down_exps`), the f32 router; DeepSeek's `attn_k_b` rows of 128
/// falling back from q4_K to q5_0; `MXFP4_MOE` banks in MXFP4, the rest Q8_0.
#[test]
fn expert_banks_and_latent_projections_get_llama_quantize_s_types() {
    use vramfit_core::engines::gguf::GgmlType;
    use vramfit_core::engines::llama_cpp::tensors;
    use vramfit_core::engines::mix::Role;
    let transformer = |id: &str| match model_preset(id).unwrap().spec {
        vramfit_core::ModelSpec::Transformer(t) => t,
        _ => unreachable!("a transformer preset"),
    };
    let type_of =
        |t: &vramfit_core::models::TransformerSpec, mix: GgufMix, role: Role, layer: u64| {
            tensors(t, mix)
                .iter()
                .find(|x| x.role == Some(role) && x.layer == Some(layer))
                .map(|x| x.ty)
        };
    let mixtral = transformer("mixtral-8x7b");
    let q4km = GgufMix::Q4KM;
    assert_eq!(
        type_of(&mixtral, q4km, Role::AttnV, 5),
        Some(GgmlType::Q8_0)
    );
    assert_eq!(
        type_of(&mixtral, q4km, Role::AttnK, 5),
        Some(GgmlType::Q8_0)
    );
    assert_eq!(
        type_of(&mixtral, q4km, Role::AttnOutput, 5),
        Some(GgmlType::Q5K)
    );
    assert_eq!(
        type_of(&mixtral, q4km, Role::FfnDownExps, 0),
        Some(GgmlType::Q6K)
    );
    assert_eq!(
        type_of(&mixtral, q4km, Role::FfnDownExps, 4),
        Some(GgmlType::Q4K)
    );
    assert_eq!(
        type_of(&mixtral, q4km, Role::FfnGateExps, 0),
        Some(GgmlType::Q4K)
    );
    // Q3_K_L leaves an 8-expert model's attention output at its base.
    assert_eq!(
        type_of(&mixtral, GgufMix::Q3KL, Role::AttnOutput, 5),
        Some(GgmlType::Q3K)
    );
    // 128 experts: no 8-expert rule.
    let qwen = transformer("qwen3-30b-a3b");
    assert_eq!(type_of(&qwen, q4km, Role::AttnK, 5), Some(GgmlType::Q4K));
    // The router stays f32: 48 layers of 128 × 2048 among the f32 tensors.
    let f32_bytes: u64 = tensors(&qwen, q4km)
        .iter()
        .filter(|x| x.role.is_none())
        .map(|x| x.bytes.0)
        .sum();
    assert!(f32_bytes > 48 * 128 * 2048 * 4);
    let v3 = transformer("deepseek-v3");
    assert_eq!(type_of(&v3, q4km, Role::AttnKB, 3), Some(GgmlType::Q5_0));
    assert_eq!(type_of(&v3, q4km, Role::AttnVB, 3), Some(GgmlType::Q4K));
    assert_eq!(type_of(&v3, q4km, Role::FfnDownShexp, 0), None);
    assert_eq!(
        type_of(&v3, q4km, Role::FfnDownShexp, 3),
        Some(GgmlType::Q6K)
    );
    let oss = transformer("gpt-oss-20b");
    let mx = GgufMix::Mxfp4Moe;
    assert_eq!(type_of(&oss, mx, Role::FfnUpExps, 0), Some(GgmlType::Mxfp4));
    assert_eq!(type_of(&oss, mx, Role::AttnQ, 0), Some(GgmlType::Q8_0));
    let output = tensors(&oss, mx)
        .into_iter()
        .find(|x| x.role == Some(Role::Output));
    assert_eq!(output.map(|x| x.ty), Some(GgmlType::Q8_0));
}

/// vLLM v1's hybrid allocator for gpt-oss-20b's 12 full and 12 sliding
/// (128-token window) layers: two groups of 12 share 12 tensors, so the
/// blocks are the budget over 12 layers' pages, the log's tokens half the
/// blocks × 64, and a request of 131,072 tokens needs 2048 full blocks and
/// `cdiv(127 + 2 × 8192, 64) + 1` = 259 sliding ones (the window and two
/// batches in flight under asynchronous scheduling). SGLang's SWA pool
/// holds `total / (0.8 × 12 + 12)` tokens in the full layers.
#[test]
fn sliding_window_layers_are_bounded_by_their_window_in_vllm_and_sglang() {
    use vramfit_core::engines::budget;
    use vramfit_core::units::Bytes;
    let vramfit_core::ModelSpec::Transformer(oss) = model_preset("gpt-oss-20b").unwrap().spec
    else {
        unreachable!("a transformer preset")
    };
    let per_token_layer = budget::kv_token_layer(&oss, 2, 1);
    assert_eq!(per_token_layer, 2 * 8 * 64 * 2);
    let pool = Bytes(40 << 30);
    let kv = budget::vllm_kv(&oss, pool, per_token_layer, 131_072, 8192);
    let blocks = pool.0 / (64 * per_token_layer) / 12;
    assert_eq!(kv.blocks, blocks);
    assert_eq!(kv.tokens, blocks / 2 * 64);
    assert_eq!(kv.bytes.0, blocks * 12 * 64 * per_token_layer);
    assert!((kv.max_concurrency - blocks as f64 / (2048 + 259) as f64).abs() < 1e-12);
    // Counted as full attention, the model would hold 12 × 2307 / (24 ×
    // 2048) = 0.56 times as many 131,072-token requests.
    let full =
        budget::vllm_max_concurrency(budget::vllm_blocks(pool, 24, per_token_layer), 131_072);
    let gain = kv.max_concurrency / full;
    assert!(
        (gain - 24.0 * 2048.0 / (12.0 * 2307.0)).abs() < 1e-3,
        "{gain}"
    );
    let (tokens, bytes) = budget::sglang_kv(&oss, pool, per_token_layer);
    let total = (pool.0 / (24 * per_token_layer) * 24) as f64;
    assert_eq!(tokens, (total / (0.8 * 12.0 + 12.0)) as u64);
    assert!(bytes <= pool);
    // Gemma 2 keeps a full cache in SGLang (not a hybrid-SWA architecture).
    let vramfit_core::ModelSpec::Transformer(gemma) = model_preset("gemma-2-9b").unwrap().spec
    else {
        unreachable!("a transformer preset")
    };
    assert!(budget::sglang_swa(&gemma).is_none());
    assert!(budget::Hybrid::of(&gemma).is_some());
}

/// Qwen3-Next's and Qwen3.5's linear-attention layers keep a fixed state
/// per sequence instead of keys and values: llama.cpp's f32 recurrent
/// memory per sequence, vLLM's attention blocks grown until one holds a
/// layer's state (576 tokens for Qwen3-Next-80B-A3B in bf16: 64 × cdiv(1,097,728,
/// 64 × 2048)), SGLang's
/// state pool beside its token pool; only the attention layers' keys and
/// values grow with the context.
#[test]
fn linear_attention_layers_keep_a_state_per_sequence() {
    use vramfit_core::engines::budget;
    use vramfit_core::units::Bytes;
    let transformer = |id: &str| match model_preset(id).unwrap().spec {
        ModelSpec::Transformer(t) => t,
        other => panic!("{other:?}"),
    };
    let next = transformer("qwen3-next-80b-a3b");
    let g = next.linear.as_deref().unwrap();
    assert_eq!(
        (next.attention_layers(), g.linear_layers(next.layers)),
        (12, 36)
    );
    // (K − 1) × conv_dim + value heads × 128 × 128: 24,576 + 524,288 elements.
    assert_eq!(g.serving_state_bytes(1, 2, 2), 1_097_728);
    assert_eq!(g.serving_state_bytes(1, 4, 4), 2_195_456);
    let per_token_layer = budget::kv_token_layer(&next, 2, 1);
    assert_eq!(per_token_layer, 2 * 2 * 256 * 2);
    let pool = Bytes(40 << 30);
    let kv = budget::vllm_linear_kv(&next, g, pool, (per_token_layer, 1), 32_768);
    let block = 576;
    let page = block * per_token_layer;
    assert_eq!(kv.blocks, pool.0 / page / 12);
    assert_eq!(kv.tokens, kv.blocks / 4 * block);
    let per_request = 32_768u64.div_ceil(block) + 3 * 2;
    assert!((kv.max_concurrency - kv.blocks as f64 / per_request as f64).abs() < 1e-9);
    // Qwen3.5 keeps its recurrent state in fp32 in vLLM (`mamba_ssm_dtype`).
    let small = transformer("qwen3.5-0.8b");
    let s = small.linear.as_deref().unwrap();
    assert!(s.state_fp32() && !g.state_fp32());
    let (tokens, bytes, most) = budget::sglang_linear_kv(&next, g, pool, (per_token_layer, 1));
    let per_request = 36 * g.serving_state_bytes(1, 2, 4);
    let slots = ((pool.0 as f64 * 0.9 / 1.9) as u64 - per_request) / per_request;
    assert_eq!(most, (slots / 5) as f64);
    assert_eq!(
        tokens,
        (pool.0 - (slots + 1) * per_request) / (12 * per_token_layer)
    );
    assert!(bytes <= pool);
    // llama.cpp: the attention layers' f16 keys and values for the context,
    // each linear layer's f32 states for each sequence.
    let cfg = ServeConfig {
        context: 8192,
        concurrency: 2,
        ..llama_cpp("q4_k_m".parse().unwrap())
    };
    let r = serve(
        &ModelSpec::Transformer(next.clone()),
        &gpu_preset("h100-sxm").unwrap(),
        &cfg,
    )
    .unwrap();
    let kv = 12 * 2 * 16_384 * 2 * 256 * 2 + 36 * 2 * 2_195_456;
    assert_eq!(r.kv_cache_bytes.0, kv);
}

/// Llama 4 Scout's 36 chunked layers (chunks of 8192) and 12 full ones,
/// as vLLM's hybrid allocator groups them (one full group and three
/// chunked ones of 12 layers, `num_blocks = pool // (12 pages)`) and as
/// `ChunkedLocalAttentionSpec` bounds a request: `cdiv(min(8192 + 2 ×
/// 8192, context), 64)` blocks per chunked group, no extra block; SGLang
/// pools the chunked layers as sliding ones, 0.8 times the full layers'
/// tokens.
#[test]
fn llama_4_caches_a_chunk_in_its_chunked_layers() {
    use vramfit_core::engines::budget::{self, Hybrid};
    use vramfit_core::units::Bytes;
    let ModelSpec::Transformer(scout) = model_preset("llama-4-scout-17b-16e").unwrap().spec else {
        unreachable!("a transformer preset")
    };
    let hy = Hybrid::of(&scout).unwrap();
    assert_eq!(
        (hy.full, hy.sliding, hy.window, hy.chunked),
        (12, 36, 8192, true)
    );
    let per_token_layer = budget::kv_token_layer(&scout, 2, 1);
    assert_eq!(per_token_layer, 2 * 8 * 128 * 2);
    let pool = Bytes(60 << 30);
    let context = 131_072;
    let kv = budget::vllm_kv(&scout, pool, per_token_layer, context, 8192);
    let blocks = pool.0 / (64 * per_token_layer) / 12;
    assert_eq!(kv.blocks, blocks);
    assert_eq!(kv.tokens, blocks / 4 * 64);
    let per_request = context / 64 + 3 * (8192u64 + 2 * 8192).div_ceil(64);
    assert!((kv.max_concurrency - blocks as f64 / per_request as f64).abs() < 1e-12);
    // A context within a chunk and the tokens in flight: as many blocks as a full layer's.
    let short = budget::vllm_kv(&scout, pool, per_token_layer, 8192, 8192);
    assert!((short.max_concurrency - blocks as f64 / (4 * 128) as f64).abs() < 1e-12);
    let (tokens, _) = budget::sglang_kv(&scout, pool, per_token_layer);
    let total = (pool.0 / (48 * per_token_layer) * 48) as f64;
    assert_eq!(tokens, (total / (0.8 * 36.0 + 12.0)) as u64);
}

/// Llama 4 Scout as released (`Llama4ForConditionalGeneration`, its
/// 871,932,416-parameter vision model counted as `transformers` builds
/// it): vLLM loads the vision model in 16 bits; SGLang builds none
/// (multimodal is off by default for Llama 4), so its weights are the text
/// preset's.
#[test]
fn sglang_leaves_llama_4s_vision_model_out_and_vllm_loads_it() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference/multimodal"
    );
    let json = std::fs::read_to_string(format!("{dir}/llama_4_scout_17b_16e.json")).unwrap();
    let released = vramfit_core::hf::import(&json).unwrap().spec;
    let text = model_preset("llama-4-scout-17b-16e").unwrap().spec;
    let gpu = gpu_preset("h100-sxm").unwrap();
    let weights = |model: &ModelSpec, engine| {
        let cfg = ServeConfig {
            engine,
            weights: ServeWeights::Native,
            tp: 4,
            context: 8192,
            ..ServeConfig::default()
        };
        serve(model, &gpu, &cfg).unwrap().weights_bytes.0
    };
    assert_eq!(
        weights(&released, Engine::Vllm) - weights(&text, Engine::Vllm),
        2 * 871_932_416
    );
    assert_eq!(
        weights(&released, Engine::Sglang),
        weights(&text, Engine::Sglang)
    );
}

/// Gemma 4's two kinds of attention layer and its shared keys and values,
/// as each engine sizes them: E2B's 15 layers with a cache (3 full of one
/// 512-wide head, 12 sliding of one 256-wide head; the last 20 of 35 reuse
/// theirs), 18 KiB a token in bf16; SGLang allocates all 35 (42 KiB);
/// vLLM's page is the full layers' 64 tokens, a sliding block 128 tokens.
#[test]
fn gemma_4_caches_two_kinds_of_layer_and_none_for_the_shared_ones() {
    use vramfit_core::engines::budget::{self, TwoKinds};
    use vramfit_core::engines::cache::CacheLayout;
    use vramfit_core::units::Bytes;
    let ModelSpec::Transformer(e2b) = model_preset("gemma-4-e2b").unwrap().spec else {
        unreachable!("a transformer preset")
    };
    let k = TwoKinds::of(&e2b, 2, 1, false).unwrap();
    assert_eq!((k.full, k.sliding, k.window), ((3, 2048), (12, 1024), 512));
    assert_eq!(k.per_token(), 18 * 1024);
    let all = TwoKinds::of(&e2b, 2, 1, true).unwrap();
    assert_eq!(
        (all.full.0, all.sliding.0, all.per_token()),
        (7, 28, 42 * 1024)
    );
    let pool = Bytes(12 << 30);
    let kv = budget::vllm_two_kinds_kv(&k, pool, 32_768, 2048);
    // Groups of 3 layers: one full group, four sliding ones.
    let page = 64 * 2048;
    assert_eq!(kv.blocks, pool.0 / (3 * page));
    let per_request = 32_768 / 64 + 4 * ((511 + 2 * 2048u64).div_ceil(128) + 1);
    assert!((kv.max_concurrency - kv.blocks as f64 / per_request as f64).abs() < 1e-9);
    assert_eq!(kv.tokens, kv.blocks / 5 * 64);
    let (tokens, bytes) = budget::sglang_two_kinds_kv(&all, pool);
    assert_eq!(
        tokens,
        (pool.0 as f64 / (7.0 * 2048.0 + 0.8 * 28.0 * 1024.0)) as u64
    );
    assert!(bytes <= pool);
    // Each engine's layout; llama.cpp's cache holds the 15 layers too.
    let spec = ModelSpec::Transformer(e2b.clone());
    let gpu = gpu_preset("rtx-4090").unwrap();
    let torch = |engine| ServeConfig {
        engine,
        weights: ServeWeights::Native,
        ..ServeConfig::default()
    };
    for (cfg, per_token) in [
        (torch(Engine::Vllm), 18 * 1024),
        (torch(Engine::Sglang), 42 * 1024),
        (llama_cpp("f16".parse().unwrap()), 18 * 1024),
    ] {
        let layout = CacheLayout::of(&e2b, &cfg);
        assert_eq!(layout.bytes_per_token, per_token, "{:?}", cfg.engine);
        let full = layout.full_layers.unwrap();
        assert_eq!((full.heads, full.head_dim, full.reused), (1, 512, 20));
        serve(&spec, &gpu, &cfg).unwrap();
    }
    // SGLang loads the shared layers' key and value projections too: 16
    // sliding layers' 256 and 4 full layers' 512 rows, of 1536, twice, in bf16.
    let weights = |engine| serve(&spec, &gpu, &torch(engine)).unwrap().weights_bytes.0;
    assert_eq!(
        weights(Engine::Sglang) - weights(Engine::Vllm),
        2 * (16 * 256 + 4 * 512) * 1536 * 2
    );
    let r = serve(
        &spec,
        &gpu,
        &ServeConfig {
            context: 4096,
            ..llama_cpp("f16".parse().unwrap())
        },
    )
    .unwrap();
    // Full layers keep the 4096 cells, sliding ones 512 + 512 padded to 256.
    assert_eq!(r.kv_cache_bytes.0, 3 * 4096 * 2048 + 12 * 1024 * 1024);
}

/// vLLM's profile run of a mixture of experts at its default 8192 batched
/// tokens (an 80 GB GPU): the fused-MoE caches of Qwen3-30B-A3B, 8 experts
/// × (max(2 × 768, 2048) + 768) values per token, next to three hidden-width
/// tensors, in bf16.
#[test]
fn vllm_s_profile_run_holds_the_fused_moe_caches() {
    let spec = model_preset("qwen3-30b-a3b").unwrap().spec;
    let gpu = gpu_preset("h100-sxm").unwrap();
    let cfg = ServeConfig {
        engine: Engine::Vllm,
        weights: ServeWeights::Native,
        context: 8192,
        ..ServeConfig::default()
    };
    let r = serve(&spec, &gpu, &cfg).unwrap();
    assert_eq!(
        r.compute_buffer_bytes.0,
        8192 * (8 * (2048 + 768) + 3 * 2048) * 2
    );
    // MXFP4 experts: 4.25 bits a weight instead of 16.
    let mx = serve(
        &spec,
        &gpu,
        &ServeConfig {
            weights: ServeWeights::Mxfp4,
            ..cfg
        },
    )
    .unwrap();
    let experts = 48 * 128 * 3 * 768 * 2048_u64;
    assert_eq!(
        r.weights_bytes.0 - mx.weights_bytes.0,
        experts * 2 - experts * 17 / 32
    );
}

/// llama.cpp split by layer over equal GPUs (`--split-mode layer`): each
/// holds its share of the layers with their cache, the last one the output
/// matrix; the token embedding stays in host memory.
#[test]
fn llama_cpp_splits_the_layers_evenly_over_the_gpus() {
    use vramfit_core::engines::llama_cpp::{device_split, layer_device, tensors};
    // Llama-3-70B: 80 layers and the output over 2 GPUs: 0-40, then 41-79 and the output.
    assert_eq!(layer_device(0, 80, 81, 2), Some(0));
    assert_eq!(layer_device(40, 80, 81, 2), Some(0));
    assert_eq!(layer_device(41, 80, 81, 2), Some(1));
    assert_eq!(layer_device(80, 80, 81, 2), Some(1));
    // Only the last 20 offloaded, over 2 GPUs: 10 each, the rest on the CPU.
    assert_eq!(layer_device(59, 80, 20, 2), None);
    assert_eq!(layer_device(60, 80, 20, 2), Some(0));
    assert_eq!(layer_device(79, 80, 20, 2), Some(1));
    let spec = model_preset("llama-3-70b").unwrap().spec;
    let vramfit_core::ModelSpec::Transformer(t) = spec else {
        unreachable!("a transformer preset")
    };
    let mix = "q4_k_m".parse().unwrap();
    let all = tensors(&t, mix);
    let split = device_split(
        &t,
        &all,
        vramfit_core::engines::gguf::GgmlType::F16,
        (8192, 1),
        512,
        81,
        2,
    );
    let total: u64 = all.iter().map(|x| x.bytes.0).sum();
    let embd: u64 = all
        .iter()
        .filter(|x| {
            x.layer.is_none() && x.role == Some(vramfit_core::engines::mix::Role::TokenEmbd)
        })
        .map(|x| x.bytes.0)
        .sum();
    assert_eq!(split[0].0.0 + split[1].0.0, total - embd);
    // 41 and 40 layers' caches: 320 KiB per token per 80 layers, f16.
    assert_eq!(split[0].1.0 + split[1].1.0, 8192 * 80 * 2 * 8 * 128 * 2);
    assert_eq!(split[0].1.0, 8192 * 41 * 2 * 8 * 128 * 2);
}

/// A multimodal checkpoint's vision encoder: vLLM, SGLang and
/// `transformers` load it in 16 bits beside the language model (Qwen2.5-VL-7B's
/// 676,550,144 parameters, `tests/reference/multimodal_counts.csv`), split by
/// tensor parallelism; llama.cpp's text GGUF has none of it; a decode step
/// does not read it.
#[test]
fn a_vision_encoder_is_loaded_by_the_pytorch_engines_and_not_by_llama_cpp() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference/multimodal"
    );
    let json = std::fs::read_to_string(format!("{dir}/qwen2_5_vl_7b.json")).unwrap();
    let vl = vramfit_core::hf::import(&json).unwrap().spec;
    let ModelSpec::Transformer(t) = &vl else {
        unreachable!()
    };
    let mut text_only = t.clone();
    text_only.encoder = None;
    let text = ModelSpec::Transformer(text_only);
    let gpu = gpu_preset("h100-sxm").unwrap();
    let encoder = 2 * 676_550_144;
    for engine in [Engine::Vllm, Engine::Sglang, Engine::Hf] {
        for tp in [1, 2] {
            let cfg = ServeConfig {
                engine,
                weights: ServeWeights::Native,
                tp,
                ..ServeConfig::default()
            };
            let (a, b) = (
                serve(&vl, &gpu, &cfg).unwrap(),
                serve(&text, &gpu, &cfg).unwrap(),
            );
            assert_eq!(a.weights_bytes.0 - b.weights_bytes.0, encoder, "{engine:?}");
            if engine == Engine::Hf {
                // Its own memory grows by the GPU's share.
                assert_eq!(a.gpu_bytes.0 - b.gpu_bytes.0, encoder / tp, "tp {tp}");
            } else {
                // The budget is fixed: the cache pool gives up the GPU's share.
                let less = b.kv_cache_bytes.0 - a.kv_cache_bytes.0;
                assert!(
                    less.abs_diff(encoder / tp) < 64 << 20,
                    "{engine:?} tp {tp}: {less}"
                );
            }
        }
    }
    let q4 = || llama_cpp("q4_k_m".parse().unwrap());
    let (a, b) = (
        serve(&vl, &gpu, &q4()).unwrap(),
        serve(&text, &gpu, &q4()).unwrap(),
    );
    assert_eq!(
        (a.weights_bytes, a.gpu_bytes, a.host_bytes),
        (b.weights_bytes, b.gpu_bytes, b.host_bytes)
    );
}

/// DeepSeek-V3.2's sparse attention: beside the 576-value latent, each layer
/// caches its indexer's key — 128 fp8 values and an fp32 scale in vLLM and
/// SGLang (132 bytes: `DeepseekV32IndexerCache`, `IndexKeyCache`), 128 values
/// of the cache type in llama.cpp (`llama_kv_cache_dsa`), of the model's
/// dtype in `transformers`; vLLM's blocks are 64 tokens (the indexer
/// backend's only size) and its DSA buffers (top-k indices, the key-gather
/// workspace, the profile's fp32 logits) come out of the budget; a decode
/// step reads `index_topk` latents and every indexer key.
#[test]
fn sparse_attention_caches_the_indexer_key_beside_the_latent() {
    use vramfit_core::engines::budget;
    let v32 = model_preset("deepseek-v3.2").unwrap().spec;
    let v3 = model_preset("deepseek-v3").unwrap().spec;
    let gpu = gpu_preset("h200").unwrap();
    let context = 32_768;
    let torch = |engine, kv| ServeConfig {
        engine,
        weights: ServeWeights::Fp8,
        kv,
        tp: 8,
        context,
        ..ServeConfig::default()
    };
    // vLLM, bf16 cache: 61 × (1152 + 132) bytes a token, whole blocks of 64.
    let r = serve(&v32, &gpu, &torch(Engine::Vllm, KvDtype::F16)).unwrap();
    let per_token = 61 * (576 * 2 + 132);
    let tokens = r.kv_tokens.unwrap();
    assert_eq!(tokens % 64, 0);
    assert_eq!(r.kv_cache_bytes.0, tokens * per_token);
    let concurrency = (tokens / 64) as f64 / context.div_ceil(64) as f64;
    assert!((r.max_concurrency.unwrap() - concurrency).abs() < 1e-9);
    // The fp8 cache is FlashMLA's 656-byte row.
    let fp8 = serve(&v32, &gpu, &torch(Engine::Vllm, KvDtype::Fp8)).unwrap();
    assert_eq!(
        fp8.kv_cache_bytes.0,
        fp8.kv_tokens.unwrap() * 61 * (656 + 132)
    );
    // Its buffers: top-k indices (8192 × 2048 × 4), 61 layers' decode
    // indices ((1024 + 1) × 2048 × 4), the gather workspace (32768 × 8 × 5 ×
    // 132) and the logits — 1024 × 32768 × 4 bytes, under their floor of
    // 512 MiB — against the MLP's peak.
    let v3r = serve(&v3, &gpu, &torch(Engine::Vllm, KvDtype::F16)).unwrap();
    let held = 8192 * 2048 * 4 + 61 * 1025 * 2048 * 4 + 32_768 * 40 * 132;
    let logits: u64 = 512 << 20;
    assert_eq!(
        r.compute_buffer_bytes.0,
        v3r.compute_buffer_bytes.0.max(logits) + held
    );
    // SGLang: the same cell, whole pages of 64.
    let s = serve(&v32, &gpu, &torch(Engine::Sglang, KvDtype::F16)).unwrap();
    assert_eq!(s.kv_tokens.unwrap() % 64, 0);
    assert_eq!(s.kv_cache_bytes.0, s.kv_tokens.unwrap() * per_token);
    // llama.cpp: K-only f16 caches of 576 and 128 values.
    let gguf = ServeConfig {
        context,
        ..llama_cpp("q4_k_m".parse().unwrap())
    };
    let l = serve(&v32, &gpu, &gguf).unwrap();
    assert_eq!(l.kv_cache_bytes.0, context * 61 * (576 + 128) * 2);
    // transformers: the indexer keys in bf16 beside the latent.
    let hf = ServeConfig {
        engine: Engine::Hf,
        weights: ServeWeights::Native,
        context,
        ..ServeConfig::default()
    };
    let h = serve(&v32, &gpu, &hf).unwrap();
    assert_eq!(h.kv_cache_bytes.0, context * 61 * (576 + 128) * 2);
    assert_eq!(
        budget::dsa_token_bytes(
            match &v32 {
                ModelSpec::Transformer(t) => t,
                _ => unreachable!(),
            },
            2
        ),
        Some(per_token)
    );
    // Training is not simulated: said, not guessed.
    let e = vramfit_core::estimate(
        &v32,
        &vramfit_core::TrainConfig::default(),
        &vramfit_core::Overheads::default(),
        None,
    )
    .unwrap_err();
    assert_eq!(
        e,
        Error::NotApplicable(vramfit_core::error::Inapplicable::SparseAttentionIndexer)
    );
}

#[test]
fn an_mlp_without_a_gate_loads_two_matrices_in_every_engine() {
    // In 16 bits every parameter is two bytes, whatever the engine loads:
    // vLLM's `fc1`/`fc2` (Phi, OPT), `dense_h_to_4h`/`dense_4h_to_h`
    // (GPT-NeoX), `c_fc`/`c_proj` (StarCoder2), and llama.cpp's f16 GGUF's
    // `ffn_up` and `ffn_down`, none with a gate (within a tenth of a
    // percent: its norms and biases are f32, and the tally leaves out a few
    // vectors; with a gate counted it was 30 % more). The parameter counts are
    // transformers' (tests/reference/param_counts.csv).
    let gpu = gpu_preset("h100-sxm").unwrap();
    for id in [
        "phi-2",
        "phi-1.5",
        "pythia-160m",
        "starcoder2-3b",
        "opt-1.3b",
    ] {
        let spec = model_preset(id).unwrap().spec;
        let params = spec.parameter_count().unwrap();
        for engine in [Engine::Vllm, Engine::Sglang] {
            let cfg = ServeConfig {
                engine,
                weights: ServeWeights::Native,
                ..ServeConfig::default()
            };
            let r = serve(&spec, &gpu, &cfg).unwrap();
            assert_eq!(r.weights_bytes.0, 2 * params, "{id} on {engine:?}");
        }
        if id == "opt-1.3b" {
            continue;
        }
        let r = serve(&spec, &gpu, &llama_cpp(GgufMix::F16)).unwrap();
        let ratio = r.weights_bytes.0 as f64 / (2 * params) as f64;
        assert!((0.999..1.001).contains(&ratio), "{id} as f16 GGUF: {ratio}");
    }
}

/// vLLM and SGLang split key/value heads over tensor-parallel GPUs where
/// `tp` divides them and otherwise give every GPU a copy of one head where
/// `tp` is a multiple of them (`QKVParallelLinear`: `num_kv_head_replicas =
/// divide(tp_size, total_num_kv_heads)`); `transformers`' `tp_plan` only
/// splits. A model of one key/value head on two GPUs then holds per GPU,
/// in weights and in cache, what the same model with two heads does. The
/// query heads are split in every engine.
#[test]
fn fewer_key_value_heads_than_gpus_are_copied_in_vllm_and_sglang() {
    use vramfit_core::engines::{budget, kv_head_replicas, kv_heads_per_gpu, weights_per_gpu};
    assert_eq!(kv_head_replicas(8, Engine::Vllm, 2), Some(1));
    assert_eq!(kv_head_replicas(1, Engine::Vllm, 4), Some(4));
    assert_eq!(kv_head_replicas(2, Engine::Sglang, 8), Some(4));
    assert_eq!(kv_head_replicas(8, Engine::Vllm, 3), None);
    assert_eq!(kv_head_replicas(4, Engine::Vllm, 6), None);
    assert_eq!(kv_head_replicas(1, Engine::Hf, 2), None);
    assert_eq!((kv_heads_per_gpu(8, 2), kv_heads_per_gpu(1, 4)), (4, 1));

    let llama = |kv_heads: u64| {
        let json = format!(
            r#"{{"model_type":"llama","vocab_size":32000,"hidden_size":2048,"num_hidden_layers":4,
            "num_attention_heads":16,"num_key_value_heads":{kv_heads},"intermediate_size":5632}}"#
        );
        match vramfit_core::hf::import(&json).unwrap().spec {
            ModelSpec::Transformer(t) => t,
            other => panic!("{other:?}"),
        }
    };
    let (one, two) = (llama(1), llama(2));
    let w = ServeWeights::Native;
    assert_eq!(weights_per_gpu(&one, w, 2), weights_per_gpu(&two, w, 2));
    // On one GPU, the one-head model is lighter by one head's projections:
    // 4 layers of two 128 × 2048 matrices in 16 bits.
    assert_eq!(
        weights_per_gpu(&two, w, 1).0 - weights_per_gpu(&one, w, 1).0,
        4 * 2 * 128 * 2048 * 2
    );
    assert_eq!(
        budget::kv_token_layer(&one, 2, 2),
        budget::kv_token_layer(&two, 2, 2)
    );
    assert_eq!(budget::kv_token_layer(&one, 2, 2), 2 * 128 * 2);

    let h100 = gpu_preset("h100-sxm").unwrap();
    let spec = ModelSpec::Transformer(one);
    for engine in [Engine::Vllm, Engine::Sglang] {
        let cfg = ServeConfig {
            engine,
            weights: ServeWeights::Native,
            tp: 2,
            ..ServeConfig::default()
        };
        let r = serve(&spec, &h100, &cfg).unwrap();
        assert!(r.kv_cache_bytes.0 > 0, "{engine:?}: {r:?}");
    }
    let hf = ServeConfig {
        engine: Engine::Hf,
        weights: ServeWeights::Native,
        tp: 2,
        ..ServeConfig::default()
    };
    assert!(matches!(
        serve(&spec, &h100, &hf),
        Err(Error::Serve(ServeFault::KvHeadsSplit {
            kv_heads: 1,
            tp: 2
        }))
    ));
    // The query heads are always split: Qwen2.5-7B's 28 over 8 GPUs are
    // refused though its 4 key/value heads could be copied.
    let qwen = r#"{"model_type":"qwen2","vocab_size":152064,"hidden_size":3584,"num_hidden_layers":28,
        "num_attention_heads":28,"num_key_value_heads":4,"intermediate_size":18944,"tie_word_embeddings":false}"#;
    let qwen = vramfit_core::hf::import(qwen).unwrap().spec;
    let tp8 = ServeConfig {
        engine: Engine::Vllm,
        weights: ServeWeights::Native,
        tp: 8,
        ..ServeConfig::default()
    };
    assert!(matches!(
        serve(&qwen, &h100, &tp8),
        Err(Error::Serve(ServeFault::HeadsSplit { heads: 28, tp: 8 }))
    ));
    assert!(serve(&qwen, &h100, &ServeConfig { tp: 4, ..tp8 }).is_ok());
}

/// Granite 4.0's H layout (`granitemoehybrid` with Mamba-2 layers): each
/// Mamba-2 layer keeps, per sequence, the convolution's last `d_conv − 1`
/// inputs of x, B and C and the `heads × head_dim × d_state` state —
/// llama.cpp both in f32 (`n_embd_r()`, `n_embd_s()`), vLLM in the model's
/// dtype with the one group of B and C copied to every tensor-parallel
/// rank (`extra_groups_for_head_shards`); only the attention layers' keys
/// and values grow with the context.
#[test]
fn mamba_2_layers_keep_a_state_per_sequence() {
    let json = r#"{"model_type":"granitemoehybrid","vocab_size":100352,"hidden_size":1536,
        "intermediate_size":512,"num_hidden_layers":4,"num_attention_heads":12,"num_key_value_heads":4,
        "num_local_experts":0,"shared_intermediate_size":4096,"layer_types":["mamba","mamba","attention","mamba"],
        "mamba_n_heads":48,"mamba_d_head":64,"mamba_d_state":128,"mamba_n_groups":1,"mamba_d_conv":4,
        "mamba_expand":2,"tie_word_embeddings":true}"#;
    let spec = vramfit_core::hf::import(json).unwrap().spec;
    let ModelSpec::Transformer(t) = &spec else {
        panic!("a transformer: {spec:?}")
    };
    let m = t.linear.as_deref().unwrap();
    assert_eq!((t.attention_layers(), m.linear_layers(t.layers)), (1, 3));
    // conv_dim = 3072 + 2 × 128 = 3328; (4 − 1) × 3328 + 48 × 64 × 128 elements.
    assert_eq!(m.serving_state_bytes(1, 4, 4), (3 * 3328 + 393_216) * 4);
    // Two ranks: half the heads each, the one group of B and C on both.
    assert_eq!(
        m.serving_state_bytes(2, 2, 2),
        (3 * (1536 + 256) + 196_608) * 2
    );
    let cfg = ServeConfig {
        context: 8192,
        concurrency: 2,
        ..llama_cpp("q4_k_m".parse().unwrap())
    };
    let r = serve(&spec, &gpu_preset("h100-sxm").unwrap(), &cfg).unwrap();
    // One attention layer's f16 keys and values for 2 × 8192 cells, three
    // Mamba-2 layers' f32 states for each of the 2 sequences.
    let kv = 2 * 16_384 * 4 * 128 * 2 + 3 * 2 * (3 * 3328 + 393_216) * 4;
    assert_eq!(r.kv_cache_bytes.0, kv);
}

/// Nemotron-H: only its attention layers keep keys and values, its Mamba-2
/// layers a state per sequence, its MLP layers nothing; the weights are
/// the parameters `transformers` builds.
#[test]
fn nemotron_h_serves_each_layer_by_its_one_mixer() {
    let json = r#"{"model_type":"nemotron_h","vocab_size":32000,"hidden_size":512,
        "num_attention_heads":8,"num_key_value_heads":2,"head_dim":64,"intermediate_size":1536,
        "hybrid_override_pattern":"M-M*-","mamba_num_heads":16,"mamba_head_dim":64,
        "ssm_state_size":128,"n_groups":8,"conv_kernel":4,"chunk_size":128}"#;
    let spec = vramfit_core::hf::import(json).unwrap().spec;
    // `transformers`' count (tests/reference/param_counts.csv, nemotron-h-h512).
    assert_eq!(spec.parameter_count().unwrap(), 41_864_288);
    let cfg = ServeConfig {
        context: 4096,
        concurrency: 2,
        ..llama_cpp("f16".parse().unwrap())
    };
    let r = serve(&spec, &gpu_preset("h100-sxm").unwrap(), &cfg).unwrap();
    // One attention layer's f16 keys and values for 2 × 4096 cells (2 × 64
    // wide each); two Mamba-2 layers' f32 states for each sequence:
    // (4 − 1) × (1024 + 2 × 8 × 128) + 16 × 64 × 128 elements.
    let state = 3 * (1024 + 2 * 8 * 128) + 16 * 64 * 128;
    let kv = 2 * 8192 * 2 * 64 * 2 + 2 * 2 * state * 4;
    assert_eq!(r.kv_cache_bytes.0, kv);
    // f16 weights: every parameter in 2 bytes but the f32 vectors (norms,
    // the convolutions, dt_bias, A, D), within a percent.
    let weights = r.weights_bytes.0 as f64;
    assert!(
        (weights / (2.0 * 41_864_288.0) - 1.0).abs() < 0.01,
        "{weights}"
    );
}
