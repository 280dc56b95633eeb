//! `vramfit estimate --measured FILE` run as a subprocess: a real CUDA
//! memory snapshot (`tests/reference/snapshots/`), `memory_stats()` JSON,
//! and files that must be refused with a specific message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use std::path::PathBuf;
use std::process::{Command, Output};

const SNAPSHOT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/reference/snapshots/cs336_lm_small_fp32_b32_ctx256.pickle"
);

/// The recorded configuration as a Llama-style `config.json` (the
/// snapshot's README.md).
const CS336: &str = r#"{"model_type": "llama", "hidden_size": 768, "intermediate_size": 3072,
    "num_hidden_layers": 12, "num_attention_heads": 12, "num_key_value_heads": 12,
    "vocab_size": 10000, "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0, "tie_word_embeddings": false, "hidden_act": "silu"}"#;

fn vramfit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(args)
        .output()
        .expect("run vramfit")
}

/// A file under a fresh temporary folder for this call: tests run in
/// parallel, and two writing one path let a third read it half-written.
fn temp_file(test: &str, name: &str, data: &[u8]) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "vramfit-measured-{}-{test}-{call}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

fn estimate_cs336(extra: &[&str]) -> Output {
    let config = temp_file("cs336", "config.json", CS336.as_bytes());
    let mut args = vec![
        "estimate",
        "--model",
        config.to_str().unwrap(),
        "--batch",
        "32",
        "--seq",
        "256",
        "--precision",
        "fp32",
        "--optimizer",
        "sgd",
        "--attention",
        "eager",
    ];
    args.extend_from_slice(extra);
    vramfit(&args)
}

#[test]
fn a_real_snapshot_is_compared_in_the_table() {
    let out = estimate_cs336(&["--measured", SNAPSHOT]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("Measured (memory snapshot, device 0, 5163 trace events) vs vramfit:"),
        "{text}"
    );
    // summary.csv: peak allocated 13,927,832,064 B (13.0 GiB), reserved 14,180,941,824 B.
    assert!(
        text.contains("peak allocated                 13.0 GiB"),
        "{text}"
    );
    assert!(
        text.contains("segments small / large          8 / 208"),
        "{text}"
    );
    assert!(text.contains("Differences, largest first:"), "{text}");
}

#[test]
fn a_real_snapshot_is_compared_in_the_json() {
    let out = estimate_cs336(&["--measured", SNAPSHOT, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["measured"];
    assert_eq!(m["measured"]["source"], "snapshot");
    assert_eq!(m["measured"]["peak_allocated_bytes"], 13_927_832_064u64);
    assert_eq!(m["measured"]["peak_reserved_bytes"], 14_180_941_824u64);
    assert_eq!(
        m["simulated"]["peak_allocated_bytes"],
        v["peak_allocated_bytes"]
    );
    let kinds = m["differences"].as_array().unwrap();
    let texts = m["differences_text"].as_array().unwrap();
    assert_eq!(kinds.len(), texts.len());
    assert!(!kinds.is_empty());
    assert!(m["simulated_timeline"].as_array().unwrap().len() <= 400);
    // Without --measured the JSON has no such key.
    let plain = estimate_cs336(&["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(v.get("measured").is_none());
}

#[test]
fn memory_stats_json_is_compared() {
    let stats = br#"{"allocated_bytes.all.peak": 13927832064, "reserved_bytes.all.peak": 14180941824,
        "segment.small_pool.peak": 8, "segment.large_pool.peak": 208, "num_alloc_retries": 2, "num_ooms": 0}"#;
    let path = temp_file("stats", "stats.json", stats);
    let out = estimate_cs336(&["--measured", path.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("Measured (memory_stats()) vs vramfit:"),
        "{text}"
    );
    assert!(
        text.contains("  - the run retried 2 allocations after freeing the cache"),
        "retries come first: {text}"
    );
}

/// `--measured` with `data` exits 2 with a message containing `needle`.
fn refuses(test: &str, data: &[u8], needle: &str) {
    let path = temp_file(test, "bad.pickle", data);
    let out = vramfit(&[
        "estimate",
        "--model",
        "gpt2",
        "--measured",
        path.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{test}: {err}");
    assert!(err.contains(needle), "{test}: {err}");
    assert!(out.stdout.is_empty(), "{test}: nothing on stdout");
}

#[test]
fn malformed_files_are_refused_with_what_is_wrong() {
    let real = std::fs::read(SNAPSHOT).unwrap();
    refuses(
        "truncated",
        &real[..real.len() / 3],
        "the pickle is truncated: it ends before its last value is complete",
    );
    refuses(
        "text",
        b"loss,step\n1.0,1\n",
        "not a memory snapshot: expected a pickle",
    );
    // pickle.dumps(os.system, protocol=2).
    refuses(
        "global",
        b"\x80\x02cposix\nsystem\nq\x00.",
        "unsupported pickle opcode 0x63 GLOBAL (imports code) at byte 2",
    );
    let mut big = vec![0u8; vramfit_core::measured::MAX_FILE_BYTES + 1];
    big[0] = 0x80;
    refuses("big", &big, "at most 67108864 bytes are read");
}

#[test]
fn measured_needs_the_training_simulation() {
    let out = vramfit(&[
        "estimate",
        "--model",
        "gpt2",
        "--mode",
        "inference",
        "--engine",
        "vllm",
        "--measured",
        SNAPSHOT,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--measured compares with the training simulation"),
        "{err}"
    );
}
