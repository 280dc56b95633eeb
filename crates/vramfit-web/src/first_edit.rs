//! The first-edit module: the page's answer to what is typed into the
//! prerendered default page before the app has started.
//!
//! The app's module is most of the page's bytes; on a slow network it
//! arrives seconds after the prerendered page has painted. This module is
//! the estimator with the verdict's components, and no more (a binary of
//! its own, `src/bin/vramfit-first-edit.rs`, built with the feature
//! `first-edit`); `boot.js` loads it before the app's and, on an edit of the
//! page's number fields, puts the nodes [`render`] returns in place of the
//! page's verdict, its summary line and the phone's verdict bar. The app then starts from the edits as it always does
//! ([`crate::browser::keep_prerendered_edits`]) and replaces the page.

use crate::browser;
use crate::catalog::Catalog;
use crate::components::{Headline, VerdictBar};
use crate::fields::Field;
use crate::inputs::{Inputs, Shape};
use crate::prefs::Prefs;
use crate::present::Glance;
use crate::report::{Memo, Report};
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`FirstEdit`].
#[derive(Properties, PartialEq)]
pub struct FirstEditProps {
    /// The display preferences the app would start with.
    pub prefs: Prefs,
    /// The verdict at a glance, for the phone's bar.
    pub glance: Option<Glance>,
    /// The report for the edited page.
    pub report: Rc<Report>,
    /// Told once the nodes are in place.
    pub on_rendered: Callback<()>,
}

/// The verdict bar, the summary line and the verdict, as the app renders
/// them (with callbacks that do nothing: [`render`] hands out copies of
/// the nodes, and the app that replaces them answers the buttons).
#[function_component]
pub fn FirstEdit(props: &FirstEditProps) -> Html {
    {
        let on_rendered = props.on_rendered.clone();
        use_effect_with((), move |()| on_rendered.emit(()));
    }
    html! {
        <ContextProvider<Prefs> context={props.prefs}>
            if let Some(glance) = props.glance {
                <VerdictBar {glance} target="verdict" />
            }
            <Headline report={props.report.clone()} on_action={Callback::noop()} />
        </ContextProvider<Prefs>>
    }
}

/// The verdict bar, the summary and the verdict for the page's fields as
/// they are now (read as the app will read them on start), as nodes of a
/// fragment, or `None` where the app would show no verdict for them (a
/// field left empty or out of range, which the app words beside the field):
/// the page then leaves the verdict as it was, marked as updating.
pub async fn render() -> Option<web_sys::DocumentFragment> {
    // The prerendered page is English (early.js hides it in a Chinese
    // browser), and so is this module (`crate::i18n::t`).
    let prefs = browser::initial_prefs();
    if prefs.lang != crate::i18n::Lang::En {
        return None;
    }
    // The prerendered page is the page at an address without settings
    // (early.js hides it elsewhere): the form's defaults.
    let window = web_sys::window()?;
    if browser::address_has_settings(&window.location()) {
        return None;
    }
    browser::keep_prerendered_edits();
    let report = answer(
        browser::take_prerendered_edits(),
        browser::prerendered_largest(),
    )?;
    // Rendered by Yew into an element of no page, whose nodes are then
    // copied out: nodes built as the app builds them, no HTML parsed.
    let document = window.document()?;
    let root = document.create_element("div").ok()?;
    let mut done = None;
    let rendered = js_sys::Promise::new(&mut |resolve, _| done = Some(resolve));
    let done = done?;
    let props = FirstEditProps {
        prefs,
        glance: Glance::of(&report.estimate),
        report: Rc::new(report),
        on_rendered: Callback::from(move |()| {
            let _ = done.call0(&wasm_bindgen::JsValue::NULL);
        }),
    };
    let app = yew::Renderer::<FirstEdit>::with_root_and_props(root.clone(), props).render();
    let _ = wasm_bindgen_futures::JsFuture::from(rendered).await;
    let fragment = document.create_document_fragment();
    let copy = root.clone_node_with_deep(true).ok();
    app.destroy();
    while let Some(node) = copy.as_ref()?.first_child() {
        fragment.append_child(&node).ok()?;
    }
    Some(fragment)
}

/// The family of the default page's model. The prerendered page's model
/// list holds that model alone, so an edit before the app starts is always
/// of it; reading one family's presets (a field of a constant, so no other
/// family's list is linked) keeps every other preset out of this module
/// (about 30 KB of code). Where the default model is of another family,
/// [`answer`] finds no model and the page waits for the app; a test below
/// holds the two together.
const DEFAULT_FAMILY: vramfit_core::models::family::Family = vramfit_core::models::gpt2::FAMILY;

/// The report for the default page with `edits` typed over its fields,
/// taking the page's largest batches (`largest`) where they check out.
fn answer(edits: Vec<(Field, String)>, largest: Option<(u64, u64)>) -> Option<Report> {
    let catalog = Catalog {
        models: (DEFAULT_FAMILY.presets)(),
        gpus: vramfit_core::gpu_presets(),
    };
    answer_from(&catalog, edits, largest)
}

/// [`answer`] with the presets of `catalog`.
fn answer_from(
    catalog: &Catalog,
    edits: Vec<(Field, String)>,
    largest: Option<(u64, u64)>,
) -> Option<Report> {
    let mut inputs = Inputs::default();
    for (field, value) in edits {
        inputs.set(field, value);
    }
    let model = catalog.model(&inputs.model)?;
    let kind = model.spec.input_kind();
    let shape = Shape {
        kind,
        experts: model.spec.routed_experts().is_some(),
    };
    let (cfg, serving) = inputs.settings(shape).ok()?;
    serving.check(&cfg).ok()?;
    let gpu = catalog.gpu(&inputs.gpu_id())?;
    let mut memo = Memo::seeded(largest);
    Report::first(
        &model.spec,
        &cfg,
        &gpu,
        model.name,
        Field::input_size(kind),
        &mut memo,
        None,
    )
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_model_is_in_the_family_the_first_edit_reads() {
        let default = Inputs::default().model;
        let ids: Vec<&str> = (DEFAULT_FAMILY.presets)().iter().map(|m| m.id).collect();
        assert!(
            ids.contains(&default.as_str()),
            "the page's default model {default} is not among {ids:?}: point DEFAULT_FAMILY at its family"
        );
    }

    #[test]
    fn an_edit_of_the_default_page_is_answered_as_with_every_preset() {
        for batch in ["9", "64"] {
            let edits = || vec![(Field::Batch, batch.to_string())];
            let report = answer(edits(), None).expect("the default page has a verdict");
            let app = answer_from(&Catalog::load(), edits(), None).expect("the app's catalog too");
            assert_eq!(report.estimate.config.batch.to_string(), batch);
            assert_eq!(
                report.estimate.device_used_bytes,
                app.estimate.device_used_bytes
            );
            assert_eq!(
                report.estimate.gpu.map(|g| (g.fits, g.max_batch)),
                app.estimate.gpu.map(|g| (g.fits, g.max_batch))
            );
        }
    }
}
