//! Any model spec and training configuration, built from the fuzzer's bytes
//! (see `common/gen.rs`), estimate to a report or to a clean error, on no
//! GPU or on any preset GPU: never a panic (overflow checks are on in fuzz
//! builds) and, with libFuzzer's `-timeout`, never slowly.
#![no_main]

#[path = "common/gen.rs"]
mod generate;

use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use vramfit_core::{Overheads, estimate, gpu_presets};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let (Ok(spec), Ok(cfg)) = (generate::model(&mut u), generate::config(&mut u)) else {
        return;
    };
    let gpus = gpu_presets();
    let gpu = u.choose(&gpus).ok();
    let overheads = gpu.map(Overheads::for_gpu).unwrap_or_default();
    if std::env::var_os("VRAMFIT_FUZZ_PRINT").is_some() {
        eprintln!("{spec:?}\n{cfg:?}\ngpu: {:?}", gpu.map(|g| g.id.as_ref()));
    }
    match estimate(&spec, &cfg, &overheads, gpu) {
        Ok(e) => {
            assert!(
                e.peak_allocated_bytes <= e.peak_reserved_bytes,
                "{spec:?} {cfg:?}"
            );
            assert!(
                e.peak_reserved_bytes <= e.device_used_bytes,
                "{spec:?} {cfg:?}"
            );
        }
        Err(err) => assert!(!err.to_string().is_empty()),
    }
});
