//! Any bytes, read as a `config.json`, import to a model or to an error that
//! renders as a message; an imported model estimates (at batch 1 and a short
//! sequence) to a report or to an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramfit_core::{Overheads, TrainConfig, estimate, hf};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match hf::import(&text) {
        Ok(model) => {
            let cfg = TrainConfig {
                batch: 1,
                seq: 16,
                ..TrainConfig::default()
            };
            if let Ok(e) = estimate(&model.spec, &cfg, &Overheads::default(), None) {
                assert!(e.peak_allocated_bytes <= e.peak_reserved_bytes);
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
