//! `vramfit bench` as a subprocess: flag errors need no GPU.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "tests fail by panicking"
)]

use std::process::Command;

#[test]
fn bench_rejects_an_unknown_size_with_the_accepted_values() {
    let out = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(["bench", "--size", "huge"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("small|default|large"), "{stderr}");
}

#[test]
fn bench_help_lists_the_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(["bench", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout).unwrap().contains("--kernels"));
}
