//! `vramfit max-batch --mode inference --engine …` and the decode estimate
//! of `estimate --engine …`, run as a subprocess: every answer fits and one
//! more token, sequence or GPU step does not, as `estimate` judges it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use std::process::{Command, Output};

fn vramfit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(args)
        .output()
        .expect("run vramfit")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// `vramfit CMD --model MODEL --mode inference ARGS --json`.
fn json(cmd: &str, model: &str, args: &[&str]) -> serde_json::Value {
    let mut full = vec![cmd, "--model", model, "--mode", "inference"];
    full.extend_from_slice(args);
    full.push("--json");
    serde_json::from_str(&stdout(&vramfit(&full))).expect("one JSON object")
}

/// `estimate`'s verdict for the setting.
fn fits(model: &str, args: &[&str]) -> bool {
    json("estimate", model, args)["gpu"]["fits"]
        .as_bool()
        .unwrap()
}

/// Llama-3.1-8B: its 131,072-token limit leaves memory the bound.
#[test]
fn the_longest_context_and_the_most_sequences_fit_and_one_more_does_not() {
    for engine in [
        &["--engine", "vllm"][..],
        &["--engine", "sglang"],
        &["--engine", "llama.cpp", "--weights", "q4_k_m"],
    ] {
        let base = [engine, &["--gpu", "rtx-4090"]].concat();
        let asked = [&base[..], &["--context", "8192", "--concurrency", "2"]].concat();
        let a = json("max-batch", "llama-3.1-8b", &asked);
        assert_eq!(a["schema"], "vramfit.serve-answers/1");
        let n = a["max_context"].as_u64().unwrap();
        let c = a["max_concurrency"].as_u64().unwrap();
        let at = |ctx: u64, seqs: u64| {
            let (ctx, seqs) = (ctx.to_string(), seqs.to_string());
            let args = [&base[..], &["--context", &ctx, "--concurrency", &seqs]].concat();
            fits("llama-3.1-8b", &args)
        };
        assert!(at(n, 2), "{engine:?}: {n} tokens × 2");
        assert!(!at(n + 1, 2), "{engine:?}: {} tokens × 2", n + 1);
        assert!(at(8192, c), "{engine:?}: 8192 × {c}");
        assert!(!at(8192, c + 1), "{engine:?}: 8192 × {}", c + 1);
    }
}

#[test]
fn vllm_answers_llama_3_8b_on_an_rtx_4090_as_its_pool_says() {
    // Llama-3.1-8B (Llama-3-8B's shapes, 131,072 tokens of context):
    // 49,728 KV tokens (777 blocks of 64): 6.07 sequences of 8192 tokens,
    // and 24,832 tokens (388 blocks) for each of two.
    let a = json(
        "max-batch",
        "llama-3.1-8b",
        &[
            "--engine",
            "vllm",
            "--gpu",
            "rtx-4090",
            "--context",
            "8192",
            "--concurrency",
            "2",
        ],
    );
    assert_eq!(a["max_context"], 24_832);
    assert_eq!(a["max_concurrency"], 6);
    assert_eq!(a["fewest_gpus"], 1);
    let table = stdout(&vramfit(&[
        "max-batch",
        "--model",
        "llama-3.1-8b",
        "--mode",
        "inference",
        "--engine",
        "vllm",
        "--gpu",
        "rtx-4090",
        "--context",
        "8192",
        "--concurrency",
        "2",
    ]));
    assert!(
        table.contains("longest context at 2 sequence(s): 24832 tokens"),
        "{table}"
    );
    assert!(
        table.contains("most sequences of 8192 tokens: 6"),
        "{table}"
    );
}

#[test]
fn the_fewest_gpus_fit_and_half_as_many_do_not() {
    let base = [
        "--engine",
        "vllm",
        "--gpu",
        "h100-sxm",
        "--context",
        "8192",
        "--concurrency",
        "4",
    ];
    let a = json("max-batch", "llama-3-70b", &base);
    assert_eq!(a["tp_degrees"], serde_json::json!([1, 2, 4, 8]));
    assert_eq!(a["fewest_gpus"], 4);
    assert!(fits(
        "llama-3-70b",
        &[&base[..], &["--tp", "4", "--gpus-per-node", "4"]].concat()
    ));
    assert!(!fits(
        "llama-3-70b",
        &[&base[..], &["--tp", "2", "--gpus-per-node", "2"]].concat()
    ));
    // llama.cpp splits the layers over 1, 2, 4 or 8 GPUs: 70B Q4_K_M at this
    // context fits on none alone, on two (24 GiB each).
    let l = json(
        "max-batch",
        "llama-3-70b",
        &[
            "--engine",
            "llama.cpp",
            "--weights",
            "q4_k_m",
            "--gpu",
            "rtx-4090",
        ],
    );
    assert_eq!(l["tp_degrees"], serde_json::json!([1, 2, 4, 8]));
    assert!(l["fewest_gpus"].as_u64().is_some_and(|n| n > 1), "{l}");
}

#[test]
fn max_batch_refuses_a_margin_for_an_engine() {
    let out = vramfit(&[
        "max-batch",
        "--model",
        "llama-3-8b",
        "--mode",
        "inference",
        "--engine",
        "vllm",
        "--gpu",
        "rtx-4090",
        "--margin",
        "0.1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--gpu-memory-utilization"));
}

#[test]
fn decode_tokens_per_s_is_bandwidth_over_the_bytes_a_step_reads() {
    // H100 SXM: 3,350 GB/s.
    let v = json(
        "estimate",
        "llama-3-8b",
        &[
            "--engine",
            "vllm",
            "--gpu",
            "h100-sxm",
            "--context",
            "8192",
            "--concurrency",
            "4",
        ],
    );
    let bytes = v["decode_bytes_per_step"].as_u64().unwrap() as f64;
    let tps = v["decode_tokens_per_s_estimate"].as_f64().unwrap();
    assert!((tps - 3350e9 / bytes * 4.0).abs() < 1e-6, "{tps} {bytes}");
    // 16-bit weights less the untied embedding (15.0 GB) and 4 × 8192 tokens at 128 KiB.
    assert_eq!(
        bytes as u64,
        16_060_522_496 - 128_256 * 4096 * 2 + 4 * 8192 * 131_072
    );
    // Layers left in host memory run at the CPU's speed: no estimate.
    let host = json(
        "estimate",
        "llama-3-8b",
        &[
            "--engine",
            "llama.cpp",
            "--weights",
            "q4_k_m",
            "--gpu",
            "h100-sxm",
            "--gpu-layers",
            "16",
        ],
    );
    assert!(host["decode_tokens_per_s_estimate"].is_null(), "{host}");
    let table = stdout(&vramfit(&[
        "estimate",
        "--model",
        "llama-3-8b",
        "--mode",
        "inference",
        "--engine",
        "vllm",
        "--gpu",
        "h100-sxm",
    ]));
    assert!(table.contains("tokens/s (estimate:"), "{table}");
}

/// The longest context stops at the model's limit: Llama-3-8B's
/// config.json allows 8192 tokens, which fit an H100 many times over.
#[test]
fn the_longest_context_stops_at_the_models_limit() {
    let a = json(
        "max-batch",
        "llama-3-8b",
        &["--engine", "vllm", "--gpu", "h100-sxm", "--context", "4096"],
    );
    assert_eq!(
        (a["max_context"].as_u64(), a["context_limit"].as_u64()),
        (Some(8192), Some(8192))
    );
}
