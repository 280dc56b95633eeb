//! # vramfit-web
//!
//! The vramfit calculator in the browser: a Yew app (client-side rendering,
//! compiled to WebAssembly) over [`vramfit_core`]. It has no estimation logic
//! of its own: [`state`] (with [`inputs`] and [`fields`] for what was typed,
//! [`import`] for a pasted `config.json`) turns the form into a
//! [`vramfit_core::TrainConfig`], and [`report`] calls the core for the
//! estimate, the batch curve and the technique comparison.
//!
//! Display is separate from state: [`i18n`] holds every string in English
//! and Simplified Chinese, [`prefs`] the language, byte units and theme,
//! [`present`], [`labels`], [`compare`], [`layers`] and [`chart`] turn
//! reports into display values and chart geometry, and [`messages`] words
//! the core's typed messages (trade-offs, advice, notes) in either language. [`components`] only
//! render props and emit callbacks; [`browser`] and [`hooks`] are the only
//! code that talks to the DOM outside rendering.
//!
//! The Benchmark tab ([`bench`], [`components::BenchTab`]) runs kernels and
//! layers on the user's GPU through a separate wasm module that it loads
//! only when opened, so the calculator's first load carries no wgpu.
//!
//! The address holds the state ([`url`] over the core's share links), so
//! any result can be linked to, and `embed.html` mounts the same state as
//! a compact [`components::Widget`] for other sites to embed (a binary of
//! its own, `src/bin/vramfit-widget.rs`, as is the Benchmark page's).
//!
//! Everything except the `mount` functions, [`browser`] and [`hooks`] runs natively too,
//! so state, translations and chart geometry are unit-tested without a
//! browser; `tests/e2e` drives the built page in headless Chromium.

pub mod bench;
pub mod browser;
pub mod catalog;
pub mod chart;
pub mod compare;
pub mod components;
pub mod custom;
pub mod fields;
#[cfg(feature = "first-edit")]
pub mod first_edit;

// The first-edit module's build speaks English only (`i18n::t`): never the app's.
#[cfg(all(feature = "first-edit", feature = "app"))]
compile_error!(
    "the features `first-edit` and `app` build different modules: build the first-edit module with --no-default-features"
);
pub mod frame;
pub mod hooks;
pub mod i18n;
pub mod import;
pub mod inputs;
pub mod labels;
pub mod layers;
pub mod measured;
pub mod messages;
pub mod planner;
pub mod prefs;
pub mod present;
pub mod report;
pub mod serve_report;
pub mod serving;
pub mod state;
pub mod url;

#[cfg(any(feature = "app", feature = "prerender"))]
use components::App;
#[cfg(feature = "app")]
use components::{BenchPage, Widget};

/// The id of the element the app replaces (see `www/index.html`).
pub const ROOT_ID: &str = "app";

/// The id of the element the embeddable widget replaces (see `www/embed.html`).
pub const WIDGET_ID: &str = "widget";

/// The id of the element the Benchmark page replaces (see `www/bench.html`).
pub const BENCH_PAGE_ID: &str = "bench-page";

/// Mounts [`App`] into the element with id [`ROOT_ID`] (`index.html`), or
/// into `<body>` when the page has none. Yew clears the root first, which
/// removes the page's static placeholder.
#[cfg(feature = "app")]
pub fn mount() {
    browser::install_panic_hook();
    #[cfg(debug_assertions)]
    browser::panic_on_request();
    // Keep what was typed into the prerendered page (the app starts from
    // it), and the field that had the focus.
    browser::keep_prerendered_edits();
    // A page typed into shows numbers the app no longer has: rather than
    // adopt it and render again at once (Yew renders every hydrated
    // component a second time), the app starts from the edits and replaces
    // it, in one estimate and one render.
    let root = if browser::prerendered_edits_kept() {
        None
    } else {
        browser::hydratable_root()
    };
    match root {
        // The prerendered page is the app's own first render: adopt its
        // elements rather than build them again (no new layout either).
        Some(root) => {
            yew::Renderer::<App>::with_root(root).hydrate();
        }
        None => mount_at::<App>(ROOT_ID),
    }
}

/// Mounts the [`Widget`] into the element with id [`WIDGET_ID`]
/// (`embed.html`, its own binary: a page embedding widgets does not load
/// the full calculator), or into `<body>`.
#[cfg(feature = "app")]
pub fn mount_widget() {
    browser::install_panic_hook();
    mount_at::<Widget>(WIDGET_ID);
}

/// Mounts the [`BenchPage`] into the element with id [`BENCH_PAGE_ID`]
/// (`bench.html`, its own binary), or into `<body>`.
#[cfg(feature = "app")]
pub fn mount_bench() {
    browser::install_panic_hook();
    mount_at::<BenchPage>(BENCH_PAGE_ID);
}

/// The default page as HTML, rendered by Yew's server renderer with
/// hydration markers: the app hydrates it where it starts with exactly that
/// page ([`browser::hydratable_root`]), and replaces it elsewhere.
#[cfg(feature = "prerender")]
pub async fn prerender() -> String {
    yew::LocalServerRenderer::<App>::new()
        .hydratable(true)
        .render()
        .await
}

/// Renders `C` into the element with id `id`, or into `<body>` without one.
#[cfg(feature = "app")]
fn mount_at<C: yew::BaseComponent<Properties = ()>>(id: &str) {
    match web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
    {
        Some(root) => yew::Renderer::<C>::with_root(root).render(),
        None => yew::Renderer::<C>::new().render(),
    };
}
