//! The calculator and its Benchmark page (`bench.html`) talk across the
//! Benchmark tab's frame with `postMessage`: the Benchmark tab is its own
//! page, with its own wasm, so the calculator's first load does not carry
//! it. Both are on one origin, and each side accepts only messages from that
//! origin and from the other window.
//!
//! Messages, each `{ type, v: 1, ... }`:
//! - page → calculator `vramfit:bench-ready` once it listens, and
//!   `vramfit:resize` with `height` (CSS pixels) when its height changes
//!   (`boot.js` posts it, as the widget's frame does for `embed.js`);
//! - calculator → page `vramfit:bench-config` with `query`: the
//!   configuration and display settings as a page address query, sent on
//!   `vramfit:bench-ready` and whenever they change.
//!
//! The frame's address carries the configuration it starts with, so the
//! page shows it even before the first message.

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use yew::Callback;

/// The Benchmark page, relative to the calculator.
pub const PAGE: &str = "bench.html";

const READY: &str = "vramfit:bench-ready";
const RESIZE: &str = "vramfit:resize";
const CONFIG: &str = "vramfit:bench-config";

/// A `message` listener on the window, removed when dropped.
pub struct Listener {
    closure: Closure<dyn FnMut(web_sys::MessageEvent)>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(window) = crate::browser::window() {
            // Removing a listener that is not there is a no-op.
            let _ = window.remove_event_listener_with_callback(
                "message",
                self.closure.as_ref().unchecked_ref(),
            );
        }
    }
}

/// Listens to this window's messages from `from()` (checked per message:
/// a frame's window changes when it navigates) on this page's origin;
/// `on` gets each message's `type` and data.
fn listen(
    from: impl Fn() -> Option<web_sys::Window> + 'static,
    on: impl Fn(&str, &JsValue) + 'static,
) -> Option<Listener> {
    let window = crate::browser::window()?;
    let origin = window.location().origin().ok()?;
    let closure =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            if event.origin() != origin {
                return;
            }
            // Compared as values: another frame's window is no `instanceof`
            // this one's `Window`, so a checked cast would refuse it.
            let source = event.source().map(JsValue::from);
            if source.is_none() || source != from().map(JsValue::from) {
                return;
            }
            let data = event.data();
            let field = |name: &str| js_sys::Reflect::get(&data, &JsValue::from_str(name)).ok();
            if field("v").and_then(|v| v.as_f64()) != Some(1.0) {
                return;
            }
            if let Some(kind) = field("type").and_then(|t| t.as_string()) {
                on(&kind, &data);
            }
        });
    window
        .add_event_listener_with_callback("message", closure.as_ref().unchecked_ref())
        .ok()?;
    Some(Listener { closure })
}

/// Posts `{ type, v: 1, [key]: value }` to `to` on this page's origin.
fn post(to: &web_sys::Window, kind: &str, field: Option<(&str, JsValue)>) {
    let Some(origin) = crate::browser::window().and_then(|w| w.location().origin().ok()) else {
        return;
    };
    let message = js_sys::Object::new();
    // Setting a property on a fresh plain object cannot fail.
    let _ = js_sys::Reflect::set(
        &message,
        &JsValue::from_str("type"),
        &JsValue::from_str(kind),
    );
    let _ = js_sys::Reflect::set(&message, &JsValue::from_str("v"), &JsValue::from_f64(1.0));
    if let Some((key, value)) = field {
        let _ = js_sys::Reflect::set(&message, &JsValue::from_str(key), &value);
    }
    // A window that went away takes no message; nothing to report.
    let _ = to.post_message(&message, &origin);
}

/// The calculator's side: listens to the Benchmark page in `frame`, which
/// asks for the configuration (`on_ready`) and reports its height (`on_height`).
pub fn listen_to_page(
    frame: yew::NodeRef,
    on_ready: Callback<()>,
    on_height: Callback<f64>,
) -> Option<Listener> {
    let window_of = move || {
        frame
            .cast::<web_sys::HtmlIFrameElement>()
            .and_then(|f| f.content_window())
    };
    listen(window_of, move |kind, data| match kind {
        READY => on_ready.emit(()),
        RESIZE => {
            let height = js_sys::Reflect::get(data, &JsValue::from_str("height"))
                .ok()
                .and_then(|h| h.as_f64());
            if let Some(h) = height.filter(|h| h.is_finite() && *h >= 0.0) {
                on_height.emit(h);
            }
        }
        _ => {}
    })
}

/// The calculator's side: sends the page in `frame` its configuration.
pub fn send_config(frame: &yew::NodeRef, query: &str) {
    if let Some(window) = frame
        .cast::<web_sys::HtmlIFrameElement>()
        .and_then(|f| f.content_window())
    {
        post(&window, CONFIG, Some(("query", JsValue::from_str(query))));
    }
}

/// The Benchmark page's side: listens to the calculator that frames it for
/// configurations (`on_config` gets each query), and tells it that it listens.
/// `None` when the page is not in a frame.
pub fn listen_to_calculator(on_config: Callback<String>) -> Option<Listener> {
    let window = crate::browser::window()?;
    let parent = window.parent().ok().flatten().filter(|p| *p != window)?;
    let listener = listen(
        || crate::browser::window().and_then(|w| w.parent().ok().flatten()),
        move |kind, data| {
            if kind == CONFIG {
                let query = js_sys::Reflect::get(data, &JsValue::from_str("query"))
                    .ok()
                    .and_then(|q| q.as_string());
                if let Some(q) = query {
                    on_config.emit(q);
                }
            }
        },
    );
    post(&parent, READY, None);
    listener
}
