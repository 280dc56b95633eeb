//! The first-edit module: the page's answer to what is typed into the
//! prerendered default page before the app has started.
//!
//! The app's module is most of the page's bytes; on a slow network it
//! arrives seconds after the prerendered page has painted. This module is
//! the estimator with the verdict's components, and no more (a binary of
//! its own, `src/bin/vramfit-first-edit.rs`, built with the feature
//! `first-edit`). It runs in a Web Worker that `early.js` starts before the
//! page is parsed, so its download, its compile and the compile of every
//! function its first answer calls take the second core, not the thread
//! that lays out and paints the page: on an edit of the page's number
//! fields the page posts them, [`render`] answers with the HTML of the
//! verdict bar, the summary line and the verdict as the app renders them
//! (Yew's server renderer, which needs no document), and the page puts
//! them in place of its own. The app then starts from the edits as it
//! always does ([`crate::browser::keep_prerendered_edits`]) and replaces
//! the page.

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
}

/// The verdict bar, the summary line and the verdict, as the app renders
/// them (with callbacks that do nothing: the page takes their markup, and
/// the app that replaces it answers the buttons).
#[function_component]
pub fn FirstEdit(props: &FirstEditProps) -> Html {
    html! {
        <ContextProvider<Prefs> context={props.prefs}>
            if let Some(glance) = props.glance {
                <VerdictBar {glance} target="verdict" />
            }
            <Headline report={props.report.clone()} on_action={Callback::noop()} />
        </ContextProvider<Prefs>>
    }
}

/// What the page posts on an edit: its number fields as they are, and what
/// it shows beside them.
#[derive(Debug, Clone, PartialEq)]
pub struct PageState {
    /// `(id, value)` of each of the page's number fields whose value is not
    /// its default (`batch`, `seq`, `image`, `accum`; other ids are ignored).
    pub edited: Vec<(String, String)>,
    /// The largest batches the page's verdict was rendered with
    /// (`data-max-batch`, `data-margin-batch`).
    pub largest: Option<(u64, u64)>,
    /// The browser's language tag.
    pub language: String,
    /// Whether the browser prefers a dark theme.
    pub dark: bool,
}

/// The HTML of the verdict bar, the summary and the verdict for the page's
/// fields as they are, read as the app will read them on start, or `None`
/// where the app would show no verdict for them (a field left empty or out
/// of range, which the app words beside the field) or the page is not the
/// English one this module speaks (`crate::i18n::t`): the page then leaves
/// the verdict as it was, marked as updating.
pub async fn render(page: PageState) -> Option<String> {
    let prefs = Prefs::from_browser(&page.language, page.dark);
    if prefs.lang != crate::i18n::Lang::En {
        return None;
    }
    let edits = edits_of(&page.edited);
    let largest = crate::browser::seed_for(&edits, page.largest);
    let report = answer(edits, largest)?;
    let props = FirstEditProps {
        prefs,
        glance: Glance::of(&report.estimate),
        report: Rc::new(report),
    };
    Some(
        yew::LocalServerRenderer::<FirstEdit>::with_props(props)
            .hydratable(false)
            .render()
            .await,
    )
}

/// The edits of the page's number fields, by their ids.
fn edits_of(edited: &[(String, String)]) -> Vec<(Field, String)> {
    crate::browser::PRERENDERED_FIELDS
        .into_iter()
        .filter_map(|field| {
            let (_, value) = edited.iter().find(|(id, _)| id == field.id())?;
            Some((field, value.clone()))
        })
        .collect()
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

    fn rendered(page: PageState) -> Option<String> {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime")
            .block_on(render(page))
    }

    fn page(edited: &[(&str, &str)], largest: Option<(u64, u64)>, language: &str) -> PageState {
        PageState {
            edited: edited
                .iter()
                .map(|(id, value)| (id.to_string(), value.to_string()))
                .collect(),
            largest,
            language: language.into(),
            dark: false,
        }
    }

    #[test]
    fn a_typed_batch_is_rendered_as_the_verdict_bar_summary_and_verdict() {
        let html =
            rendered(page(&[("batch", "9"), ("unknown", "1")], None, "en-US")).expect("an answer");
        for id in ["verdict-bar", "summary", "verdict"] {
            assert!(html.contains(&format!("id=\"{id}\"")), "no #{id} in {html}");
        }
        assert!(
            html.contains("batch 9 "),
            "the summary names the typed batch: {html}"
        );
        // Server-rendered without hydration markers: markup to put in place.
        assert!(!html.contains("<!--"), "{html}");
        // The largest batches come from the page when only the batch changed,
        // and are searched for otherwise: the same answer either way.
        let searched = answer(vec![(Field::Batch, "9".into())], None).expect("an answer");
        let gpu = searched.estimate.gpu.as_ref().expect("a GPU");
        let (max, margin) = (gpu.max_batch, gpu.margin_batch);
        assert!(
            html.contains(&format!("data-max-batch=\"{max}\"")),
            "{html}"
        );
        let seeded = rendered(page(&[("batch", "9")], Some((max, margin)), "en"));
        assert_eq!(seeded.as_deref(), Some(html.as_str()));
    }

    #[test]
    fn no_answer_where_the_app_shows_none_or_the_page_is_not_english() {
        assert_eq!(rendered(page(&[("batch", "")], None, "en")), None);
        assert_eq!(rendered(page(&[("batch", "9")], None, "zh-CN")), None);
    }
}
