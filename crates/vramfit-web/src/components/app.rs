//! The root component: owns the state and lays out the form and the results.

use super::{ConfigForm, Notice, Results};
use crate::state::{Action, AppState};
use yew::prelude::*;

/// The whole calculator.
#[function_component]
pub fn App() -> Html {
    let state = use_reducer(AppState::default);
    let on_action = {
        let dispatcher = state.dispatcher();
        Callback::from(move |action: Action| dispatcher.dispatch(action))
    };
    let results = match &state.report {
        Some(report) => html! {
            <Results report={report.clone()} stale={state.stale} problem={state.problem.clone()} on_action={on_action.clone()} />
        },
        // Only reachable if the defaults themselves were rejected.
        None => html! {
            <Notice kind="error" text={state.problem.clone().unwrap_or_else(|| "Fix the highlighted fields to see an estimate.".to_string())} />
        },
    };
    html! {
        <div class="layout">
            <ConfigForm
                catalog={state.catalog.clone()}
                inputs={state.inputs.clone()}
                errors={state.errors.clone()}
                fields={state.visible_fields()}
                on_action={on_action}
            />
            <div class="results-column">{ results }</div>
        </div>
    }
}
