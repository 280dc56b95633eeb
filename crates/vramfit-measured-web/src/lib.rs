//! The page's measurement reader, as its own small wasm module: the page
//! starts a Web Worker (`www/measured-worker.js`) only when the user
//! chooses a file, the worker loads this module and calls
//! [`read_measurement`], so neither the pickle reader nor the parse itself
//! touches the calculator's first-load module or its main thread.

use vramfit_core::measured::{self, ErrorData};
use wasm_bindgen::prelude::wasm_bindgen;

/// Reads a CUDA memory snapshot pickle or `memory_stats()` JSON and returns
/// JSON: `{"ok": Measurement}` or `{"error": ErrorData}` (errors come back as
/// data, never as a thrown exception).
#[wasm_bindgen]
pub fn read_measurement(data: &[u8]) -> String {
    let value = match measured::read(data) {
        Ok(m) => serde_json::json!({ "ok": m }),
        Err(e) => serde_json::json!({ "error": ErrorData::from(&e) }),
    };
    value.to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.
    use super::*;

    #[test]
    fn a_snapshot_comes_back_as_a_measurement_the_page_can_read() {
        let data = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/reference/snapshots/cs336_lm_small_fp32_b32_ctx256.pickle"
        ))
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&read_measurement(&data)).unwrap();
        let m: measured::Measurement = serde_json::from_value(v["ok"].clone()).unwrap();
        assert_eq!(m, measured::read(&data).unwrap());
    }

    #[test]
    fn an_error_comes_back_as_data() {
        let v: serde_json::Value =
            serde_json::from_str(&read_measurement(b"\x80\x02cposix\nsystem\nq\x00.")).unwrap();
        let e: ErrorData = serde_json::from_value(v["error"].clone()).unwrap();
        assert_eq!(e.code, "unsupported_opcode");
        assert_eq!(e.numbers, [2]);
        assert_eq!(e.text, "0x63 GLOBAL (imports code)");
    }
}
