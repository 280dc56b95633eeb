//! `vramfit estimate --mode inference --engine vllm|sglang|llama.cpp` run
//! as a subprocess: the engines' numbers against published ones, the
//! verdict, bad input, the launch commands and share links.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use std::process::{Command, Output};

fn vramfit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(args)
        .output()
        .expect("run vramfit")
}

/// `vramfit estimate --model llama-3-8b --mode inference ARGS`.
fn serve(args: &[&str]) -> Output {
    let mut full = vec!["estimate", "--model", "llama-3-8b", "--mode", "inference"];
    full.extend_from_slice(args);
    vramfit(&full)
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut full = args.to_vec();
    full.push("--json");
    serde_json::from_str(&stdout(&serve(&full))).expect("one JSON object")
}

/// The serving estimate exits 2 with a message containing `needle`.
fn refused(args: &[&str], needle: &str) {
    let out = serve(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
}

fn bytes(v: &serde_json::Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn llama_cpp_weights_match_the_published_gguf_files_and_f16_kv_at_8192_is_one_gib() {
    // TheBloke / QuantFactory model cards (tests/reference/engines/gguf_sizes.csv):
    // Meta-Llama-3-8B Q4_K_M 4.92 GB, Q8_0 8.54 GB.
    for (mix, published) in [("q4_k_m", 4.92e9), ("q8_0", 8.54e9)] {
        let v = json(&[
            "--engine",
            "llama.cpp",
            "--weights",
            mix,
            "--context",
            "8192",
            "--gpu",
            "rtx-4090",
        ]);
        assert_eq!(v["schema"], "vramfit.serve/1");
        let w = bytes(&v, "weights_bytes") as f64;
        assert!(
            (w / published - 1.0).abs() < 0.02,
            "{mix}: {w} vs {published}"
        );
        assert_eq!(bytes(&v, "kv_cache_bytes"), 1 << 30, "{mix}");
        assert!(bytes(&v, "compute_buffer_bytes") > 0);
        // The token embedding stays in host memory even at -ngl all.
        assert!(bytes(&v, "host_bytes") > 0);
        assert_eq!(v["gpu"]["fits"], true);
        assert!(v.get("max_concurrency").is_none(), "{v}");
    }
}

#[test]
fn llama_cpp_gpu_layers_move_weights_and_cache_to_the_host() {
    let all = json(&[
        "--engine",
        "llama.cpp",
        "--weights",
        "q4_k_m",
        "--gpu",
        "t4",
    ]);
    let none = json(&[
        "--engine",
        "llama.cpp",
        "--weights",
        "q4_k_m",
        "--gpu",
        "t4",
        "--gpu-layers",
        "0",
    ]);
    let half = json(&[
        "--engine",
        "llama.cpp",
        "--weights",
        "q4_k_m",
        "--gpu",
        "t4",
        "--gpu-layers",
        "16",
    ]);
    let device = |v: &serde_json::Value| bytes(v, "device_used_bytes");
    let host = |v: &serde_json::Value| bytes(v, "host_bytes");
    assert!(device(&none) < device(&half) && device(&half) < device(&all));
    assert!(host(&none) > host(&half) && host(&half) > host(&all));
    // At -ngl 0 the host holds the weights and the cache.
    assert!(host(&none) > bytes(&none, "weights_bytes") + bytes(&none, "kv_cache_bytes"));
    // Llama-3-70B Q4_K_M does not fit a 24 GB card whole; 20 of its 80 layers do.
    let big = |layers: Option<&str>| {
        let mut args = vec![
            "estimate",
            "--model",
            "llama-3-70b",
            "--mode",
            "inference",
            "--engine",
            "llama.cpp",
            "--weights",
            "q4_k_m",
            "--context",
            "8192",
            "--gpu",
            "rtx-4090",
            "--json",
        ];
        if let Some(n) = layers {
            args.extend(["--gpu-layers", n]);
        }
        let v: serde_json::Value = serde_json::from_str(&stdout(&vramfit(&args))).unwrap();
        v["gpu"]["fits"].as_bool().unwrap()
    };
    assert!(!big(None));
    assert!(big(Some("20")));
}

#[test]
fn vllm_fills_its_budget_with_kv_blocks_and_fits_by_max_concurrency() {
    let v = json(&["--engine", "vllm", "--context", "8192", "--gpu", "rtx-4090"]);
    let tokens = bytes(&v, "kv_tokens");
    let concurrency = v["max_concurrency"].as_f64().unwrap();
    // 64-token blocks (vLLM 0.34); concurrency = blocks / ceil(8192 / 64).
    assert_eq!(tokens % 64, 0);
    assert!((concurrency - (tokens / 64) as f64 / 128.0).abs() < 1e-12);
    assert!(
        (5.0..7.0).contains(&concurrency),
        "Llama-3-8B bf16 on 24 GiB: {concurrency}"
    );
    // Weights, activations, non-torch memory and the pool fill the budget,
    // 0.9 × 24 GiB, to within one block (8 MiB a block over 32 layers).
    let budget = bytes(&v["gpu"], "usable_bytes");
    assert_eq!(budget, (0.9 * (24u64 << 30) as f64).ceil() as u64);
    let used = bytes(&v, "device_used_bytes");
    assert!(
        used <= budget && budget - used < 8 << 20,
        "{used} of {budget}"
    );
    // Fits while the pool holds --concurrency sequences of the context.
    let fits = |n: &str| {
        json(&[
            "--engine",
            "vllm",
            "--context",
            "8192",
            "--gpu",
            "rtx-4090",
            "--concurrency",
            n,
        ])["gpu"]["fits"]
            .as_bool()
            .unwrap()
    };
    assert!(fits(&concurrency.floor().to_string()));
    assert!(!fits(&concurrency.ceil().to_string()));
    // An fp8 cache holds twice the tokens in the same pool (H100).
    let f16 = json(&["--engine", "vllm", "--gpu", "h100-sxm"]);
    let fp8 = json(&["--engine", "vllm", "--gpu", "h100-sxm", "--kv-dtype", "fp8"]);
    let ratio = bytes(&fp8, "kv_tokens") as f64 / bytes(&f16, "kv_tokens") as f64;
    assert!((ratio - 2.0).abs() < 0.01, "{ratio}");
    // A lower utilization leaves a smaller pool; SGLang reports the same terms.
    let low = json(&[
        "--engine",
        "vllm",
        "--gpu",
        "h100-sxm",
        "--gpu-memory-utilization",
        "0.5",
    ]);
    assert!(bytes(&low, "kv_tokens") < bytes(&f16, "kv_tokens"));
    let sglang = json(&["--engine", "sglang", "--gpu", "h100-sxm"]);
    assert!(sglang["max_concurrency"].as_f64().unwrap() > 1.0);
    // Two GPUs with tensor parallelism: half the weights each, a larger pool.
    let tp = json(&[
        "--engine",
        "vllm",
        "--gpu",
        "rtx-4090",
        "--context",
        "8192",
        "--tp",
        "2",
        "--gpus-per-node",
        "2",
    ]);
    assert!(tp["max_concurrency"].as_f64().unwrap() > 3.0 * concurrency);
}

#[test]
fn the_table_names_the_engines_terms_and_the_verdict() {
    let s = stdout(&serve(&[
        "--engine",
        "llama.cpp",
        "--weights",
        "q4_k_m",
        "--gpu",
        "rtx-4090",
    ]));
    for needle in [
        "served by llama.cpp",
        "weights q4_k_m, KV cache f16",
        "KV cache",
        "compute buffer",
        "host RAM",
        "device used (nvidia-smi)",
        "rtx-4090: fits in 23.6 GiB",
    ] {
        assert!(s.contains(needle), "{needle}: {s}");
    }
    let s = stdout(&serve(&["--engine", "vllm", "--gpu", "t4"]));
    assert!(
        s.contains("maximum concurrency for 512 tokens per request"),
        "{s}"
    );
    // bf16 Llama-3-8B (16 GB of weights) leaves a T4's 0.9 share no KV pool.
    assert!(s.contains("t4: does NOT fit"), "{s}");
}

#[test]
fn bad_engine_settings_get_a_specific_message() {
    refused(
        &[
            "--engine",
            "vllm",
            "--weights",
            "q4_k_m",
            "--gpu",
            "rtx-4090",
        ],
        "vllm does not run q4_k_m weights",
    );
    refused(
        &["--engine", "llama.cpp", "--weights", "awq-int4"],
        "llama.cpp does not run awq-int4 weights: it takes GGUF mixes",
    );
    refused(
        &["--engine", "vllm", "--kv-dtype", "fp8", "--gpu", "t4"],
        "Tesla T4 has no fp8",
    );
    refused(
        &[
            "--engine",
            "vllm",
            "--kv-dtype",
            "q4_0",
            "--gpu",
            "rtx-4090",
        ],
        "vllm has no q4_0 KV cache",
    );
    refused(
        &[
            "--engine",
            "llama.cpp",
            "--weights",
            "q4_k_m",
            "--gpu-layers",
            "34",
        ],
        "--gpu-layers 34 is more than the model's 32 layers and its output layer (33 at most",
    );
    refused(
        &[
            "--engine",
            "llama.cpp",
            "--weights",
            "q4_k_m",
            "--kv-dtype",
            "q8_0",
            "--attention",
            "eager",
        ],
        "q8_0 V cache needs flash attention",
    );
    refused(
        &["--engine", "vllm"],
        "vllm sizes its KV cache from the GPU's memory: give --gpu",
    );
    refused(
        &["--engine", "vllm", "--gpu", "rtx-4090", "--gpu-layers", "8"],
        "--gpu-layers does not apply to --engine vllm",
    );
    refused(
        &["--engine", "llama.cpp", "--gpu-memory-utilization", "0.8"],
        "--gpu-memory-utilization does not apply to --engine llama.cpp",
    );
    refused(&["--weights", "q4_k_m"], "hf does not run q4_k_m weights");
    refused(
        &["--concurrency", "0"],
        "invalid value '0' for --concurrency",
    );
    refused(&["--engine", "ollama"], "expected hf|vllm|sglang|llama.cpp");
    refused(&["--weights", "q9_k"], "gptq-int4|mxfp4|q4_0");
    let out = vramfit(&[
        "estimate",
        "--model",
        "llama-3-8b",
        "--engine",
        "vllm",
        "--gpu",
        "rtx-4090",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--engine vllm is for --mode inference"));
    let out = vramfit(&[
        "estimate",
        "--model",
        "bert-base",
        "--mode",
        "inference",
        "--engine",
        "llama.cpp",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Llama-style decoders"));
    // `gpus` answers for Hugging Face's simulation (`max-batch` answers for the engines).
    let out = vramfit(&[
        "gpus",
        "--model",
        "llama-3-8b",
        "--mode",
        "inference",
        "--engine",
        "vllm",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("run `vramfit estimate --engine vllm`"));
}

#[test]
fn export_prints_the_engines_launch_command() {
    let s = stdout(&serve(&[
        "--engine",
        "llama.cpp",
        "--weights",
        "q5_k_m",
        "--context",
        "4096",
        "--concurrency",
        "2",
        "--gpu-layers",
        "20",
        "--kv-dtype",
        "q8_0",
        "--attention",
        "flash",
        "--export",
        "llama.cpp",
    ]));
    assert_eq!(
        s,
        "llama-server -m llama-3-8b-Q5_K_M.gguf -c 8192 -np 2 -ngl 20 --cache-type-k q8_0 --cache-type-v q8_0 -fa on\n"
    );
    let s = stdout(&serve(&[
        "--engine",
        "vllm",
        "--gpu",
        "h100-sxm",
        "--context",
        "8192",
        "--kv-dtype",
        "fp8",
        "--gpu-memory-utilization",
        "0.85",
        "--tp",
        "2",
        "--gpus-per-node",
        "2",
        "--weights",
        "awq-int4",
        "--export",
        "vllm",
    ]));
    assert_eq!(
        s,
        "vllm serve llama-3-8b --max-model-len 8192 --gpu-memory-utilization 0.85 --tensor-parallel-size 2 --kv-cache-dtype fp8 --quantization awq\n"
    );
    let s = stdout(&serve(&[
        "--engine",
        "sglang",
        "--gpu",
        "a100-80gb",
        "--seq",
        "8192",
        "--export",
        "sglang",
    ]));
    assert_eq!(
        s,
        "python -m sglang.launch_server --model-path llama-3-8b --context-length 8192 --mem-fraction-static 0.9 --tp 1 --kv-cache-dtype auto\n"
    );
    refused(
        &[
            "--engine",
            "vllm",
            "--gpu",
            "rtx-4090",
            "--export",
            "llama.cpp",
        ],
        "--export llama.cpp needs --engine llama.cpp",
    );
    refused(
        &["--export", "deepspeed"],
        "estimate --export takes vllm|llama.cpp|sglang",
    );
    let out = vramfit(&[
        "plan",
        "--model",
        "gpt2",
        "--gpu",
        "rtx-4090",
        "--target-batch",
        "8",
        "--export",
        "vllm",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("plan --export takes deepspeed"));
}

#[test]
fn engine_settings_travel_in_the_share_link() {
    let args = [
        "--engine",
        "llama.cpp",
        "--weights",
        "q4_k_m",
        "--kv-dtype",
        "q4_0",
        "--attention",
        "flash",
        "--concurrency",
        "3",
        "--gpu-layers",
        "24",
        "--gpu",
        "rtx-4090",
    ];
    let link = stdout(&serve(&[&args[..], &["--url"]].concat()));
    for pair in ["w=q4_k_m", "en=llama.cpp", "kv=q4_0", "cc=3", "gl=24"] {
        assert!(link.contains(pair), "{pair}: {link}");
    }
    let direct = json(&args);
    let out = vramfit(&["estimate", "--from-url", link.trim(), "--json"]);
    let linked: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(direct, linked);
    // vLLM's share of the GPU too; a link from before the engines still decodes.
    let link = stdout(&serve(&[
        "--engine",
        "vllm",
        "--gpu",
        "rtx-4090",
        "--gpu-memory-utilization",
        "0.8",
        "--url",
    ]));
    assert!(
        link.contains("en=vllm") && link.contains("gu=0.8"),
        "{link}"
    );
    let old = vramfit(&[
        "estimate",
        "--from-url",
        "?v=1&m=llama-3-8b&mo=inference&w=int4&ctx=4096",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&old)).unwrap();
    assert_eq!(v["schema"], "vramfit.estimate/1");
    assert_eq!(v["config"]["weights"], "int4");
}

/// Above the model's trained context vLLM and SGLang refuse, naming the
/// variable that lifts their check; llama.cpp runs it with a warning.
#[test]
fn a_context_above_the_models_limit_is_refused_or_warned() {
    refused(
        &[
            "--engine",
            "vllm",
            "--gpu",
            "h100-sxm",
            "--context",
            "16384",
        ],
        "vllm refuses a context of 16384 tokens: the model's config.json allows 8192 (VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
    );
    refused(
        &[
            "--engine",
            "sglang",
            "--gpu",
            "h100-sxm",
            "--context",
            "16384",
        ],
        "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
    );
    let v = json(&[
        "--engine",
        "llama.cpp",
        "--weights",
        "q4_k_m",
        "--gpu",
        "rtx-4090",
        "--context",
        "16384",
    ]);
    assert_eq!(v["beyond_trained_context"], 8192);
    let v = json(&[
        "--engine",
        "llama.cpp",
        "--weights",
        "q4_k_m",
        "--context",
        "8192",
    ]);
    assert!(v["beyond_trained_context"].is_null());
}

/// Qwen3.5-27B's 48 linear-attention layers keep a state per sequence, not
/// keys and values: the layout names them and counts only the 16 attention
/// layers per token (4 key/value heads × 256, f16), and the state is each
/// engine's — f32 in llama.cpp and SGLang, fp32 recurrent state in vLLM as
/// the checkpoint asks — 3 × 10,240 convolution values (bf16, or f32 in
/// llama.cpp) and 48 × 128 × 128 recurrent ones per layer.
#[test]
fn qwen3_5_is_served_with_its_linear_layers_state() {
    for (engine, weights, conv) in [
        ("vllm", "native", 2),
        ("sglang", "native", 2),
        ("llama.cpp", "q4_k_m", 4),
    ] {
        let out = vramfit(&[
            "estimate",
            "--model",
            "qwen3.5-27b",
            "--mode",
            "inference",
            "--engine",
            engine,
            "--weights",
            weights,
            "--gpu",
            "h200",
            "--context",
            "8192",
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
        let layout = &v["kv_layout"];
        assert_eq!(
            layout["bytes_per_token"],
            16 * 2 * 4 * 256 * 2,
            "{engine}: {v}"
        );
        assert_eq!(layout["linear"]["layers"], 48, "{engine}");
        assert_eq!(layout["linear"]["of"], 64, "{engine}");
        let state = 3 * 10_240 * conv + 48 * 128 * 128 * 4;
        assert_eq!(
            layout["linear"]["bytes_per_sequence"],
            48 * state,
            "{engine}"
        );
    }
    let out = vramfit(&[
        "estimate",
        "--model",
        "qwen3.5-27b",
        "--mode",
        "inference",
        "--engine",
        "llama.cpp",
        "--weights",
        "q4_k_m",
        "--context",
        "8192",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("48 of 64 layers are linear attention"),
        "{text}"
    );
}

/// Granite 4.0's H layout pasted as a `config.json`: its Mamba-2 layers
/// named as such, their f32 states per sequence in llama.cpp beside the
/// one attention layer's keys and values.
#[test]
fn granite_4_h_is_served_with_its_mamba_2_states() {
    let dir = std::env::temp_dir().join(format!("vramfit-granite-h-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.json");
    std::fs::write(
        &config,
        r#"{"model_type":"granitemoehybrid","vocab_size":100352,"hidden_size":1536,"intermediate_size":512,
        "num_hidden_layers":4,"num_attention_heads":12,"num_key_value_heads":4,"num_local_experts":0,
        "shared_intermediate_size":4096,"layer_types":["mamba","mamba","attention","mamba"],"mamba_n_heads":48,
        "mamba_d_head":64,"mamba_d_state":128,"mamba_d_conv":4,"time_step_limit":[0.0,Infinity]}"#,
    )
    .unwrap();
    let out = vramfit(&[
        "estimate",
        "--model",
        config.to_str().unwrap(),
        "--mode",
        "inference",
        "--engine",
        "llama.cpp",
        "--weights",
        "q4_k_m",
        "--context",
        "8192",
    ]);
    let text = stdout(&out);
    // (3 × (3072 + 256) + 48 × 64 × 128) × 4 bytes per layer, three layers.
    let per_sequence = vramfit_core::Bytes(3 * (3 * 3328 + 393_216) * 4).to_string();
    assert!(
        text.contains(&format!(
            "3 of 4 layers are Mamba-2 state-space layers and keep {per_sequence} per sequence"
        )),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Nemotron 3 Nano's layout pasted as a `config.json` (`hybrid_override_pattern`):
/// served by vLLM, its Mamba-2 layers keep a state, its experts layers
/// nothing, and the layout says which.
#[test]
fn nemotron_h_is_served_layer_by_layer() {
    let dir = std::env::temp_dir().join(format!("vramfit-nemotron-h-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.json");
    std::fs::write(
        &config,
        r#"{"model_type":"nemotron_h","vocab_size":131072,"hidden_size":2688,"num_attention_heads":32,
        "num_key_value_heads":2,"head_dim":128,"intermediate_size":1856,"hybrid_override_pattern":"MEMEM*EMEMEM*E",
        "mamba_num_heads":64,"mamba_head_dim":64,"ssm_state_size":128,"n_groups":8,"conv_kernel":4,
        "chunk_size":128,"n_routed_experts":128,"num_experts_per_tok":6,"moe_intermediate_size":1856,
        "moe_shared_expert_intermediate_size":3712,"n_group":1,"topk_group":1,"max_position_embeddings":262144}"#,
    )
    .unwrap();
    let out = vramfit(&[
        "estimate",
        "--model",
        config.to_str().unwrap(),
        "--mode",
        "inference",
        "--engine",
        "vllm",
        "--gpu",
        "h100-sxm",
        "--context",
        "32768",
    ]);
    let text = stdout(&out);
    assert!(text.contains("nemotron_h"), "{text}");
    assert!(
        text.contains("6 of 14 layers are Mamba-2 state-space layers"),
        "{text}"
    );
    assert!(
        text.contains("6 of 14 layers are an MLP or experts alone and keep nothing"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Gemma 4 E4B as each engine caches it: 4 full-attention layers of two
/// 512-wide heads and 20 sliding ones of two 256-wide heads keep keys and
/// values (56 KiB a token in f16); the last 18 layers reuse theirs, which
/// SGLang allocates anyway (all 42 layers: 98 KiB).
#[test]
fn gemma_4_is_served_with_its_two_kinds_of_layer() {
    for (engine, weights, per_token, allocated) in [
        ("vllm", "native", 4 * 4096 + 20 * 2048, false),
        ("sglang", "native", 7 * 4096 + 35 * 2048, true),
        ("llama.cpp", "q4_k_m", 4 * 4096 + 20 * 2048, false),
    ] {
        let out = vramfit(&[
            "estimate",
            "--model",
            "gemma-4-e4b",
            "--mode",
            "inference",
            "--engine",
            engine,
            "--weights",
            weights,
            "--gpu",
            "rtx-4090",
            "--context",
            "8192",
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
        let layout = &v["kv_layout"];
        assert_eq!(layout["bytes_per_token"], per_token, "{engine}: {v}");
        let full = &layout["full_layers"];
        assert_eq!(
            (
                &full["heads"],
                &full["head_dim"],
                &full["reused"],
                &full["allocated"]
            ),
            (&2.into(), &512.into(), &18.into(), &allocated.into()),
            "{engine}"
        );
    }
    let out = vramfit(&[
        "estimate",
        "--model",
        "gemma-4-e4b",
        "--mode",
        "inference",
        "--engine",
        "vllm",
        "--weights",
        "native",
        "--gpu",
        "rtx-4090",
        "--context",
        "8192",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("full-attention layers: 2 head(s) × 512; the last 18 layers reuse an earlier layer's keys and values and keep none"),
        "{text}"
    );
}

/// A mixture of experts with latent attention is served by every engine,
/// each naming the latent cache it keeps: DeepSeek-V2-Lite's 27 layers of
/// `kv_lora_rank + qk_rope_head_dim` = 576 f16 values per token.
#[test]
fn deepseek_v2_lite_is_served_with_its_latent_cache_by_every_engine() {
    for (engine, weights) in [
        ("vllm", "native"),
        ("sglang", "native"),
        ("llama.cpp", "q4_k_m"),
    ] {
        let out = vramfit(&[
            "estimate",
            "--model",
            "deepseek-v2-lite",
            "--mode",
            "inference",
            "--engine",
            engine,
            "--weights",
            weights,
            "--gpu",
            "h100-sxm",
            "--context",
            "8192",
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
        let layout = &v["kv_layout"];
        assert_eq!(layout["kind"], "latent", "{engine}: {v}");
        assert_eq!(layout["width"], 576, "{engine}");
        assert_eq!(layout["bytes_per_token"], 27 * 576 * 2, "{engine}");
        if engine == "llama.cpp" {
            assert_eq!(bytes(&v, "kv_cache_bytes"), 8192 * 27 * 576 * 2);
        } else {
            // The pool holds its tokens' latent rows exactly.
            let tokens = v["kv_tokens"].as_u64().unwrap();
            assert_eq!(
                bytes(&v, "kv_cache_bytes"),
                tokens * 27 * 576 * 2,
                "{engine}"
            );
        }
    }
    // MXFP4 stores experts: a dense model has none.
    refused(
        &[
            "--engine",
            "vllm",
            "--weights",
            "mxfp4",
            "--gpu",
            "h100-sxm",
        ],
        "mixture of experts only",
    );
}

/// The flags an engine does not read are named on stderr, each once, with
/// what it reads instead, and change nothing; Hugging Face's simulation,
/// which reads them, warns of none.
#[test]
fn flags_an_engine_does_not_read_are_warned_about_and_change_nothing() {
    let plain = serve(&["--engine", "vllm", "--gpu", "h100-sxm", "--json"]);
    let typed = serve(&[
        "--engine",
        "vllm",
        "--gpu",
        "h100-sxm",
        "--batch",
        "32",
        "--strategy",
        "zero3",
        "--offload=optimizer",
        "--precision",
        "fp32",
        "--batch",
        "16",
        "--json",
    ]);
    assert_eq!(stdout(&plain), stdout(&typed));
    let err = String::from_utf8_lossy(&typed.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "vramfit: warning: --batch is not read by vllm: its sequences in flight are --concurrency",
            "vramfit: warning: --strategy is not read by vllm: it splits the model over --tp GPUs (of --gpus-per-node × --nodes)",
            "vramfit: warning: --offload is not read by vllm: it splits the model over --tp GPUs (of --gpus-per-node × --nodes)",
            "vramfit: warning: --precision is not read by vllm: the weights' type is --weights",
        ],
        "{err}"
    );
    // llama.cpp reads the precision (an f16 or bf16 GGUF) and the attention (-fa).
    let llama = serve(&[
        "--engine",
        "llama.cpp",
        "--precision",
        "bf16",
        "--attention",
        "eager",
        "--batch",
        "4",
    ]);
    let err = String::from_utf8_lossy(&llama.stderr);
    assert_eq!(
        err.trim(),
        "vramfit: warning: --batch is not read by llama.cpp: its sequences in flight are --concurrency"
    );
    // --gpus-per-node counts the GPUs --tp divides: read.
    let tp = serve(&[
        "--engine",
        "vllm",
        "--gpu",
        "h100-sxm",
        "--tp",
        "2",
        "--gpus-per-node",
        "2",
    ]);
    assert!(
        tp.status.success() && tp.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&tp.stderr)
    );
    // Hugging Face generate's sequences are the batch.
    let hf = serve(&[
        "--batch",
        "4",
        "--precision",
        "bf16",
        "--strategy",
        "single",
    ]);
    assert!(
        hf.status.success() && hf.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&hf.stderr)
    );
}

/// Inference runs no training step: the optimizer's, accumulation's,
/// checkpointing's and the loop's flags are named as unread (the answer is
/// unchanged), and the adapter's outside the LoRA modes.
#[test]
fn training_flags_are_named_as_unread_in_inference() {
    let plain = serve(&["--batch", "2", "--json"]);
    let typed = serve(&[
        "--batch",
        "2",
        "--optimizer",
        "sgd",
        "--grad-accum=4",
        "--checkpointing",
        "full",
        "--lora-rank",
        "8",
        "--json",
    ]);
    let numbers = |out: &Output| {
        let v: serde_json::Value = serde_json::from_str(&stdout(out)).unwrap();
        (
            v["peak_allocated_bytes"].clone(),
            v["device_used_bytes"].clone(),
        )
    };
    assert_eq!(numbers(&plain), numbers(&typed));
    let err = String::from_utf8_lossy(&typed.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "vramfit: warning: --optimizer is not read in inference: it sets a training step, which inference does not run",
            "vramfit: warning: --grad-accum is not read in inference: it sets a training step, which inference does not run",
            "vramfit: warning: --checkpointing is not read in inference: it sets a training step, which inference does not run",
            "vramfit: warning: --lora-rank is not read in --mode inference: it is read with --mode finetune-lora or finetune-qlora",
        ],
        "{err}"
    );
    // Training reads them all.
    let train = vramfit(&[
        "estimate",
        "--model",
        "gpt2",
        "--optimizer",
        "sgd",
        "--grad-accum",
        "4",
        "--checkpointing",
        "full",
    ]);
    assert!(
        train.status.success() && train.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&train.stderr)
    );
}
