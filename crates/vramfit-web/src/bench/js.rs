//! The bridge to the benchmark module (`dist/bench/`, crate
//! `vramfit-bench-web`): loaded with a dynamic `import()` the first time
//! it is needed, so the calculator's first load does not carry wgpu. The
//! only code besides `browser.rs` and `hooks.rs` that talks to the browser.
//!
//! The JavaScript is a wasm-bindgen snippet (a file next to the app's
//! script, not an inline script: the Content-Security-Policy allows none).
//! Every call into the module resolves to JSON; a promise that rejects
//! (the module failed to load, or trapped) becomes a [`Failure`].

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::model::{Adapter, Failure, FailureKind, Progress, Projection, RunOutput, parse_outcome};

/// Where the module's script is, relative to the page.
pub const MODULE_PATH: &str = "bench/vramfit_bench_web.js";

#[wasm_bindgen(inline_js = r#"
let loading = null;
export function bench_load(path) {
  if (!loading) {
    const url = new URL(path, document.baseURI).href;
    loading = import(url).then(async (m) => { await m.default(); return m; });
    loading.catch(() => { loading = null; });
  }
  return loading;
}
export function bench_has_webgpu() {
  return typeof navigator === "object" && navigator.gpu != null;
}
export function bench_download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}
"#)]
extern "C" {
    fn bench_load(path: &str) -> js_sys::Promise;
    fn bench_has_webgpu() -> bool;
    fn bench_download(name: &str, mime: &str, text: &str);
}

/// The message of a rejected promise's reason.
fn reason(value: &JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| "unknown error".into())
}

/// The loaded module's namespace.
async fn module() -> Result<JsValue, Failure> {
    JsFuture::from(bench_load(MODULE_PATH))
        .await
        .map_err(|e| Failure::new(FailureKind::LoadFailed, reason(&e)))
}

/// Calls the module's export `name` with `args` and awaits its JSON answer.
async fn call(name: &str, args: &[JsValue]) -> Result<String, Failure> {
    let module = module().await?;
    let crashed = |e: JsValue| Failure::new(FailureKind::Crashed, reason(&e));
    let function: js_sys::Function = js_sys::Reflect::get(&module, &JsValue::from_str(name))
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| {
            Failure::new(
                FailureKind::LoadFailed,
                format!("the module has no {name}()"),
            )
        })?;
    let this = JsValue::NULL;
    let value = function
        .apply(&this, &args.iter().collect::<js_sys::Array>())
        .map_err(crashed)?;
    let value = match value.dyn_into::<js_sys::Promise>() {
        Ok(promise) => JsFuture::from(promise).await.map_err(crashed)?,
        Err(value) => value,
    };
    value.as_string().ok_or_else(|| {
        Failure::new(
            FailureKind::Crashed,
            format!("{name}() did not answer with text"),
        )
    })
}

/// Whether the browser has WebGPU at all (checked before downloading the module).
pub fn has_webgpu() -> bool {
    bench_has_webgpu()
}

/// Loads the module if needed and asks it for the adapter.
pub async fn detect() -> Result<Adapter, Failure> {
    if !has_webgpu() {
        return Err(Failure::new(
            FailureKind::NoWebgpu,
            "navigator.gpu is missing",
        ));
    }
    parse_outcome(&call("detect", &[]).await?)
}

/// Runs the suite with `options` (JSON), calling `progress` as it goes.
pub async fn run(
    options: String,
    progress: impl Fn(Progress) + 'static,
) -> Result<RunOutput, Failure> {
    let callback = Closure::<dyn Fn(String)>::new(move |json: String| {
        if let Ok(p) = serde_json::from_str::<Progress>(&json) {
            progress(p);
        }
    });
    let answer = call(
        "run",
        &[JsValue::from_str(&options), callback.as_ref().clone()],
    )
    .await;
    // The closure must outlive the run; it is dropped only now.
    drop(callback);
    parse_outcome(&answer?)
}

/// Cancels the run in progress (nothing if the module is not loaded).
pub async fn cancel() {
    // The answer is `undefined`, not text; only the call matters.
    let _ = call("cancel", &[]).await;
}

/// The step time of the calculator's `query` at the throughput in `report_json`.
pub async fn project(report_json: String, query: String) -> Option<Projection> {
    let answer = call(
        "project",
        &[JsValue::from_str(&report_json), JsValue::from_str(&query)],
    )
    .await
    .ok()?;
    parse_outcome(&answer).ok()
}

/// Offers `text` as a file download named `name` (a Blob URL, revoked later).
pub fn download(name: &str, mime: &str, text: &str) {
    bench_download(name, mime, text);
}

/// Whether the address's fragment asks for the Benchmark tab (`#benchmark`).
pub fn bench_in_address() -> bool {
    crate::browser::window()
        .and_then(|w| w.location().hash().ok())
        .is_some_and(|h| h == "#benchmark")
}

/// Sets the address's fragment to `#benchmark` or removes it, without a
/// history entry; the query (the calculator's state) stays.
pub fn set_bench_in_address(on: bool) {
    let Some(window) = crate::browser::window() else {
        return;
    };
    let location = window.location();
    let url = format!(
        "{}{}{}",
        location.pathname().unwrap_or_default(),
        location.search().unwrap_or_default(),
        if on { "#benchmark" } else { "" }
    );
    if let Ok(history) = window.history() {
        // A refused replacement leaves the old address; the tab still switches.
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
    }
}
