//! A measurement brought to the page: the reply of the parsing worker read
//! into the core's [`Measurement`], and the comparison's differences and the
//! reader's errors in the page's words. The worker itself
//! (`www/measured-worker.js` over the `vramfit-measured-web` module) is
//! started by [`read_in_worker`] only when a file is chosen, so the pickle
//! reader is neither in the first-load module nor on the main thread.

use crate::i18n::{Key, Lang, tf};
use crate::prefs::Units;
use crate::present;
use vramfit_core::Bytes;
use vramfit_core::measured::compare::Pool;
use vramfit_core::measured::{Difference, ErrorData, MAX_FILE_BYTES, Measurement};

/// The worker's script, beside the page.
pub const WORKER_URL: &str = "./measured-worker.js";

/// Reads the worker's reply: `{"ok": Measurement}` or `{"error": ErrorData}`.
pub fn parse_reply(json: &str) -> Result<Measurement, ErrorData> {
    let worker = |text: String| ErrorData {
        code: "worker".into(),
        numbers: Vec::new(),
        text,
    };
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| worker(e.to_string()))?;
    if let Some(err) = value.get("error") {
        return Err(serde_json::from_value(err.clone()).unwrap_or_else(|e| worker(e.to_string())));
    }
    let ok = value.get("ok").cloned().unwrap_or_default();
    serde_json::from_value(ok).map_err(|e| worker(e.to_string()))
}

/// The error for a file of `size` bytes, when it is over the reader's limit
/// (checked before the file is read at all).
pub fn too_large(size: f64) -> Option<ErrorData> {
    let limit = MAX_FILE_BYTES as f64;
    (size > limit).then(|| ErrorData {
        code: "too_large".into(),
        numbers: vec![size as u64, MAX_FILE_BYTES as u64],
        text: String::new(),
    })
}

/// The reader's error as a sentence, and the reader's own detail (an
/// opcode's name, what did not fit), which the page shows as code.
pub fn error_message(e: &ErrorData, lang: Lang, units: Units) -> (String, Option<String>) {
    let n = |i: usize| e.numbers.get(i).copied().unwrap_or(0);
    let num = |i: usize| present::group_digits(n(i));
    let size = |i: usize| present::bytes(Bytes(n(i)), units);
    let message = match e.code.as_str() {
        "too_large" => tf(lang, Key::MeasuredErrTooLarge, &[&size(0), &size(1)]),
        "empty" => tf(lang, Key::MeasuredErrEmpty, &[]),
        "not_pickle" => tf(lang, Key::MeasuredErrNotPickle, &[]),
        "unsupported_protocol" => tf(lang, Key::MeasuredErrProtocol, &[&num(0)]),
        "truncated" => tf(lang, Key::MeasuredErrTruncated, &[]),
        "unsupported_opcode" => tf(lang, Key::MeasuredErrOpcode, &[&num(0)]),
        "too_deep" => tf(lang, Key::MeasuredErrDeep, &[&num(0)]),
        "malformed" => tf(lang, Key::MeasuredErrMalformed, &[&num(0)]),
        "not_snapshot" => tf(lang, Key::MeasuredErrNotSnapshot, &[]),
        "not_memory_stats" => tf(lang, Key::MeasuredErrNotStats, &[]),
        // "worker" and any code a newer worker sends.
        _ => tf(lang, Key::MeasuredErrWorker, &[]),
    };
    (message, (!e.text.is_empty()).then(|| e.text.clone()))
}

/// "31 % higher" or "12 % lower", measured against simulated.
fn versus(measured: Bytes, simulated: Bytes, lang: Lang) -> String {
    if simulated.0 == 0 {
        return String::new();
    }
    let pct = (measured.0 as f64 - simulated.0 as f64) / simulated.0 as f64 * 100.0;
    let key = if pct >= 0.0 {
        Key::DiffHigher
    } else {
        Key::DiffLower
    };
    tf(lang, key, &[&format!("{:.0}", pct.abs())])
}

/// One difference, as a sentence.
pub fn difference(d: &Difference, lang: Lang, units: Units) -> String {
    let b = |v: Bytes| present::bytes(v, units);
    match *d {
        Difference::PeakAllocated {
            measured,
            simulated,
        } => tf(
            lang,
            Key::DiffPeakAllocated,
            &[
                &b(measured),
                &b(simulated),
                &versus(measured, simulated, lang),
            ],
        ),
        Difference::PeakReserved {
            measured,
            simulated,
        } => tf(
            lang,
            Key::DiffPeakReserved,
            &[
                &b(measured),
                &b(simulated),
                &versus(measured, simulated, lang),
            ],
        ),
        Difference::ReservedAboveAllocated {
            measured_percent,
            simulated_percent,
        } => tf(
            lang,
            Key::DiffReservedShare,
            &[
                &format!("{measured_percent:.0}"),
                &format!("{simulated_percent:.0}"),
            ],
        ),
        Difference::SegmentCount {
            pool,
            measured,
            simulated,
        } => {
            let key = match pool {
                Pool::Small => Key::DiffSmallSegments,
                Pool::Large => Key::DiffLargeSegments,
            };
            tf(lang, key, &[&measured.to_string(), &simulated.to_string()])
        }
        Difference::SegmentsOverGib {
            measured,
            simulated,
        } => tf(
            lang,
            Key::DiffOverGib,
            &[&measured.to_string(), &simulated.to_string()],
        ),
        Difference::LargestSegment {
            measured,
            simulated,
        } => tf(lang, Key::DiffLargest, &[&b(measured), &b(simulated)]),
        Difference::AllocRetries { count } => {
            tf(lang, Key::DiffRetries, &[&present::group_digits(count)])
        }
        Difference::OutOfMemory { count } => {
            tf(lang, Key::DiffOoms, &[&present::group_digits(count)])
        }
    }
}

/// Starts the parsing worker on `file` and hands its reply to `done` once;
/// the worker is ended after its reply. A worker that cannot start (or
/// whose script fails) answers with a `worker` error.
#[cfg(target_arch = "wasm32")]
pub fn read_in_worker(file: web_sys::File, done: yew::Callback<Result<Measurement, ErrorData>>) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    let fail = |text: String| ErrorData {
        code: "worker".into(),
        numbers: Vec::new(),
        text,
    };
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    let worker = match web_sys::Worker::new_with_options(WORKER_URL, &options) {
        Ok(w) => w,
        Err(e) => {
            done.emit(Err(fail(format!("{e:?}"))));
            return;
        }
    };
    let on_message = {
        let (worker, done) = (worker.clone(), done.clone());
        Closure::once_into_js(move |e: web_sys::MessageEvent| {
            worker.terminate();
            let reply = e.data().as_string().unwrap_or_default();
            done.emit(parse_reply(&reply));
        })
    };
    let on_error = {
        let (worker, done) = (worker.clone(), done.clone());
        Closure::once_into_js(move |e: web_sys::Event| {
            worker.terminate();
            let text = e
                .dyn_ref::<web_sys::ErrorEvent>()
                .map(web_sys::ErrorEvent::message)
                .unwrap_or_default();
            done.emit(Err(fail(text)));
        })
    };
    worker.set_onmessage(Some(on_message.unchecked_ref()));
    worker.set_onerror(Some(on_error.unchecked_ref()));
    if let Err(e) = worker.post_message(&file) {
        worker.terminate();
        done.emit(Err(fail(format!("{e:?}"))));
    }
}

/// Native builds (the prerender and the tests) have no workers.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_in_worker(_file: web_sys::File, done: yew::Callback<Result<Measurement, ErrorData>>) {
    done.emit(Err(ErrorData {
        code: "worker".into(),
        numbers: Vec::new(),
        text: "no workers outside the browser".into(),
    }));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.
    use super::*;

    #[test]
    fn a_reply_reads_back_as_the_measurement_or_the_error() {
        let data = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/reference/snapshots/cs336_lm_small_fp32_b32_ctx256.pickle"
        ))
        .unwrap();
        let m = vramfit_core::measured::read(&data).unwrap();
        let reply = serde_json::json!({ "ok": m }).to_string();
        assert_eq!(parse_reply(&reply).unwrap(), m);
        let err = parse_reply(
            r#"{"error": {"code": "unsupported_opcode", "numbers": [2], "text": "0x63 GLOBAL (imports code)"}}"#,
        )
        .unwrap_err();
        let (en, detail) = error_message(&err, Lang::En, Units::Binary);
        assert_eq!(
            en,
            "Unsupported pickle opcode at byte 2: only plain data is read, never code."
        );
        assert_eq!(detail.as_deref(), Some("0x63 GLOBAL (imports code)"));
        let (zh, _) = error_message(&err, Lang::Zh, Units::Binary);
        assert!(zh.contains("第 2 字节"), "{zh}");
        assert_eq!(parse_reply("not json").unwrap_err().code, "worker");
    }

    #[test]
    fn an_oversized_file_is_refused_before_it_is_read() {
        assert_eq!(too_large(MAX_FILE_BYTES as f64), None);
        let e = too_large(MAX_FILE_BYTES as f64 + 1.0).unwrap();
        let (en, _) = error_message(&e, Lang::En, Units::Binary);
        assert_eq!(en, "The file is 64.0 MiB; at most 64.0 MiB are read.");
    }

    #[test]
    fn differences_read_in_both_languages() {
        let d = Difference::PeakAllocated {
            measured: Bytes(13 << 30),
            simulated: Bytes(10 << 30),
        };
        assert_eq!(
            difference(&d, Lang::En, Units::Binary),
            "Measured peak allocated 13.0 GiB; vramfit simulates 10.0 GiB (30 % higher)"
        );
        assert_eq!(
            difference(&d, Lang::Zh, Units::Binary),
            "实测峰值已分配 13.0 GiB；vramfit 模拟为 10.0 GiB（高 30%）"
        );
    }
}
