//! Entry point of the first-edit module (`vramfit_web::first_edit`): what
//! the page's first-edit worker (`early.js`) calls on an edit of the
//! prerendered page before the app starts.

use vramfit_web::first_edit::PageState;
use wasm_bindgen::prelude::wasm_bindgen;

/// The HTML of the verdict bar, summary and verdict for the prerendered
/// page's fields as they are: `ids` and `values` of the number fields the
/// user changed, the largest batches its verdict shows (its `data-max-batch`
/// and `data-margin-batch`, read as the app reads them), the browser's language
/// and whether it prefers a dark theme. `undefined` where the app would
/// show no verdict for them.
#[wasm_bindgen]
pub async fn render(
    ids: Vec<String>,
    values: Vec<String>,
    max_batch: Option<String>,
    margin_batch: Option<String>,
    language: String,
    dark: bool,
) -> Option<String> {
    let read = |n: Option<String>| n?.parse::<u64>().ok();
    let largest = read(max_batch).zip(read(margin_batch));
    vramfit_web::first_edit::render(PageState {
        edited: ids.into_iter().zip(values).collect(),
        largest,
        language,
        dark,
    })
    .await
}

fn main() {}
