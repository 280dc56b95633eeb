//! The `vramfit` binary run as a subprocess: the JSON contract and bad input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use std::process::{Command, Output};

fn vramfit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(args)
        .output()
        .expect("run vramfit")
}

/// `vramfit estimate --model gpt2 ARGS` exits 2 with a message containing `needle`.
fn rejects_gpt2_estimate(args: &[&str], needle: &str) {
    let mut full = vec!["estimate", "--model", "gpt2"];
    full.extend_from_slice(args);
    let out = vramfit(&full);
    assert_eq!(out.status.code(), Some(2), "{full:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(needle), "{full:?}: {err}");
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = vramfit(args);
    assert!(
        out.status.success(),
        "vramfit {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

#[test]
fn estimate_json_has_the_contract_fields() {
    let v = json(&[
        "estimate",
        "--model",
        "resnet50",
        "--batch",
        "32",
        "--gpu",
        "rtx-3060-12gb",
        "--json",
    ]);
    assert_eq!(v["schema"], "vramfit.estimate/1");
    assert_eq!(v["parameter_count"], 25_557_032);
    let peak = v["peak_allocated_bytes"].as_u64().unwrap();
    let reserved = v["peak_reserved_bytes"].as_u64().unwrap();
    let device = v["device_used_bytes"].as_u64().unwrap();
    assert!(
        peak > 25_557_032 * 4 * 3,
        "peak {peak} below weights + grads + momentum"
    );
    assert!(
        reserved >= peak && device > reserved,
        "{peak} <= {reserved} < {device}"
    );
    assert!(["forward", "backward", "optimizer"].contains(&v["peak_phase"].as_str().unwrap()));
    let parts = &v["at_peak"];
    let sum: u64 = [
        "parameters",
        "gradients",
        "optimizer_states",
        "activations",
        "temporary",
        "other",
    ]
    .iter()
    .map(|k| {
        parts[*k]
            .as_u64()
            .unwrap_or_else(|| panic!("at_peak.{k} missing"))
    })
    .sum();
    assert_eq!(sum, peak, "at_peak parts must add up to the peak");
    assert_eq!(v["gpu"]["id"], "rtx-3060-12gb");
    assert_eq!(v["gpu"]["memory_bytes"], 12u64 << 30);
    assert!(v["gpu"]["fits"].is_boolean());
    assert!(v["gpu"]["max_batch"].as_u64().unwrap() >= 32);
    assert!(!v["timeline"].as_array().unwrap().is_empty());
    assert!(!v["layers"].as_array().unwrap().is_empty());
}

#[test]
fn bigger_batch_means_more_memory() {
    let small = json(&[
        "estimate", "--model", "gpt2", "--batch", "1", "--seq", "256", "--json",
    ]);
    let large = json(&[
        "estimate", "--model", "gpt2", "--batch", "4", "--seq", "256", "--json",
    ]);
    assert!(large["peak_allocated_bytes"].as_u64() > small["peak_allocated_bytes"].as_u64());
}

#[test]
fn hf_config_file_is_accepted() {
    let dir = std::env::temp_dir().join(format!("vramfit-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json");
    std::fs::write(
        &path,
        r#"{"model_type":"llama","vocab_size":32000,"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"intermediate_size":11008}"#,
    )
    .unwrap();
    let v = json(&[
        "estimate",
        "--model",
        path.to_str().unwrap(),
        "--batch",
        "1",
        "--seq",
        "128",
        "--json",
    ]);
    assert_eq!(v["parameter_count"], 6_738_415_616u64);
    // Another model_type with the same fields: the same model, each
    // assumption a warning on stderr, stdout still one JSON object.
    let other = dir.join("internlm3.json");
    std::fs::write(
        &other,
        r#"{"model_type":"internlm3","vocab_size":32000,"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"intermediate_size":11008,"mlp_bias":false}"#,
    )
    .unwrap();
    let args = [
        "estimate",
        "--model",
        other.to_str().unwrap(),
        "--batch",
        "1",
        "--seq",
        "128",
        "--json",
    ];
    assert_eq!(json(&args)["parameter_count"], 6_738_415_616u64);
    let err = String::from_utf8_lossy(&vramfit(&args).stderr).to_string();
    for needle in [
        "warning: model_type 'internlm3' is read as a Llama-style decoder",
        "warning: head_dim = hidden_size / num_attention_heads = 128",
        "warning: num_key_value_heads = num_attention_heads = 32",
        "warning: a separate LM head",
        "warning: not read: mlp_bias",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
}

#[test]
fn bad_values_name_the_flag_and_accepted_values_with_exit_code_2() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["estimate", "--model", "gpt2", "--precision", "fp64"],
            &["--precision", "amp-bf16"],
        ),
        (
            &["estimate", "--model", "gpt2", "--optimizer", "rmsprop"],
            &["--optimizer", "adamw-8bit"],
        ),
        (
            &["estimate", "--model", "gpt2", "--batch", "abc"],
            &["--batch", "whole number"],
        ),
        (
            &["estimate", "--model", "gpt2", "--batch", "0"],
            &["batch", "1.."],
        ),
        (
            &["estimate", "--model", "gpt2", "--checkpointing", "every-0"],
            &["--checkpointing", "every-K"],
        ),
        (
            &["estimate", "--model", "gpt2", "--frobnicate", "1"],
            &["--frobnicate", "--model"],
        ),
        (
            &["estimate", "--model", "not-a-model"],
            &["not-a-model", "presets"],
        ),
        (
            &["estimate", "--model", "gpt2", "--gpu", "rtx-9090"],
            &["rtx-9090"],
        ),
        (&["estimate", "--batch", "2"], &["--model"]),
        (
            &["estimate", "--model", "gpt2", "--seq", "4096"],
            &["4096", "positions"],
        ),
    ];
    for (args, needles) in cases {
        let out = vramfit(args);
        assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: one line expected, got {err}"
        );
        for n in *needles {
            assert!(err.contains(n), "{args:?}: '{err}' should mention '{n}'");
        }
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    }
}

#[test]
fn presets_lists_models_and_gpus() {
    let v = json(&["presets", "--json"]);
    let models = v["models"].as_array().unwrap();
    assert!(
        models
            .iter()
            .any(|m| m["id"] == "llama-3-70b" && m["parameter_count"] == 70_553_706_496u64)
    );
    assert!(
        v["gpus"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["id"] == "h100-sxm")
    );
    let text = vramfit(&["presets"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("resnet50"));
}

#[test]
fn table_output_is_readable() {
    let out = vramfit(&[
        "estimate",
        "--model",
        "bert-base",
        "--batch",
        "8",
        "--seq",
        "128",
        "--gpu",
        "t4",
    ]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "109,483,778 parameters",
        "peak allocated (PyTorch)",
        "device used (nvidia-smi)",
        "t4:",
    ] {
        assert!(s.contains(needle), "missing '{needle}' in:\n{s}");
    }
}

/// The training loop's settings that differ from the defaults are named,
/// as flags, under the configuration line; a default loop adds no line.
#[test]
fn the_table_names_a_training_loop_that_is_not_the_default() {
    let text = |extra: &[&str]| {
        let mut args = vec!["estimate", "--model", "bert-base", "--seq", "128"];
        args.extend_from_slice(extra);
        let out = vramfit(&args);
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(!text(&[]).contains("training loop:"));
    let old = text(&[
        "--zero-grad",
        "zeros",
        "--pytorch",
        "1.10",
        "--optimizer-impl",
        "loop",
    ]);
    assert!(
        old.contains("training loop: --optimizer-impl loop, --zero-grad zeros, --pytorch 1.10\n"),
        "{old}"
    );
}

#[test]
fn overheads_follow_the_gpu_and_the_flags() {
    let base = ["estimate", "--model", "resnet18", "--batch", "4", "--json"];
    let get = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        json(&args)
    };
    let a100 = get(&["--gpu", "a100-80gb"]);
    let h100 = get(&["--gpu", "h100-sxm"]);
    // Two cuBLAS workspaces (forward and autograd threads): 32 MiB each on Hopper, 8.125 MiB before.
    let delta = h100["peak_allocated_bytes"].as_u64().unwrap()
        - a100["peak_allocated_bytes"].as_u64().unwrap();
    assert_eq!(delta, 2 * (32 * 1024 * 1024 - 8_519_680));
    let eager = get(&["--gpu", "a100-80gb", "--cuda-loading", "eager"]);
    let d =
        eager["device_used_bytes"].as_u64().unwrap() - a100["device_used_bytes"].as_u64().unwrap();
    // On an A100 (108 SMs × 2048 threads × 1 KiB of stack = 216 MiB in both):
    // 1077 + 216 MiB eager vs 173 + 216 MiB lazy.
    assert_eq!(
        d,
        (1077 - 173) * 1024 * 1024,
        "eager context 1293 MiB vs lazy 389 MiB"
    );
    assert_eq!(a100["overheads"]["cuda_context"], 389u64 * 1024 * 1024);
    let custom = get(&["--cuda-context-mib", "123"]);
    assert_eq!(custom["overheads"]["cuda_context"], 123u64 * 1024 * 1024);
    let out = vramfit(&["estimate", "--model", "gpt2", "--cuda-loading", "sometimes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lazy|eager"));
}

#[test]
fn data_parallel_flags_shard_memory_and_report_host_ram() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "estimate",
            "--model",
            "gpt2-medium",
            "--batch",
            "2",
            "--seq",
            "256",
            "--precision",
            "bf16",
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&args)
    };
    let single = run(&[]);
    let zero2 = run(&[
        "--strategy",
        "zero2",
        "--gpus-per-node",
        "8",
        "--zero-bucket",
        "1048576",
    ]);
    let offload = run(&[
        "--strategy",
        "zero3",
        "--gpus-per-node",
        "8",
        "--offload",
        "optimizer+params",
    ]);
    assert!(zero2["peak_allocated_bytes"].as_u64() < single["peak_allocated_bytes"].as_u64());
    assert_eq!(zero2["config"]["parallel"]["strategy"], "zero2");
    assert!(zero2["deepspeed_estimate"]["gpu_bytes"].as_u64().unwrap() > 0);
    assert_eq!(single["host_ram_bytes"], 0);
    assert!(offload["host_ram_bytes"].as_u64().unwrap() > 0);
    for (args, needle) in [
        (vec!["--strategy", "zero4"], "--strategy"),
        (
            vec![
                "--strategy",
                "ddp",
                "--gpus-per-node",
                "4",
                "--offload",
                "optimizer",
            ],
            "offload",
        ),
        (vec!["--nodes", "0"], "nodes"),
    ] {
        rejects_gpt2_estimate(&args, needle);
    }
}

#[test]
fn inference_and_lora_modes() {
    let v = json(&[
        "estimate",
        "--model",
        "llama-2-7b",
        "--mode",
        "inference",
        "--precision",
        "fp16",
        "--batch",
        "1",
        "--seq",
        "4096",
        "--json",
    ]);
    // 0.5 MiB of fp16 K and V per token for Llama-2-7B.
    assert_eq!(v["at_peak"]["kv_cache"], 4096u64 * 512 * 1024);
    assert_eq!(v["peak_phase"], "forward");
    let lora = json(&[
        "estimate",
        "--model",
        "llama-2-7b",
        "--mode",
        "finetune-lora",
        "--lora-rank",
        "8",
        "--precision",
        "bf16",
        "--batch",
        "1",
        "--seq",
        "256",
        "--json",
    ]);
    assert_eq!(lora["trainable_parameter_count"], 19_988_480u64);
    let out = vramfit(&["estimate", "--model", "gpt2", "--weights", "int4"]);
    assert_eq!(out.status.code(), Some(2));
    let out = vramfit(&["estimate", "--model", "gpt2", "--mode", "serve"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("inference"));
}

#[test]
fn lora_on_a_4090_fits_with_its_base_in_bf16_as_people_launch_it() {
    let args = [
        "estimate",
        "--model",
        "llama-2-7b",
        "--mode",
        "lora",
        "--batch",
        "1",
        "--seq",
        "1024",
        "--precision",
        "amp-bf16",
        "--gpu",
        "rtx-4090",
        "--json",
    ];
    let v = json(&args);
    assert_eq!(v["config"]["mode"], "finetune-lora");
    assert_eq!(v["config"]["attention"], "sdpa");
    assert_eq!(v["config"]["lora_base"], "compute");
    // 6,738,415,616 frozen weights in bf16, 39,976,960 adapter weights in fp32.
    assert_eq!(
        v["at_peak"]["parameters"],
        6_738_415_616u64 * 2 + 39_976_960 * 4
    );
    assert_eq!(v["gpu"]["fits"], true, "{}", v["device_used_bytes"]);
    // The fp32 base (and eager attention, as before) is one flag away, and does not fit.
    let mut old = args.to_vec();
    old.extend(["--lora-base", "fp32", "--attention", "eager"]);
    let v = json(&old);
    assert_eq!(
        v["at_peak"]["parameters"],
        6_738_415_616u64 * 4 + 39_976_960 * 4
    );
    assert_eq!(v["gpu"]["fits"], false);
    // `--mode qlora` is read as finetune-qlora.
    let mut q = args.to_vec();
    q[4] = "qlora";
    assert_eq!(json(&q)["config"]["mode"], "finetune-qlora");
}

#[test]
fn bf16_on_a_gpu_without_it_and_apples_working_set_are_named() {
    let out = stdout(&[
        "estimate",
        "--model",
        "gpt2",
        "--precision",
        "amp-bf16",
        "--gpu",
        "t4",
    ]);
    assert!(
        out.contains("warning: t4 has no bf16 matrix math")
            && out.contains("use --precision amp-fp16"),
        "{out}"
    );
    let v = json(&[
        "estimate",
        "--model",
        "gpt2",
        "--precision",
        "bf16",
        "--gpu",
        "v100-16gb",
        "--json",
    ]);
    assert_eq!(v["gpu"]["without_bf16"], "fp16");
    let out = stdout(&["estimate", "--model", "gpt2", "--gpu", "apple-m1"]);
    assert!(
        out.contains("macOS lets the GPU use 2/3 of the unified memory"),
        "{out}"
    );
    assert!(out.contains("apple-m1: fits in 10.7 GiB usable"), "{out}");
    let v = json(&["estimate", "--model", "gpt2", "--gpu", "apple-m1", "--json"]);
    assert_eq!(v["gpu"]["limit"]["kind"], "working-set");
    assert!(v["gpu"]["margin_batch"].as_u64().unwrap() <= v["gpu"]["max_batch"].as_u64().unwrap());
}

#[test]
fn megatron_and_fine_tuning_flags() {
    let v = json(&[
        "estimate",
        "--model",
        "llama-2-7b",
        "--batch",
        "1",
        "--seq",
        "1024",
        "--precision",
        "bf16",
        "--gpus-per-node",
        "8",
        "--tp",
        "4",
        "--pp",
        "2",
        "--sp",
        "on",
        "--grad-accum",
        "4",
        "--json",
    ]);
    assert_eq!(v["parameter_count"], 6_738_415_616u64);
    assert!(v["rank_note"].as_str().unwrap().contains("stage 0 of 2"));
    let frozen = json(&[
        "estimate",
        "--model",
        "gpt2",
        "--freeze",
        "6",
        "--keep-mlp",
        "0.5",
        "--json",
    ]);
    assert!(frozen["trainable_parameter_count"].as_u64() < frozen["parameter_count"].as_u64());
    let inf = json(&[
        "estimate",
        "--model",
        "gpt2",
        "--mode",
        "inference",
        "--weights",
        "fp16",
        "--json",
    ]);
    assert_eq!(inf["config"]["precision"], "fp16");
    let table = vramfit(&[
        "estimate",
        "--model",
        "gpt2",
        "--strategy",
        "zero3",
        "--gpus-per-node",
        "4",
        "--offload",
        "optimizer",
    ]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("DeepSpeed's own estimator") && text.contains("leaves out activations"),
        "{text}"
    );
    assert!(text.contains("host RAM"), "{text}");
    for (args, needle) in [
        (vec!["--tp", "3", "--gpus-per-node", "8"], "tp"),
        (vec!["--sp", "on"], "tensor parallelism"),
        (vec!["--keep-attention", "1.5"], "--keep-attention"),
        (vec!["--weights", "int3"], "--weights"),
    ] {
        rejects_gpt2_estimate(&args, needle);
    }
}

#[test]
fn inference_reports_the_longest_context_and_ddp_bucket_views_save_a_copy() {
    let v = json(&[
        "estimate",
        "--model",
        "llama-3-8b",
        "--mode",
        "inference",
        "--precision",
        "bf16",
        "--batch",
        "1",
        "--seq",
        "1024",
        "--attention",
        "flash",
        "--gpu",
        "rtx-4090",
        "--json",
    ]);
    let ctx = v["gpu"]["max_context"].as_u64().unwrap();
    // 24 GiB minus 15 GiB of bf16 weights leaves roughly 8 GiB for 128 KiB per token.
    assert!((50_000..80_000).contains(&ctx), "{ctx}");
    let ddp = json(&[
        "estimate",
        "--model",
        "gpt2",
        "--strategy",
        "ddp",
        "--gpus-per-node",
        "4",
        "--json",
    ]);
    let view = json(&[
        "estimate",
        "--model",
        "gpt2",
        "--strategy",
        "ddp",
        "--gpus-per-node",
        "4",
        "--ddp-bucket-view",
        "--json",
    ]);
    let saved = ddp["peak_allocated_bytes"].as_u64().unwrap()
        - view["peak_allocated_bytes"].as_u64().unwrap();
    // One fp32 copy of GPT-2's gradients (124,439,808 parameters, each tensor rounded to 512 B).
    assert!(
        (124_439_808 * 4..124_439_808 * 4 + 200 * 512).contains(&saved),
        "{saved}"
    );
}

#[test]
fn plan_and_max_batch_commands() {
    let v = json(&[
        "plan",
        "--model",
        "bert-base",
        "--seq",
        "128",
        "--gpu",
        "t4",
        "--target-batch",
        "64",
        "--json",
    ]);
    assert_eq!(v["schema"], "vramfit.plan/1");
    assert!(!v["result"]["plans"].as_array().unwrap().is_empty());
    assert!(
        v["advice"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == "lr-scaling")
    );
    let ds = vramfit(&[
        "plan",
        "--model",
        "bert-base",
        "--seq",
        "128",
        "--gpu",
        "t4",
        "--target-batch",
        "64",
        "--export",
        "deepspeed",
    ]);
    let cfg: serde_json::Value = serde_json::from_slice(&ds.stdout).expect("ds_config.json parses");
    assert_eq!(cfg["train_batch_size"], 64);
    let py = vramfit(&[
        "plan",
        "--model",
        "bert-base",
        "--seq",
        "128",
        "--gpu",
        "t4",
        "--target-batch",
        "64",
        "--export",
        "pytorch",
    ]);
    assert!(String::from_utf8_lossy(&py.stdout).contains("optimizer.zero_grad(set_to_none=True)"));
    let mb = json(&[
        "max-batch",
        "--model",
        "resnet50",
        "--gpu",
        "a100-80gb",
        "--json",
    ]);
    assert!(mb["max_batch"].as_u64().unwrap() > 64);
    let out = vramfit(&["plan", "--model", "gpt2", "--gpu", "t4"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--target-batch"));
    let out = vramfit(&[
        "plan",
        "--model",
        "gpt2",
        "--gpu",
        "t4",
        "--target-batch",
        "8",
        "--export",
        "yaml",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("deepspeed|hf|accelerate|pytorch"));
}

#[test]
fn max_batch_keeps_a_margin_and_names_the_longest_sequence_and_largest_image() {
    let full = json(&[
        "max-batch",
        "--model",
        "gpt2",
        "--gpu",
        "rtx-3060-12gb",
        "--batch",
        "16",
        "--json",
    ]);
    let kept = json(&[
        "max-batch",
        "--model",
        "gpt2",
        "--gpu",
        "rtx-3060-12gb",
        "--batch",
        "16",
        "--margin",
        "0.2",
        "--json",
    ]);
    assert_eq!(
        full["margin"].as_f64(),
        Some(0.0),
        "no --margin: the whole usable memory"
    );
    assert!(kept["usable_bytes"].as_u64().unwrap() < full["usable_bytes"].as_u64().unwrap());
    assert!(kept["max_batch"].as_u64().unwrap() < full["max_batch"].as_u64().unwrap());
    // At batch 16 GPT-2 on 12 GB fits only a shorter sequence than the default 512.
    let longest = full["max_seq"].as_u64().unwrap();
    assert!((1..512).contains(&longest), "{longest}");
    assert!(kept["max_seq"].as_u64().unwrap() < longest);
    assert_eq!(full["batch"].as_u64(), Some(16));
    let text = String::from_utf8(
        vramfit(&[
            "max-batch",
            "--model",
            "resnet50",
            "--gpu",
            "rtx-3060-12gb",
            "--batch",
            "64",
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        text.contains("largest image that fits at micro-batch 64: "),
        "{text}"
    );
    // Feature vectors have no input size to grow.
    let mlp = json(&[
        "max-batch",
        "--model",
        "mlp-small",
        "--gpu",
        "rtx-4090",
        "--json",
    ]);
    assert!(
        mlp.get("max_seq").is_none() && mlp.get("max_image").is_none(),
        "{mlp}"
    );
    // A GPU given by its memory.
    let custom = json(&[
        "max-batch",
        "--model",
        "gpt2",
        "--gpu",
        "custom-48",
        "--json",
    ]);
    assert_eq!(
        (custom["gpu"].as_str(), custom["usable_bytes"].as_u64()),
        (Some("custom-48"), Some(48 << 30))
    );
    let unknown = vramfit(&["max-batch", "--model", "gpt2", "--gpu", "custom-0"]);
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("custom-<GiB>"));
    let out = vramfit(&[
        "max-batch",
        "--model",
        "gpt2",
        "--gpu",
        "rtx-4090",
        "--target-batch",
        "4",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("unknown flag '--target-batch' for max-batch")
    );
}

#[test]
fn plan_prices_steps_at_a_bench_reports_measured_throughput() {
    let dir = std::env::temp_dir().join(format!("vramfit-cli-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("bench.json");
    // What `vramfit bench --json` writes, reduced to the part plan reads.
    std::fs::write(&report, r#"{"schema": "vramfit.bench/1", "throughput": {"fp32_flops_per_s": 1e12, "fp16_flops_per_s": 2e12}}"#)
        .unwrap();
    let args = [
        "plan",
        "--model",
        "gpt2",
        "--seq",
        "256",
        "--gpu",
        "rtx-4090",
        "--target-batch",
        "16",
        "--json",
    ];
    let step = |v: &serde_json::Value| v["result"]["plans"][0]["step_seconds"].as_f64().unwrap();
    let datasheet = json(&args);
    let path = report.to_string_lossy().to_string();
    let measured = json(&[&args[..], &["--bench-report", &path]].concat());
    assert!(
        step(&measured) > 5.0 * step(&datasheet),
        "{} vs {}",
        step(&measured),
        step(&datasheet)
    );
    // A report without layers (no throughput) and a missing file say what to do.
    std::fs::write(&report, r#"{"schema": "vramfit.bench/1", "kernels": []}"#).unwrap();
    let out = vramfit(&[&args[..], &["--bench-report", &path]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no measured throughput"));
    let out = vramfit(&[&args[..], &["--bench-report", "/nonexistent/bench.json"]].concat());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read --bench-report"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn gpus_lists_where_a_config_fits_smallest_first() {
    let v = json(&[
        "gpus",
        "--model",
        "llama-2-7b",
        "--precision",
        "bf16",
        "--batch",
        "1",
        "--seq",
        "512",
        "--attention",
        "flash",
        "--json",
    ]);
    let opts = v["options"].as_array().unwrap();
    assert!(!opts.is_empty());
    // Full bf16 training of a 7B model needs more than one 24 GB card.
    assert!(
        !opts
            .iter()
            .any(|o| o["gpu"] == "rtx-4090" && o["gpus"] == 1)
    );
    assert!(
        opts.iter()
            .any(|o| o["gpu"] == "a100-80gb" && o["gpus"] == 1)
    );
    let mem: Vec<u64> = opts
        .iter()
        .map(|o| o["memory_bytes"].as_u64().unwrap() * o["gpus"].as_u64().unwrap())
        .collect();
    assert!(mem.windows(2).all(|w| w[0] <= w[1]), "smallest first");
}

fn stdout(args: &[&str]) -> String {
    let out = vramfit(args);
    assert!(
        out.status.success(),
        "vramfit {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The two estimates are equal; on failure, shows the headline fields only.
fn same_estimate(a: &serde_json::Value, b: &serde_json::Value) {
    let head = |v: &serde_json::Value| {
        [
            "config",
            "gpu",
            "parameter_count",
            "peak_allocated_bytes",
            "peak_reserved_bytes",
            "device_used_bytes",
        ]
        .map(|k| v[k].to_string())
    };
    assert!(a == b, "estimates differ:\n{:?}\n{:?}", head(a), head(b));
}

#[test]
fn url_prints_the_share_link_and_from_url_reproduces_the_estimate() {
    let flags = [
        "--model",
        "bert-large",
        "--batch",
        "4",
        "--seq",
        "384",
        "--precision",
        "amp-fp16",
        "--optimizer",
        "adamw-8bit",
        "--checkpointing",
        "every-2",
        "--attention",
        "sdpa",
        "--gpu",
        "rtx-3060-12gb",
    ];
    let link = stdout(&[&["estimate"], &flags[..], &["--url"]].concat());
    assert_eq!(
        link.trim(),
        "https://vramfit.github.io/vramfit/?v=2&m=bert-large&g=rtx-3060-12gb&b=4&s=384&p=amp-fp16&o=adamw-8bit&c=every-2"
    );
    let direct = json(&[&["estimate"], &flags[..], &["--json"]].concat());
    let linked = json(&["estimate", "--from-url", link.trim(), "--json"]);
    same_estimate(&direct, &linked);
    // Flags after (or before) the link override it.
    let larger = json(&[
        "estimate",
        "--batch",
        "8",
        "--from-url",
        link.trim(),
        "--json",
    ]);
    assert_eq!(larger["config"]["batch"], 8);
    let base = stdout(&[
        "estimate",
        "--from-url",
        link.trim(),
        "--base-url",
        "https://docs.example/calc/",
        "--url",
    ]);
    assert_eq!(
        base.trim(),
        link.trim().replace(
            "https://vramfit.github.io/vramfit/",
            "https://docs.example/calc/"
        )
    );
}

#[test]
fn scale_out_and_fine_tuning_settings_travel_in_the_link() {
    let flags = [
        "--model",
        "llama-2-7b",
        "--batch",
        "2",
        "--seq",
        "1024",
        "--precision",
        "bf16",
        "--strategy",
        "zero3",
        "--gpus-per-node",
        "8",
        "--offload",
        "optimizer",
        "--mode",
        "finetune-lora",
        "--lora-rank",
        "8",
        "--gpu",
        "a100-40gb",
        "--sp",
        "off",
    ];
    let link = stdout(&[&["estimate"], &flags[..], &["--url"]].concat());
    assert!(
        link.contains("&st=zero3&gn=8&of=optimizer") && link.contains("&mo=finetune-lora&r=8"),
        "{link}"
    );
    same_estimate(
        &json(&[&["estimate"], &flags[..], &["--json"]].concat()),
        &json(&["estimate", "--from-url", link.trim(), "--json"]),
    );
}

#[test]
fn a_config_json_file_travels_packed_in_the_link() {
    let dir = std::env::temp_dir().join(format!("vramfit-cli-url-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json");
    std::fs::write(
        &path,
        r#"{"model_type":"llama","vocab_size":32000,"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,
            "intermediate_size":11008,"torch_dtype":"float16","_name_or_path":"meta-llama/Llama-2-7b-hf"}"#,
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let link = stdout(&[
        "estimate", "--model", p, "--batch", "1", "--seq", "128", "--gpu", "h200", "--url",
    ]);
    assert!(link.contains("&j=1") && !link.contains("m="), "{link}");
    let direct = json(&[
        "estimate", "--model", p, "--batch", "1", "--seq", "128", "--gpu", "h200", "--json",
    ]);
    same_estimate(
        &direct,
        &json(&["estimate", "--from-url", link.trim(), "--json"]),
    );
    assert_eq!(direct["parameter_count"], 6_738_415_616u64);
}

#[test]
fn a_bad_link_warns_on_stderr_and_uses_defaults() {
    let out = vramfit(&[
        "estimate",
        "--from-url",
        "https://x/?m=gpt-5&b=abc&b=3&zz=1&s=128",
        "--json",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].starts_with("vramfit: warning: the link's ignored m=gpt-5: no model preset"),
        "{err}"
    );
    assert!(
        lines[1].contains("b=abc") && lines[2].contains("repeated b=3"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["config"]["batch"].as_u64(), v["config"]["seq"].as_u64()),
        (Some(8), Some(128))
    );
    assert_eq!(v["gpu"]["id"], "rtx-4090", "the page's default GPU");
    for (args, needle) in [
        (
            &["estimate", "--model", "gpt2", "--url", "--json"][..],
            "choose one",
        ),
        (
            &[
                "plan",
                "--model",
                "gpt2",
                "--gpu",
                "h100-sxm",
                "--target-batch",
                "8",
                "--url",
            ][..],
            "--url is for estimate",
        ),
        (
            &[
                "estimate",
                "--model",
                "gpt2",
                "--cuda-context-mib",
                "500",
                "--url",
            ][..],
            "overhead",
        ),
        (
            &[
                "estimate",
                "--model",
                "gpt2",
                "--base-url",
                "javascript:alert(1)",
                "--url",
            ][..],
            "--base-url",
        ),
        (&["estimate", "--from-url"][..], "--from-url needs a value"),
    ] {
        let out = vramfit(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(needle),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn saturated_byte_counts_are_labelled_not_printed_as_numbers() {
    // A 70B model's KV cache for 2^24 sequences of 2^24 tokens: more than 2^64 bytes.
    let args = [
        "estimate",
        "--model",
        "llama-2-70b",
        "--mode",
        "inference",
        "--batch",
        "16777216",
        "--context",
        "16777216",
        "--gpu",
        "h200",
    ];
    let out = vramfit(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("> 16 EiB") && s.contains("saturated"), "{s}");
    assert!(!s.contains("16777216 TiB"), "{s}");
}

#[test]
fn absurd_flag_values_are_refused_with_the_range() {
    for (flag, value, needle) in [
        ("--batch", "1099511627776", "1..=16777216"),
        ("--seq", "0", "1..=16777216"),
        ("--grad-accum", "0", "1..=65536"),
    ] {
        rejects_gpt2_estimate(&[flag, value], needle);
    }
    rejects_gpt2_estimate(&["--batch", "18446744073709551616"], "whole number");
    rejects_gpt2_estimate(&["--keep-mlp", "NaN"], "fraction");
    rejects_gpt2_estimate(&["--memory-fraction", "inf"], "(0, 1]");
}

#[test]
fn zero_bucket_out_of_range_is_a_usage_error() {
    rejects_gpt2_estimate(
        &[
            "--strategy",
            "zero3",
            "--gpus-per-node",
            "2",
            "--zero-bucket",
            "18446744073709551615",
        ],
        "--zero-bucket",
    );
}

/// A mixture of experts reports every parameter (memory holds them all)
/// and, apart, the ones a token runs through (transformers' count:
/// tests/reference/moe_active_params.csv).
#[test]
fn a_mixture_of_experts_reports_total_and_active_parameters() {
    let args = [
        "estimate",
        "--model",
        "mixtral-8x7b",
        "--batch",
        "1",
        "--seq",
        "128",
    ];
    let v = json(&[&args[..], &["--json"]].concat());
    assert_eq!(v["parameter_count"], 46_702_792_704_u64);
    assert_eq!(v["active_parameter_count"], 12_879_925_248_u64);
    let dense = json(&["estimate", "--model", "gpt2", "--batch", "1", "--json"]);
    assert_eq!(dense["active_parameter_count"], dense["parameter_count"]);
    let out = vramfit(&args);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("46,702,792,704 parameters, 12,879,925,248 active per token"),
        "{table}"
    );
    // The routing note: what the experts keep, and drop-and-pad's quarter more.
    let r = &v["routing"];
    let (kept, padded) = (
        r["expert_activation_bytes"].as_u64().unwrap(),
        r["padded_extra_bytes"].as_u64().unwrap(),
    );
    assert!(
        kept > 0 && padded == (kept as f64 * 0.25).round() as u64,
        "{r}"
    );
    assert!(
        table.contains("tokens × top-k rows whatever the routing")
            && table.contains("capacity factor 1.25"),
        "{table}"
    );
    assert!(dense["routing"].is_null());
}

/// `--ep 8` on 8 GPUs: one GPU holds Mixtral-8x7B's 1,605,636,096
/// parameters outside its experts and one of each layer's 8 experts
/// (32 × 3 × 4096 × 14,336); the table says so; a dense model refuses.
#[test]
fn expert_parallelism_reports_the_parameters_one_gpu_holds() {
    let args = [
        "estimate",
        "--model",
        "mixtral-8x7b",
        "--batch",
        "1",
        "--seq",
        "128",
        "--gpus-per-node",
        "8",
        "--strategy",
        "ddp",
        "--ep",
        "8",
    ];
    let v = json(&[&args[..], &["--json"]].concat());
    assert_eq!(v["parameters_per_gpu"], 7_242_780_672_u64);
    assert_eq!(v["parameter_count"], 46_702_792_704_u64);
    let table = String::from_utf8(vramfit(&args).stdout).unwrap();
    assert!(
        table.contains("per GPU: 7,242,780,672 parameters"),
        "{table}"
    );
    rejects_gpt2_estimate(
        &["--gpus-per-node", "2", "--ep", "2"],
        "expert parallelism (ep = 2) needs a model with experts",
    );
}

/// Inference's summary line names the KV cache, not the training settings
/// (optimizer, accumulation, checkpointing) that do not apply to it.
#[test]
fn the_inference_summary_names_the_cache_not_the_optimizer() {
    let out = vramfit(&[
        "estimate",
        "--model",
        "llama-3-8b",
        "--mode",
        "inference",
        "--batch",
        "1",
        "--seq",
        "512",
        "--context",
        "8192",
        "--precision",
        "bf16",
    ]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("batch 1, seq 512, attention sdpa, KV cache 8192 tokens, bf16\n"),
        "{table}"
    );
    assert!(
        !table.contains("adamw") && !table.contains("checkpointing"),
        "{table}"
    );
    let train = String::from_utf8(vramfit(&["estimate", "--model", "gpt2"]).stdout).unwrap();
    assert!(
        train.contains("× accum 1, seq 512, attention sdpa, fp32, adamw, checkpointing none"),
        "{train}"
    );
}

/// The best plan for OLMoE on 8 H100s splits its experts: the Megatron-LM
/// export carries the split, the DeepSpeed one (no such key) says on
/// stderr what it leaves out, the PyTorch loop in a comment.
#[test]
fn plan_exports_carry_or_name_the_expert_layout() {
    let plan = |export: &str| {
        vramfit(&[
            "plan",
            "--model",
            "olmoe-1b-7b",
            "--gpu",
            "h100-sxm",
            "--gpus-per-node",
            "8",
            "--seq",
            "1024",
            "--target-batch",
            "64",
            "--export",
            export,
        ])
    };
    let megatron = plan("megatron");
    assert!(megatron.status.success());
    let args = String::from_utf8(megatron.stdout).unwrap();
    let ep = args
        .lines()
        .find_map(|l| l.strip_prefix("--expert-model-parallel-size "))
        .map(|v| v.trim_end_matches(" \\").parse::<u64>().unwrap())
        .unwrap_or_else(|| panic!("{args}"));
    assert!(ep > 1, "{args}");
    let ds = plan("deepspeed");
    assert!(ds.status.success());
    let warning = String::from_utf8(ds.stderr).unwrap();
    assert!(
        warning.contains(&format!("ep = {ep} GPUs")) && warning.contains("--export megatron"),
        "{warning}"
    );
    serde_json::from_slice::<serde_json::Value>(&ds.stdout).expect("still one JSON object");
    let loop_ = String::from_utf8(plan("pytorch").stdout).unwrap();
    assert!(
        loop_.starts_with("# Not expressible here") && loop_.contains(&format!("ep_size={ep}")),
        "{loop_}"
    );
}

/// `--etp` beside `--ep`: Mixtral's experts over 4 GPUs, each split over
/// 2, hold as many expert parameters per GPU as 8 GPUs of whole experts;
/// a dense model refuses it by name.
#[test]
fn expert_tensor_parallelism_divides_each_expert() {
    let per_gpu = |extra: &[&str]| {
        let base = [
            "estimate",
            "--model",
            "mixtral-8x7b",
            "--batch",
            "1",
            "--seq",
            "128",
            "--gpus-per-node",
            "8",
            "--strategy",
            "ddp",
            "--json",
        ];
        json(&[&base[..], extra].concat())["parameters_per_gpu"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(
        per_gpu(&["--ep", "4", "--etp", "2"]),
        per_gpu(&["--ep", "8"])
    );
    assert!(per_gpu(&["--ep", "4", "--etp", "2"]) < per_gpu(&["--ep", "4"]));
    rejects_gpt2_estimate(
        &["--gpus-per-node", "2", "--etp", "2"],
        "expert tensor parallelism (etp = 2) needs a model with experts",
    );
}

/// An unknown GPU or model id names the presets it most likely meant: every
/// variant a prefix matches, or the ids a typo or two away.
#[test]
fn unknown_ids_offer_the_presets_they_most_likely_meant() {
    rejects_gpt2_estimate(
        &["--gpu", "h100"],
        "unknown GPU 'h100': run `vramfit presets` for the list, or give custom-<GiB> for a GPU by its memory (1 to 4096 GiB) (did you mean h100-sxm, h100-pcie",
    );
    let out = vramfit(&["estimate", "--model", "qwen3-8"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("(did you mean qwen3-8b"), "{err}");
    let out = vramfit(&["estimate", "--model", "minimax-m2.5"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("did you mean minimax-m2.7, minimax-m2?"),
        "{err}"
    );
    // Nothing near: the message alone.
    let out = vramfit(&["estimate", "--model", "gpt2", "--gpu", "zzzz-9000"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("did you mean"), "{err}");
}
