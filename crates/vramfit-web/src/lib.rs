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
//! reports into display values and chart geometry. [`components`] only
//! render props and emit callbacks; [`browser`] and [`hooks`] are the only
//! code that talks to the DOM outside rendering.
//!
//! Everything except [`mount`], [`browser`] and [`hooks`] runs natively too,
//! so state, translations and chart geometry are unit-tested without a
//! browser; `tests/e2e` drives the built page in headless Chromium.

pub mod browser;
pub mod catalog;
pub mod chart;
pub mod compare;
pub mod components;
pub mod fields;
pub mod hooks;
pub mod i18n;
pub mod import;
pub mod inputs;
pub mod labels;
pub mod layers;
pub mod prefs;
pub mod present;
pub mod report;
pub mod state;

use components::App;

/// The id of the element the app replaces (see `www/index.html`).
pub const ROOT_ID: &str = "app";

/// Mounts [`App`] into the element with id [`ROOT_ID`], or into `<body>` when
/// the page has no such element. Yew clears the root first, which removes the
/// page's static placeholder.
pub fn mount() {
    let root = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id(ROOT_ID));
    match root {
        Some(root) => yew::Renderer::<App>::with_root(root).render(),
        None => yew::Renderer::<App>::new().render(),
    };
}
