//! Entry point of the first-edit module (`vramfit_web::first_edit`): what
//! `boot.js` calls on an edit of the prerendered page before the app starts.

use wasm_bindgen::prelude::wasm_bindgen;

/// The verdict bar, summary and verdict for the prerendered page's fields
/// as they are now, as the nodes of a fragment; `undefined` where the app
/// would show no verdict for them.
#[wasm_bindgen]
pub async fn render() -> Option<web_sys::DocumentFragment> {
    vramfit_web::first_edit::render().await
}

fn main() {}
