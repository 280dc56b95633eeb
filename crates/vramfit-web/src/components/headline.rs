//! The summary line and the verdict: what an edit repaints first, in the
//! app (inside [`super::Results`]) and, before the app has started, in the
//! first-edit module (`crate::first_edit`), which renders this component
//! into the prerendered page so the page and the app word it alike.

use super::Verdict;
use crate::hooks::use_prefs;
use crate::report::Report;
use crate::state::{Action, Field};
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`Headline`].
#[derive(Properties, PartialEq)]
pub struct HeadlineProps {
    /// The report whose summary and verdict are shown.
    pub report: Rc<Report>,
    /// The longest sequence or largest image that fits at this batch, once asked for.
    #[prop_or_default]
    pub max_input: Option<u64>,
    /// Emits what the verdict's buttons ask for (the largest batch or
    /// input, a precision the GPU has).
    pub on_action: Callback<Action>,
    /// What goes between the summary and the verdict (the link's extra settings).
    #[prop_or_default]
    pub children: Html,
    /// Whether the verdict offers the largest batch (not where the batch is locked).
    #[prop_or(true)]
    pub can_use: bool,
    /// The widget's verdict: no other precision and no largest input offered.
    #[prop_or_default]
    pub compact: bool,
}

/// The summary line (model, parameters, shape), then the verdict.
#[function_component]
pub fn Headline(props: &HeadlineProps) -> Html {
    let lang = use_prefs().lang;
    let r = &props.report;
    let e = &r.estimate;
    // Kept across renders (a new callback would re-render the verdict every time).
    let on_use_batch = use_callback(props.on_action.clone(), |batch: u64, on_action| {
        on_action.emit(Action::SetField(Field::Batch, batch.to_string()))
    });
    let on_use_precision = use_callback(
        props.on_action.clone(),
        |p: vramfit_core::Precision, on_action| on_action.emit(Action::SetPrecision(p)),
    );
    let on_find_input = use_callback(props.on_action.clone(), |(), on_action| {
        on_action.emit(Action::FindMaxInput)
    });
    let input = r.input;
    let on_use_input = use_callback(
        (props.on_action.clone(), input),
        |v: u64, (on_action, input)| {
            if let Some(field) = input {
                on_action.emit(Action::SetField(*field, v.to_string()));
            }
        },
    );
    html! {
        <>
            <p class="summary" id="summary">
                <span class="model-name" translate="no">{ r.model_name.clone() }</span>
                { " · " }{ r.details(lang) }
            </p>
            { props.children.clone() }
            if let Some(fit) = &e.gpu {
                <Verdict
                    gpu_name={crate::labels::gpu_name(&fit.id, &r.gpu_name, lang)}
                    fit={fit.clone()}
                    device_used={e.device_used_bytes}
                    batch={e.config.batch}
                    gpus={e.config.parallel.gpus_per_node.saturating_mul(e.config.parallel.nodes)}
                    {on_use_batch}
                    can_use={props.can_use}
                    on_use_precision={(!props.compact).then_some(on_use_precision)}
                    input={input.filter(|_| !props.compact)}
                    input_value={if input == Some(Field::Image) { e.config.image } else { e.config.seq }}
                    max_input={props.max_input}
                    {on_find_input}
                    {on_use_input}
                    beyond_trained={e.beyond_trained_context}
                />
            }
        </>
    }
}
