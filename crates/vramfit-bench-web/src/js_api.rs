//! The JavaScript API (`wasm-bindgen`): `detect`, `run`, `cancel` and
//! `project`. Every call resolves to the JSON of an [`Outcome`]; nothing
//! throws, so the page can always show a message.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, PoisonError};

use vramfit_bench::{DEFAULT_BACKENDS, GpuContext};
use wasm_bindgen::prelude::*;

use crate::adapter::AdapterDetails;
use crate::options::RunOptions;
use crate::outcome::{Failure, FailureKind, Outcome};
use crate::signal::{Stop, StopSignal};

thread_local! {
    /// The signal of the run in progress, for [`cancel`].
    static CURRENT: RefCell<Option<StopSignal>> = const { RefCell::new(None) };
}

/// What the adapter is and can do: resolves to `{"ok": AdapterDetails}` or
/// `{"err": Failure}` (no WebGPU, no adapter, no device, limits too small).
#[wasm_bindgen]
pub async fn detect() -> String {
    Outcome::of(open().await.map(|(_, details, _)| details)).to_json()
}

/// Runs the suite described by `options` (the JSON of [`RunOptions`]),
/// calling `on_progress` with the JSON of each
/// [`Progress`](crate::runner::Progress); resolves to
/// `{"ok": {"json": report, "markdown": report}}` or `{"err": Failure}`.
#[wasm_bindgen]
pub async fn run(options: String, on_progress: js_sys::Function) -> String {
    let signal = StopSignal::new();
    CURRENT.with(|c| *c.borrow_mut() = Some(signal.clone()));
    let result = run_with(&options, &on_progress, &signal).await;
    CURRENT.with(|c| *c.borrow_mut() = None);
    Outcome::of(result).to_json()
}

/// Stops the run in progress at once; its `run` resolves to a
/// `cancelled` failure. Does nothing when no run is in progress.
#[wasm_bindgen]
pub fn cancel() {
    CURRENT.with(|c| {
        if let Some(signal) = c.borrow().as_ref() {
            signal.stop(Stop::Cancelled);
        }
    });
}

/// The step time of the calculator's configuration (its share-link
/// `query`) at the throughput measured in `report` (a `vramfit.bench/1`
/// JSON): `{"ok": Projection}` or `{"err": Failure}`.
#[wasm_bindgen]
pub fn project(report: String, query: String) -> String {
    Outcome::of(crate::project::project(&report, &query)).to_json()
}

/// The report of a finished run, in both renderings.
#[derive(serde::Serialize)]
struct RunOutput {
    /// The `vramfit.bench/1` JSON, pretty-printed (the export).
    json: String,
    /// The Markdown rendering (the other export).
    markdown: String,
}

async fn run_with(
    options: &str,
    on_progress: &js_sys::Function,
    signal: &StopSignal,
) -> Result<RunOutput, Failure> {
    let options: RunOptions = serde_json::from_str(options).map_err(|e| {
        Failure::new(
            FailureKind::Invalid,
            format!("the options do not parse: {e}"),
        )
    })?;
    let plan = options.plan().map_err(|e| Failure::from_bench(&e))?;
    let (ctx, _, errors) = open().await?;
    let lost = signal.clone();
    ctx.device()
        .set_device_lost_callback(move |_, message| lost.stop(Stop::DeviceLost(message)));
    let mut progress = |p: &crate::runner::Progress| {
        if let Ok(json) = serde_json::to_string(p) {
            // A throwing callback only loses a progress update.
            let _ = on_progress.call1(&JsValue::NULL, &JsValue::from_str(&json));
        }
    };
    let report = crate::runner::run_plan(&ctx, &plan, &clock, signal, &mut progress).await;
    if let Some(message) = errors.lock().unwrap_or_else(PoisonError::into_inner).take() {
        return Err(Failure::from_bench(
            &vramfit_bench::BenchError::Validation {
                kernel: "device",
                message,
            },
        ));
    }
    let report = report?;
    let json = report
        .to_json()
        .map_err(|e| Failure::new(FailureKind::Other, e.to_string()))?;
    // Release the device now; its loss is expected from here on.
    ctx.device().destroy();
    Ok(RunOutput {
        json,
        markdown: report.to_markdown(),
    })
}

/// Errors the device reported outside any error scope (the first one).
type Uncaptured = Arc<Mutex<Option<String>>>;

/// Checks for WebGPU, opens a device with the adapter's limits, routes
/// errors outside error scopes into a slot instead of wgpu's default
/// handler (which panics), and checks the limits.
async fn open() -> Result<(GpuContext, AdapterDetails, Uncaptured), Failure> {
    if !has_webgpu() {
        return Err(Failure::new(
            FailureKind::NoWebgpu,
            "navigator.gpu is missing",
        ));
    }
    let ctx = GpuContext::request(DEFAULT_BACKENDS)
        .await
        .map_err(|e| Failure::from_bench(&e))?;
    let errors: Uncaptured = Arc::default();
    let slot = Arc::clone(&errors);
    ctx.device()
        .on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            slot.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert_with(|| error.to_string());
        }));
    let mut details = AdapterDetails::of(&ctx);
    add_browser_info(&ctx, &mut details);
    let shortfalls = details.limits.shortfalls();
    if !shortfalls.is_empty() {
        return Err(Failure::new(FailureKind::Limits, shortfalls.join("; ")));
    }
    Ok((ctx, details, errors))
}

/// Whether `navigator.gpu` exists.
fn has_webgpu() -> bool {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w.navigator(), &JsValue::from_str("gpu")).ok())
        .is_some_and(|gpu| !gpu.is_undefined() && !gpu.is_null())
}

/// Fills vendor, architecture and description from `GPUDevice.adapterInfo`
/// (wgpu's `AdapterInfo` carries only the description on the web). Read
/// with `Reflect`, so a browser without the property leaves them empty.
fn add_browser_info(ctx: &GpuContext, details: &mut AdapterDetails) {
    let Some(device) = ctx.device().as_webgpu() else {
        return;
    };
    let device: &JsValue = device.as_ref();
    let Ok(info) = js_sys::Reflect::get(device, &JsValue::from_str("adapterInfo")) else {
        return;
    };
    let field = |name: &str| {
        js_sys::Reflect::get(&info, &JsValue::from_str(name))
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    details.vendor = field("vendor");
    details.architecture = field("architecture");
    details.description = field("description");
    if details.name.is_empty() {
        details.name = details.description.clone();
    }
    if js_sys::Reflect::get(&info, &JsValue::from_str("isFallbackAdapter"))
        .ok()
        .and_then(|v| v.as_bool())
        == Some(true)
    {
        details.fallback = true;
    }
}

/// `performance.now()` in seconds (the timing module's clock on wasm).
fn clock() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now() / 1000.0)
}
