//! The results column: a notice when the inputs are invalid, the summary
//! line, the verdict, the three peak numbers, the breakdown, the comparison
//! strip, the two charts and the per-layer table.

use super::{
    BatchChart, GpuFinder, Headline, LayerTable, LinkExtras, MeasuredCard, Notice, PeakBreakdown,
    PeakNumbers, PlannerPanel, Techniques, TimelineChart,
};
use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use crate::layers::LayerSort;
use crate::present::{bytes, group_digits};
use crate::report::Report;
use crate::state::{Action, Problem};
use std::rc::Rc;
use vramfit_core::share::Setting;
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
    pub problem: Option<Problem>,
    /// How the per-layer table is sorted.
    pub layer_sort: LayerSort,
    /// Settings in effect that the form does not show (a link set them).
    #[prop_or_default]
    pub extras: Vec<Setting>,
    /// The planner's answer for these inputs, if it ran.
    #[prop_or_default]
    pub plans: Option<Rc<crate::planner::Plans>>,
    /// The longest sequence or largest image that fits at this batch, once asked for.
    #[prop_or_default]
    pub max_input: Option<u64>,
    /// The GPUs this configuration fits on, once asked for.
    #[prop_or_default]
    pub gpu_options: Option<Rc<crate::planner::GpuOptions>>,
    /// Whether the cards below the peak breakdown are shown yet (see
    /// [`crate::state::AppState::revealed`]).
    #[prop_or(true)]
    pub revealed: bool,
    /// Emits changes made from the results (use the largest batch, apply a
    /// technique, sort the table).
    pub on_action: Callback<Action>,
}

/// Everything right of (or below) the form.
#[function_component]
pub fn Results(props: &ResultsProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let r = &props.report;
    let e = &r.estimate;
    // A measurement brought to compare with: the card reads it, the
    // timeline draws it. It lives here, apart from the configuration, so a
    // bad file never touches the inputs.
    let measured = use_state(|| None::<Rc<(String, vramfit_core::measured::Measurement)>>);
    let on_measured = {
        let measured = measured.clone();
        use_callback(
            (),
            move |m: Option<Rc<(String, vramfit_core::measured::Measurement)>>, ()| measured.set(m),
        )
    };
    let measured_timeline = use_memo((*measured).clone(), |m| {
        m.as_ref().map(|m| {
            Rc::new(
                m.1.timeline
                    .iter()
                    .map(|p| p.allocated_bytes)
                    .collect::<Vec<_>>(),
            )
        })
    });
    let measured_timeline = (*measured_timeline).clone();
    let notice = match (&props.problem, props.stale) {
        (Some(problem), _) => html! { <Notice kind="error" text={problem.message(lang)} /> },
        (None, true) => html! { <Notice kind="info" text={t(lang, Key::StaleNotice)} /> },
        (None, false) => html! {},
    };
    let on_clear = use_callback(props.on_action.clone(), |(), on_action| {
        on_action.emit(Action::ClearExtras)
    });
    // The cards below the verdict follow a complete report: while a new
    // estimate waits for its curve and comparison (computed after the frame
    // that shows the verdict), they keep the last complete one, whose props
    // compare equal by pointer, so a batch change repaints only the summary
    // and the verdict first. A completion that failed
    // (a problem is shown) leaves them on the current report.
    let settled = use_mut_ref(|| Rc::clone(r));
    if r.complete || props.problem.is_some() {
        *settled.borrow_mut() = Rc::clone(r);
    }
    let below = Rc::clone(&settled.borrow());
    let b = &below.estimate;
    let trains = e.config.mode != vramfit_core::config::Mode::Inference;
    let mut notes: Vec<(&'static str, String)> = Vec::new();
    if e.host_ram_bytes.0 > 0 {
        notes.push((
            "host-ram",
            tf(lang, Key::HostRam, &[&bytes(e.host_ram_bytes, prefs.units)]),
        ));
    }
    if let Some(ds) = &e.deepspeed_estimate {
        let gpu = bytes(vramfit_core::Bytes(ds.gpu_bytes), prefs.units);
        let cpu = bytes(vramfit_core::Bytes(ds.cpu_bytes), prefs.units);
        notes.push((
            "deepspeed-estimate",
            tf(lang, Key::DeepspeedEstimate, &[&gpu, &cpu]),
        ));
    }
    if let Some(n) = &e.nccl_buffers {
        notes.push((
            "nccl-buffers",
            tf(
                lang,
                Key::NcclBuffers,
                &[
                    &bytes(n.low, prefs.units),
                    &bytes(n.high, prefs.units),
                    // One channel's send and receive buffers.
                    &bytes(
                        vramfit_core::nccl::ring(1, vramfit_core::nccl::P2pMode::Write),
                        prefs.units,
                    ),
                ],
            ),
        ));
        if n.nvls > vramfit_core::Bytes::ZERO {
            notes.push((
                "nccl-nvls",
                tf(lang, Key::NcclNvls, &[&bytes(n.nvls, prefs.units)]),
            ));
        }
    }
    if let Some(note) = &e.rank {
        notes.push(("rank-note", crate::messages::rank_note(note, lang)));
    }
    if let Some(r) = &e.routing {
        let mut text = match r.every_expert {
            Some(n) => tf(
                lang,
                Key::RoutingEveryExpert,
                &[
                    &bytes(r.expert_activation_bytes, prefs.units),
                    &n.to_string(),
                ],
            ),
            None => tf(
                lang,
                Key::RoutingNote,
                &[
                    &bytes(r.expert_activation_bytes, prefs.units),
                    &r.capacity_factor.to_string(),
                    &bytes(r.padded_extra_bytes, prefs.units),
                ],
            ),
        };
        if r.aux_loss {
            text.push(' ');
            text.push_str(t(lang, Key::RoutingAuxLoss));
        }
        notes.push(("routing-note", text));
    }
    if let Some(l) = e.linear_attention {
        notes.push((
            "linear-attention-note",
            tf(
                lang,
                if l.mamba2 {
                    Key::Mamba2Note
                } else {
                    Key::LinearAttentionNote
                },
                &[&group_digits(l.layers), &group_digits(l.of)],
            ),
        ));
    }
    if let Some(context) = e.gpu.as_ref().and_then(|g| g.max_context) {
        let text = match context {
            0 => t(lang, Key::NoContextFits).to_string(),
            n => tf(lang, Key::MaxContext, &[&group_digits(n)]),
        };
        notes.push(("max-context", text));
    }
    html! {
        <>
            { notice }
            <div
                id="results"
                class={classes!("results", props.stale.then_some("stale"))}
                data-state={if props.stale { "stale" } else { "fresh" }}
                data-complete={r.complete.to_string()}
            >
                <Headline report={r.clone()} max_input={props.max_input} on_action={props.on_action.clone()}>
                    <LinkExtras extras={props.extras.clone()} on_clear={on_clear} />
                </Headline>
                if !notes.is_empty() {
                    <ul class="card estimate-notes" id="estimate-notes">
                        { for notes.into_iter().map(|(id, text)| html! { <li id={id}>{ text }</li> }) }
                    </ul>
                }
                // The numbers under the verdict follow the complete report
                // too (see `settled` above): the verdict's frame then lays out
                // and paints one card, and these change with the cards below.
                <PeakNumbers
                    allocated={b.peak_allocated_bytes}
                    reserved={b.peak_reserved_bytes}
                    device={b.device_used_bytes}
                    mode={b.config.mode}
                    range={b.device_used_range_bytes.zip(b.device_used_spread)}
                />
                <PeakBreakdown at_peak={b.at_peak} phase={b.peak_phase} step={b.peak_step} op={b.peak_op.clone()} mode={b.config.mode} />
                if props.revealed {
                    // Training's trade-offs and plans: inference has no optimizer,
                    // accumulation or checkpointing to change.
                    if trains {
                        <Techniques report={below.clone()} on_action={props.on_action.clone()} />
                        // The planner's target follows the complete report
                        // too: a batch edit would otherwise render it twice
                        // (its target resets) before the verdict's frame.
                        <PlannerPanel
                            effective_batch={below.effective_batch().saturating_mul(b.config.parallel.gpus_per_node * b.config.parallel.nodes)}
                            plans={props.plans.clone()}
                            on_action={props.on_action.clone()}
                        />
                    }
                    <GpuFinder batch={b.config.batch} options={props.gpu_options.clone()} on_action={props.on_action.clone()} />
                    <BatchChart report={below.clone()} />
                    <TimelineChart report={below.clone()} measured={measured_timeline} />
                    <MeasuredCard report={below.clone()} measured={(*measured).clone()} on_measured={on_measured} />
                    <LayerTable report={below} sort={props.layer_sort} on_action={props.on_action.clone()} />
                }
            </div>
        </>
    }
}
