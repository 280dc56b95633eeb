//! # vramfit-web
//!
//! The vramfit calculator in the browser: a Yew app (client-side rendering,
//! compiled to WebAssembly) over [`vramfit_core`]. It has no estimation logic
//! of its own: [`state`] (with [`fields`] for the typed numbers) turns what
//! the user typed into a [`vramfit_core::TrainConfig`] and calls
//! [`vramfit_core::estimate()`]; [`catalog`] lists the presets offered;
//! [`present`] and [`labels`] turn the report into display values;
//! [`components`] only render props and emit callbacks.
//!
//! Everything except [`mount`] runs natively too, so the state and formatting
//! are unit-tested without a browser; `tests/e2e` drives the built page in
//! headless Chromium.

pub mod catalog;
pub mod components;
pub mod fields;
pub mod labels;
pub mod present;
pub mod state;

use components::App;

/// The id of the element the app replaces (see `www/index.html`).
pub const ROOT_ID: &str = "app";

/// Mounts [`App`] into the element with id [`ROOT_ID`], or into `<body>` when
/// the page has no such element. Yew clears the root first, which removes the
/// page's "Loading…" placeholder.
pub fn mount() {
    let root = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id(ROOT_ID));
    match root {
        Some(root) => yew::Renderer::<App>::with_root(root).render(),
        None => yew::Renderer::<App>::new().render(),
    };
}
