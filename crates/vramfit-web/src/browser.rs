//! The few places the app touches the browser outside Yew's rendering:
//! reading the browser's language and colour-scheme preference, reflecting
//! the preferences on `<html>`, reading a dropped file, moving focus, the
//! page's address (read, replaced, and where the site is published) and the
//! clipboard.
//! Every call degrades to a no-op when an API is missing (old browsers,
//! native tests), so none of them can stop the page.

use crate::i18n::{Key, t};
use crate::import::{ImportError, MAX_FILE_BYTES};
use crate::prefs::Prefs;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use yew::Callback;

/// The browser window; `None` outside a browser: natively (the state
/// tests, the build-time render of the default page) every function here
/// answers as without a window instead of calling into JavaScript.
pub fn window() -> Option<web_sys::Window> {
    #[cfg(target_arch = "wasm32")]
    {
        web_sys::window()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

/// The preferences the browser asks for (`navigator.language`,
/// `prefers-color-scheme`); the defaults when they cannot be read.
pub fn initial_prefs() -> Prefs {
    let Some(window) = window() else {
        return Prefs::default();
    };
    let language = window.navigator().language().unwrap_or_default();
    let dark = window
        .match_media("(prefers-color-scheme: dark)")
        .ok()
        .flatten()
        .is_some_and(|m| m.matches());
    Prefs::from_browser(&language, dark)
}

/// Sets `<html lang>`, `<html data-theme>` and the document title.
pub fn reflect(prefs: Prefs) {
    let Some(document) = window().and_then(|w| w.document()) else {
        return;
    };
    if let Some(html) = document.document_element() {
        // Failing to set an attribute only loses styling hints; nothing to report.
        let _ = html.set_attribute("lang", prefs.lang.tag());
        let _ = html.set_attribute("data-theme", prefs.theme.id());
    }
    document.set_title(t(prefs.lang, Key::PageTitle));
}

/// Reads `file` as text and emits it, or why it could not be used (too
/// large for a `config.json`, unreadable).
pub fn read_text(file: web_sys::File, done: Callback<Result<String, ImportError>>) {
    let size = file.size() as u64;
    if size > MAX_FILE_BYTES {
        return done.emit(Err(ImportError::TooLarge(size)));
    }
    let Ok(reader) = web_sys::FileReader::new() else {
        return done.emit(Err(ImportError::Unreadable));
    };
    let on_load = {
        let reader = reader.clone();
        let done = done.clone();
        Closure::once_into_js(move || {
            let text = reader.result().ok().and_then(|r| r.as_string());
            done.emit(text.ok_or(ImportError::Unreadable));
        })
    };
    let on_error = Closure::once_into_js(move || done.emit(Err(ImportError::Unreadable)));
    reader.set_onload(Some(on_load.unchecked_ref()));
    reader.set_onerror(Some(on_error.unchecked_ref()));
    if reader.read_as_text(&file).is_err() {
        reader.set_onload(None);
    }
}

/// Fetches model `id`'s `config.json` from the Hugging Face Hub
/// ([`crate::import::hub_config_url`]) and emits its text, or why not.
/// The request carries no cookies or credentials (`fetch`'s default
/// `same-origin`), and only [`crate::import::HUB_ORIGIN`] is allowed by the
/// page's CSP.
pub fn fetch_hub_config(id: String, done: Callback<Result<String, ImportError>>) {
    use crate::import::{HubError, hub_config_url};
    let fail = |id: &str, error| ImportError::Hub {
        id: id.to_string(),
        error,
    };
    let Some(win) = window() else {
        return done.emit(Err(fail(&id, HubError::Offline)));
    };
    let request = win.fetch_with_str(&hub_config_url(&id));
    yew::platform::spawn_local(async move {
        let answer = wasm_bindgen_futures::JsFuture::from(request).await;
        let Some(response) = answer
            .ok()
            .and_then(|r| r.dyn_into::<web_sys::Response>().ok())
        else {
            return done.emit(Err(fail(&id, HubError::Offline)));
        };
        if !response.ok() {
            return done.emit(Err(fail(&id, HubError::from_status(response.status()))));
        }
        let body = match response.text() {
            Ok(p) => wasm_bindgen_futures::JsFuture::from(p).await.ok(),
            Err(_) => None,
        };
        done.emit(match body.and_then(|b| b.as_string()) {
            Some(text) if text.len() as u64 > MAX_FILE_BYTES => {
                Err(ImportError::TooLarge(text.len() as u64))
            }
            Some(text) => Ok(text),
            None => Err(fail(&id, HubError::Offline)),
        });
    });
}

/// Moves keyboard focus to the element with this id, if it can take focus.
pub fn focus(id: &str) {
    let element = window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id));
    if let Some(el) = element {
        if let Some(svg) = el.dyn_ref::<web_sys::SvgElement>() {
            let _ = svg.focus();
        } else if let Some(html) = el.dyn_ref::<web_sys::HtmlElement>() {
            let _ = html.focus();
        }
    }
}

/// A callback [`soon`] runs once, from whichever of its two paths comes first.
type Pending = Rc<RefCell<Option<Box<dyn FnOnce()>>>>;

/// How long [`soon`] waits for a frame before running anyway, ms: a hidden
/// tab gets no animation frames.
const FRAME_FALLBACK_MS: i32 = 100;

/// Runs `f` after the browser has painted what was just rendered: the next
/// animation frame's callback queues a task, which runs once that frame is
/// on screen (a frame's rendering follows its `requestAnimationFrame`
/// callbacks in the same turn). Where the browser has `scheduler.postTask`
/// that task has background priority: any other task — an input event, a
/// key typed meanwhile, what a page measures right after the frame — runs
/// first; elsewhere it is a timer task, after those queued before it (Yew's
/// own continuation, a batch typed as the first verdict appears).
/// Without frames (a hidden tab) a timer runs it after
/// [`FRAME_FALLBACK_MS`]; whichever comes first runs it, once. At once when
/// there is no window.
pub fn soon(f: impl FnOnce() + 'static) {
    let Some(window) = window() else {
        return f();
    };
    let pending: Pending = Rc::new(RefCell::new(Some(Box::new(f))));
    let run = {
        let pending = Rc::clone(&pending);
        move || {
            // Take first: `f` may render, and a render may call `soon` again.
            let f = pending.borrow_mut().take();
            if let Some(f) = f {
                f();
            }
        }
    };
    let after_frame = {
        let run = run.clone();
        let later = window.clone();
        Closure::once_into_js(move || {
            let task = Closure::once_into_js(run);
            // A refused timer leaves the fallback to run it.
            if !post_background_task(&task) {
                let _ = later.set_timeout_with_callback(task.unchecked_ref());
            }
        })
    };
    let _ = window.request_animation_frame(after_frame.unchecked_ref());
    let fallback = Closure::once_into_js(run);
    // A refused timer and no frame leave the curve and comparison pending; nothing else breaks.
    let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(
        fallback.unchecked_ref(),
        FRAME_FALLBACK_MS,
    );
}

thread_local! {
    /// `scheduler` with its `postTask` and the options `{ priority:
    /// "background" }`, looked up once (every edit queues a task): `None`
    /// where the browser has no such scheduler.
    static BACKGROUND: Option<(js_sys::Object, js_sys::Function, js_sys::Object)> =
        background_scheduler();
}

/// See [`BACKGROUND`].
fn background_scheduler() -> Option<(js_sys::Object, js_sys::Function, js_sys::Object)> {
    use js_sys::{Function, Object, Reflect};
    let scheduler = Reflect::get(&window()?.into(), &"scheduler".into())
        .ok()?
        .dyn_into::<Object>()
        .ok()?;
    let post = Reflect::get(&scheduler, &"postTask".into())
        .ok()?
        .dyn_into::<Function>()
        .ok()?;
    let options = Object::new();
    Reflect::set(&options, &"priority".into(), &"background".into()).ok()?;
    Some((scheduler, post, options))
}

/// Queues `task` (a JS function) with `scheduler.postTask` at background
/// priority; `false` where the browser has no such scheduler or refuses.
fn post_background_task(task: &wasm_bindgen::JsValue) -> bool {
    BACKGROUND.with(|b| {
        b.as_ref()
            .is_some_and(|(scheduler, post, options)| post.call2(scheduler, task, options).is_ok())
    })
}

/// The page's address (`location.href`); empty without a window.
pub fn address() -> String {
    window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default()
}

/// The least time between two address updates, ms: `replaceState` is a
/// synchronous call into the browser (about a millisecond, more under load,
/// and rate-limited by Chromium), while typing changes the state many times a second.
const ADDRESS_INTERVAL_MS: f64 = 250.0;

thread_local! {
    /// The query waiting for the next address update, and when the last one ran.
    static ADDRESS: std::cell::RefCell<(Option<String>, f64)> = const { std::cell::RefCell::new((None, f64::NEG_INFINITY)) };
}

/// Keeps the address's query equal to `query`, at most every
/// [`ADDRESS_INTERVAL_MS`]: after the next frame (see [`soon`]) following a
/// quiet spell, else at the end of the interval with the latest query. Not
/// before that frame: `replaceState` is a same-document navigation, after
/// which Chromium loads the page's SVG icon again (several milliseconds,
/// which the repaint of an edit would wait for).
pub fn update_query(query: String) {
    if window().is_none() {
        return;
    }
    let waiting = ADDRESS.with(|a| {
        let mut a = a.borrow_mut();
        let waiting = a.0.is_some();
        a.0 = Some(query);
        waiting
    });
    if waiting {
        return;
    }
    soon(|| {
        let Some(window) = window() else {
            return;
        };
        let last = ADDRESS.with(|a| a.borrow().1);
        let delay = (last + ADDRESS_INTERVAL_MS - js_sys::Date::now())
            .clamp(0.0, ADDRESS_INTERVAL_MS) as i32;
        let flush = Closure::once_into_js(move || {
            let now = js_sys::Date::now();
            let query = ADDRESS.with(|a| {
                let mut a = a.borrow_mut();
                a.1 = now;
                a.0.take()
            });
            if let Some(q) = query {
                replace_query(&q);
            }
        });
        // A refused timer leaves the address as it was; the page works on.
        let _ = window
            .set_timeout_with_callback_and_timeout_and_arguments_0(flush.unchecked_ref(), delay);
    });
}

/// Replaces the query of the address with `query` without adding a history
/// entry (`history.replaceState`), when it differs.
pub fn replace_query(query: &str) {
    let Some(window) = window() else {
        return;
    };
    let location = window.location();
    let wanted = format!("?{query}");
    if location.search().ok().as_deref() == Some(wanted.as_str()) {
        return;
    }
    let url = format!(
        "{}{wanted}{}",
        location.pathname().unwrap_or_default(),
        location.hash().unwrap_or_default()
    );
    if let Ok(history) = window.history() {
        // A refused replacement leaves the old address; the page works on.
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}

/// Where the calculator is published, ending in `/`: the build's public base
/// URL (`<meta name="vramfit-base">`, set by scripts/publish.sh) when it has
/// one, else the folder of this page.
pub fn base_url() -> String {
    let Some(window) = window() else {
        return String::new();
    };
    let meta = window
        .document()
        .and_then(|d| d.query_selector("meta[name='vramfit-base']").ok().flatten())
        .and_then(|m| m.get_attribute("content"))
        .filter(|c| c.starts_with("https://") || c.starts_with("http://"));
    if let Some(base) = meta {
        return if base.ends_with('/') {
            base
        } else {
            format!("{base}/")
        };
    }
    let location = window.location();
    let path = location.pathname().unwrap_or_default();
    let folder = path.rsplit_once('/').map_or("/", |(dir, _)| dir);
    format!(
        "{}{}/",
        location.origin().unwrap_or_default(),
        folder.trim_end_matches('/')
    )
}

/// Copies `text` to the clipboard and emits whether it worked. Where the
/// clipboard is unavailable (an insecure page, a refused permission) the
/// text of the field with id `field` is selected for the user to copy.
pub fn copy_text(text: &str, field: &str, done: Callback<bool>) {
    let select = {
        let field = field.to_string();
        move || {
            let el = window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id(&field));
            if let Some(input) = el
                .as_ref()
                .and_then(|e| e.dyn_ref::<web_sys::HtmlInputElement>())
            {
                input.select();
            } else if let Some(area) = el
                .as_ref()
                .and_then(|e| e.dyn_ref::<web_sys::HtmlTextAreaElement>())
            {
                area.select();
            }
        }
    };
    let Some(window) = window() else {
        return done.emit(false);
    };
    // `navigator.clipboard` is undefined outside secure contexts: check before calling it.
    let clipboard = js_sys::Reflect::get(&window.navigator(), &"clipboard".into())
        .ok()
        .filter(|c| c.is_object());
    let Some(clipboard) = clipboard else {
        select();
        return done.emit(false);
    };
    let promise = clipboard
        .unchecked_into::<web_sys::Clipboard>()
        .write_text(text);
    let ok = {
        let done = done.clone();
        Closure::<dyn FnMut(wasm_bindgen::JsValue)>::new(move |_| done.emit(true))
    };
    let failed = Closure::<dyn FnMut(wasm_bindgen::JsValue)>::new(move |_| {
        select();
        done.emit(false);
    });
    let _ = promise.then2(&ok, &failed);
    // Each copy keeps two small closures alive: the promise may settle at any time.
    ok.forget();
    failed.forget();
}

/// Shows a recoverable error when Rust code panics, instead of a dead page:
/// a notice in the page's language (read from `<html lang>`, which the app
/// keeps current) with a Reload button. The configuration survives: it is
/// in the page's address, which a reload reads back. The notice is built
/// from DOM nodes and text, never from markup.
#[cfg(feature = "app")]
pub fn install_panic_hook() {
    // Through Yew, which otherwise replaces any hook with its own when rendering.
    yew::set_custom_panic_hook(Box::new(|info| {
        let detail = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned());
        show_crash(detail.as_deref().unwrap_or(""));
    }));
}

/// The crash notice (see [`install_panic_hook`]); shown once.
#[cfg(feature = "app")]
fn show_crash(detail: &str) {
    let Some(document) = window().and_then(|w| w.document()) else {
        return;
    };
    if document.get_element_by_id("runtime-error").is_some() {
        return;
    }
    let lang = document
        .document_element()
        .and_then(|e| e.get_attribute("lang"))
        .map_or(crate::i18n::Lang::En, |l| crate::i18n::Lang::from_tag(&l));
    let (title, body, reload) = (
        t(lang, Key::CrashTitle),
        t(lang, Key::CrashBody),
        t(lang, Key::CrashReload),
    );
    let build = || -> Option<web_sys::Element> {
        let box_ = document.create_element("div").ok()?;
        box_.set_id("runtime-error");
        box_.set_class_name("notice notice-error crash");
        box_.set_attribute("role", "alert").ok()?;
        let strong = document.create_element("strong").ok()?;
        strong.set_text_content(Some(title));
        let text = document.create_element("span").ok()?;
        text.set_text_content(Some(&format!(" {body}")));
        let button = document.create_element("button").ok()?;
        button.set_attribute("type", "button").ok()?;
        button.set_id("crash-reload");
        button.set_class_name("link-button");
        button.set_text_content(Some(reload));
        let onclick = Closure::<dyn FnMut()>::new(|| {
            if let Some(location) = window().map(|w| w.location()) {
                let _ = location.reload();
            }
        });
        button
            .add_event_listener_with_callback("click", onclick.as_ref().unchecked_ref())
            .ok()?;
        // The page is going away on click; the listener lives as long as it.
        onclick.forget();
        box_.append_child(&strong).ok()?;
        box_.append_child(&text).ok()?;
        if !detail.is_empty() {
            let code = document.create_element("code").ok()?;
            code.set_text_content(Some(detail));
            box_.append_child(&code).ok()?;
        }
        box_.append_child(&button).ok()?;
        Some(box_)
    };
    let Some(notice) = build() else { return };
    let slot = document
        .query_selector("#app main, #widget main")
        .ok()
        .flatten()
        .or_else(|| document.body().map(Into::into));
    if let Some(slot) = slot {
        let _ = slot.prepend_with_node_1(&notice);
    }
}

/// Debug builds only: `#panic-test` in the address panics on purpose once
/// the page is up, so the browser suite can check the crash notice.
#[cfg(debug_assertions)]
pub fn panic_on_request() {
    let hash = window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    if hash == "#panic-test" {
        // Once the page is up (its language reflected on <html>), as a real crash would be.
        let crash = Closure::once_into_js(|| -> () { panic!("forced by #panic-test") });
        if let Some(window) = window() {
            let _ = window
                .set_timeout_with_callback_and_timeout_and_arguments_0(crash.unchecked_ref(), 1000);
        }
    }
}

/// The focused element's id and, for a text field, its caret (selection
/// start and end).
type KeptFocus = (String, Option<(u32, u32)>);

thread_local! {
    /// What was typed into the prerendered page before the app mounted.
    static PRERENDERED_EDITS: RefCell<Vec<(crate::fields::Field, String)>> = const { RefCell::new(Vec::new()) };
    /// The prerendered page's element that had the focus, and its caret.
    static PRERENDERED_FOCUS: RefCell<Option<KeptFocus>> = const { RefCell::new(None) };
    /// The largest batches the prerendered page's verdict shows, where the
    /// app starts from that page's settings with at most its batch changed.
    static PRERENDERED_LARGEST: std::cell::Cell<Option<(u64, u64)>> = const { std::cell::Cell::new(None) };
}

/// Keeps what was typed into the prerendered page's number fields (the
/// batch, the sequence length, the image size, the accumulation) before the
/// app mounts and replaces it, so that typing as the page appears is not
/// lost ([`take_prerendered_edits`] hands it to the app), and which of them
/// had the focus, with its caret ([`restore_prerendered_focus`] puts it on
/// the app's field). Nothing without a prerendered page.
pub fn keep_prerendered_edits() {
    use crate::fields::Field;
    let Some(document) = window().and_then(|w| w.document()) else {
        return;
    };
    if document.get_element_by_id("prerendered").is_none() {
        return;
    }
    let edits: Vec<(Field, String)> = [Field::Batch, Field::Seq, Field::Image, Field::Accum]
        .into_iter()
        .filter_map(|field| {
            let input = document
                .get_element_by_id(field.id())?
                .dyn_into::<web_sys::HtmlInputElement>()
                .ok()?;
            let value = input.value();
            (value != input.default_value()).then_some((field, value))
        })
        .collect();
    // The page's largest batches answer the app's first estimate too when
    // nothing but the batch changed (they do not depend on it), and the
    // address adds no settings (see `hydratable_root`).
    let unchanged = edits.iter().all(|(field, _)| *field == Field::Batch)
        && document
            .location()
            .is_some_and(|location| !address_has_settings(&location));
    let largest = document
        .query_selector("#prerendered #verdict")
        .ok()
        .flatten()
        .filter(|_| unchanged)
        .and_then(|verdict| {
            let read = |name: &str| verdict.get_attribute(name)?.parse::<u64>().ok();
            Some((read("data-max-batch")?, read("data-margin-batch")?))
        });
    PRERENDERED_LARGEST.with(|l| l.set(largest));
    PRERENDERED_EDITS.with(|e| *e.borrow_mut() = edits);
    let focus = document
        .active_element()
        .filter(|el| !el.id().is_empty())
        .map(|el| {
            let caret = el.dyn_ref::<web_sys::HtmlInputElement>().and_then(|input| {
                match (input.selection_start(), input.selection_end()) {
                    (Ok(Some(start)), Ok(Some(end))) => Some((start, end)),
                    _ => None,
                }
            });
            (el.id(), caret)
        });
    PRERENDERED_FOCUS.with(|f| *f.borrow_mut() = focus);
}

/// Whether anything was typed into the prerendered page: it then shows
/// numbers the app no longer has, and is replaced rather than hydrated.
pub fn prerendered_edits_kept() -> bool {
    PRERENDERED_EDITS.with(|e| !e.borrow().is_empty())
}

/// Puts the focus the prerendered page had (and a text field's caret) on the
/// app's element of the same id, once: where the app replaced that page, in
/// the task that replaced it, so a key typed next reaches the new field.
pub fn restore_prerendered_focus() {
    let Some((id, caret)) = PRERENDERED_FOCUS.with(|f| f.borrow_mut().take()) else {
        return;
    };
    focus(&id);
    let input = window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(&id))
        .and_then(|el| el.dyn_into::<web_sys::HtmlInputElement>().ok());
    if let (Some(input), Some((start, end))) = (input, caret) {
        let _ = input.set_selection_range(start, end);
    }
}

/// Whether the address carries settings (a query or a fragment), or cannot
/// be read: the page is then not the default one.
pub fn address_has_settings(location: &web_sys::Location) -> bool {
    let settings = |part: Result<String, wasm_bindgen::JsValue>| part.map_or(true, |p| p.len() > 1);
    settings(location.search()) || settings(location.hash())
}

/// The element holding the prerendered default page, where the app starts
/// with exactly that page and can hydrate it: early.js showed it (no
/// settings in the address, a browser language the app shows in English),
/// and the address still has no settings. The loading shell beside it goes,
/// and the element loses its id: from now on it is the app, not a page the
/// app will replace (boot.js's error notices look for that id). `None`
/// anywhere else: the app then builds its page from scratch. Also `None`
/// when the last hydration in this tab never finished ([`hydrated`] did not
/// run: it stopped on a page it could not adopt), so Reload, which the
/// crash notice offers, starts the app the other way.
pub fn hydratable_root() -> Option<web_sys::Element> {
    let window = window()?;
    if session_flag(&window, SessionFlag::Get).is_some_and(|set| set) {
        return None;
    }
    let document = window.document()?;
    let root = document.get_element_by_id("prerendered")?;
    // `no-prerender`: early.js hid it. `translated-*`: a browser's page
    // translation (Chrome's) rewrote its text into `<font>` elements, which
    // hydration would find in place of the app's own nodes.
    let hidden = document
        .document_element()
        .and_then(|html| html.get_attribute("class"))
        .is_some_and(|class| {
            class
                .split_whitespace()
                .any(|c| c == "no-prerender" || c.starts_with("translated-"))
        })
        || root.query_selector("font").ok().flatten().is_some()
        // boot.js's first-edit module answered an edit: the page holds its
        // verdict, not the app's render, even where the fields were typed back.
        || root.has_attribute("data-edited");
    let location = window.location();
    if hidden || address_has_settings(&location) || initial_prefs().lang != Prefs::default().lang {
        return None;
    }
    if let Some(shell) = document.query_selector(".boot-shell").ok().flatten() {
        shell.remove();
    }
    // The placeholder comments vramfit-prerender wrote the page between:
    // hydration expects the app's first node at once.
    for marker in [root.first_child(), root.last_child()]
        .into_iter()
        .flatten()
    {
        let placeholder = marker.node_type() == web_sys::Node::COMMENT_NODE
            && matches!(
                marker.node_value().as_deref().map(str::trim),
                Some("prerender" | "/prerender")
            );
        if placeholder {
            let _ = root.remove_child(&marker);
        }
    }
    root.remove_attribute("id").ok()?;
    // Cleared by `hydrated` once the hydrating render is in place.
    let _ = session_flag(&window, SessionFlag::Set);
    Some(root)
}

/// Says the app's first render is in place: a hydration begun by
/// [`hydratable_root`] finished.
pub fn hydrated() {
    if let Some(window) = window() {
        let _ = session_flag(&window, SessionFlag::Clear);
    }
}

/// The `sessionStorage` key that marks a hydration begun and not finished.
const HYDRATING_KEY: &str = "vramfit:hydrating";

/// What [`session_flag`] does with [`HYDRATING_KEY`].
#[derive(Clone, Copy)]
enum SessionFlag {
    Get,
    Set,
    Clear,
}

/// Reads, sets or clears [`HYDRATING_KEY`] in `sessionStorage`: `Some(true)`
/// when reading finds it set. `None` where there is no storage (a sandboxed
/// frame, storage turned off: such a page hydrates every time).
fn session_flag(window: &web_sys::Window, op: SessionFlag) -> Option<bool> {
    use js_sys::{Function, Reflect};
    let storage = Reflect::get(window, &"sessionStorage".into())
        .ok()
        .filter(|s| s.is_object())?;
    let method = |name: &str| {
        Reflect::get(&storage, &name.into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
    };
    let key = wasm_bindgen::JsValue::from_str(HYDRATING_KEY);
    match op {
        SessionFlag::Get => {
            let value = method("getItem")?.call1(&storage, &key).ok()?;
            Some(!value.is_null() && !value.is_undefined())
        }
        SessionFlag::Set => {
            method("setItem")?.call2(&storage, &key, &"1".into()).ok()?;
            Some(true)
        }
        SessionFlag::Clear => {
            method("removeItem")?.call1(&storage, &key).ok()?;
            Some(false)
        }
    }
}

/// The largest batches (usable memory, safety margin) the prerendered page
/// shows, which [`keep_prerendered_edits`] kept where they answer the app's
/// first configuration too (the core checks them before taking them).
pub fn prerendered_largest() -> Option<(u64, u64)> {
    PRERENDERED_LARGEST.with(std::cell::Cell::get)
}

/// The edits [`keep_prerendered_edits`] kept, once.
pub fn take_prerendered_edits() -> Vec<(crate::fields::Field, String)> {
    PRERENDERED_EDITS.with(|e| std::mem::take(&mut *e.borrow_mut()))
}
