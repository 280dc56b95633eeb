//! The results column: a notice when the inputs are invalid, the summary line,
//! the verdict, the three peak numbers and the breakdown.

use super::{Notice, PeakBreakdown, PeakNumbers, Verdict};
use crate::state::{Action, Field, Report};
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`Results`].
#[derive(Properties, PartialEq)]
pub struct ResultsProps {
    /// The last valid report.
    pub report: Rc<Report>,
    /// Whether the report is older than the (invalid) inputs.
    pub stale: bool,
    /// A problem not tied to a field, if any.
    #[prop_or_default]
    pub problem: Option<String>,
    /// Emits changes made from the results (the "use largest batch" button).
    pub on_action: Callback<Action>,
}

/// Everything right of (or below) the form.
#[function_component]
pub fn Results(props: &ResultsProps) -> Html {
    let e = &props.report.estimate;
    let notice = match (&props.problem, props.stale) {
        (Some(problem), _) => html! { <Notice kind="error" text={problem.clone()} /> },
        (None, true) => html! { <Notice kind="info" text="Showing the last valid result. Fix the highlighted field to update it." /> },
        (None, false) => html! {},
    };
    let on_use_batch = {
        let on_action = props.on_action.clone();
        Callback::from(move |batch: u64| on_action.emit(Action::SetField(Field::Batch, batch.to_string())))
    };
    html! {
        <>
            { notice }
            <div
                id="results"
                class={classes!("results", props.stale.then_some("stale"))}
                data-state={if props.stale { "stale" } else { "fresh" }}
            >
                <p class="summary" id="summary">{ props.report.summary() }</p>
                if let Some(fit) = &e.gpu {
                    <Verdict
                        gpu_name={props.report.gpu_name.clone()}
                        fit={fit.clone()}
                        device_used={e.device_used_bytes}
                        batch={e.config.batch}
                        {on_use_batch}
                    />
                }
                <PeakNumbers allocated={e.peak_allocated_bytes} reserved={e.peak_reserved_bytes} device={e.device_used_bytes} />
                <PeakBreakdown at_peak={e.at_peak} phase={e.peak_phase} step={e.peak_step} op={e.peak_op.clone()} />
            </div>
        </>
    }
}
