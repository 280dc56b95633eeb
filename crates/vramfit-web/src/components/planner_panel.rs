//! "Make it fit": the planner's top plans for an effective batch, each with
//! its memory, estimated step time, trade-off and an Apply button; an export
//! of the chosen plan for DeepSpeed, Hugging Face, Accelerate or PyTorch;
//! and the batch-size advice that goes with the target.

use crate::browser;
use crate::fields::{Field, FieldError, parse_count};
use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use crate::messages::{advice_text, core_error, uneven};
use crate::planner::{Export, Plans, rows};
use crate::present::group_digits;
use crate::state::Action;
use std::rc::Rc;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Props of [`PlannerPanel`].
#[derive(Properties, PartialEq)]
pub struct PlannerPanelProps {
    /// The effective batch of the configuration on screen (the default target).
    pub effective_batch: u64,
    /// The planner's last answer for these inputs, if it ran.
    #[prop_or_default]
    pub plans: Option<Rc<Plans>>,
    /// Emits [`Action::FindPlans`] and [`Action::AdoptPlan`].
    pub on_action: Callback<Action>,
}

/// The planner card.
#[function_component]
pub fn PlannerPanel(props: &PlannerPanelProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let target = use_state(|| props.effective_batch.to_string());
    let chosen = use_state(|| 0usize);
    let format = use_state(|| Export::DeepSpeed);
    let copied = use_state(|| None::<bool>);
    {
        // A new configuration brings its own effective batch as the target.
        let target = target.setter();
        use_effect_with(props.effective_batch, move |batch| {
            target.set(batch.to_string())
        });
    }
    // The effective batch has the micro-batch's range; its messages are its own.
    let parsed = parse_count(Field::Batch, &target);
    let error = parsed.as_ref().err().map(|e| match e {
        FieldError::Empty => t(lang, Key::PlanTargetEmpty).to_string(),
        _ => tf(
            lang,
            Key::PlanTargetInvalid,
            &[&group_digits(Field::Batch.range().1)],
        ),
    });
    let on_input = {
        let target = target.setter();
        Callback::from(move |e: InputEvent| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                target.set(input.value());
            }
        })
    };
    let on_find = {
        let on_action = props.on_action.clone();
        let chosen = chosen.setter();
        let value = parsed.as_ref().ok().copied();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            if let Some(v) = value {
                chosen.set(0);
                on_action.emit(Action::FindPlans(v));
            }
        })
    };
    let body = match props.plans.as_deref() {
        None => html! {},
        Some(found) => match &found.result {
            Err(e) => {
                html! { <p class="field-error" role="alert">{ tf(lang, Key::PlanFailed, &[&core_error(e, lang)]) }</p> }
            }
            Ok(result) => {
                let list = rows(&result.plans, result.timed, lang, prefs.units);
                let split = result.uneven.as_ref().map(|u| uneven(u, lang));
                let selected = list.get(*chosen).or(list.first()).map(|r| r.config);
                html! {
                    <>
                        if let Some(text) = split {
                            <p class="plan-warning" id="plan-uneven">{ text }</p>
                        }
                        if list.is_empty() {
                            <p class="empty" id="plan-none">{ t(lang, Key::PlanNone) }</p>
                        } else {
                            <p class="card-sub" id="plan-found">{ tf(lang, Key::PlanFound, &[&group_digits(result.tried as u64), &group_digits(result.per_gpu_batch)]) }</p>
                            <ol class="plan-list" id="plan-list">
                                { for list.iter().enumerate().map(|(i, row)| {
                                    let adopt = {
                                        let on_action = props.on_action.clone();
                                        let config = row.config;
                                        Callback::from(move |_| on_action.emit(Action::AdoptPlan(config)))
                                    };
                                    let export = {
                                        let chosen = chosen.setter();
                                        let copied = copied.setter();
                                        Callback::from(move |_| { chosen.set(i); copied.set(None); })
                                    };
                                    html! {
                                        <li class={classes!("plan", (i == *chosen).then_some("chosen"))} id={format!("plan-{i}")}>
                                            <div class="plan-head">
                                                <span class="plan-title">{ row.title.clone() }</span>
                                                <span class="plan-step">{ row.step.clone() }</span>
                                            </div>
                                            <p class="plan-tradeoff">{ row.tradeoff.clone() }</p>
                                            <div class="plan-foot">
                                                <span class="plan-memory">{ row.memory.clone() }</span>
                                                <button type="button" class="link-button" aria-label={tf(lang, Key::PlanApplyLabel, &[&row.title])} onclick={adopt}>{ t(lang, Key::TechApply) }</button>
                                                <button type="button" class="link-button" aria-pressed={(i == *chosen).to_string()} onclick={export}>{ t(lang, Key::PlanExportOf) }</button>
                                            </div>
                                        </li>
                                    }
                                }) }
                            </ol>
                            <p class="chart-note">{ t(lang, if result.timed { Key::PlanCostNote } else { Key::PlanUntimed }) }</p>
                            if let Some(config) = selected {
                                { export_box(lang, *format, config, &format, &copied) }
                            }
                        }
                        <h3 class="plan-subtitle">{ t(lang, Key::AdviceTitle) }</h3>
                        <ul class="advice" id="advice">
                            { for found.advice.iter().map(|a| html! { <li data-id={a.id()}>{ advice_text(a, lang) }</li> }) }
                        </ul>
                    </>
                }
            }
        },
    };
    html! {
        <section class="card" id="planner" aria-labelledby="planner-title">
            <h2 id="planner-title" class="card-title">{ t(lang, Key::PlanTitle) }</h2>
            <p class="card-sub">{ t(lang, Key::PlanSub) }</p>
            <form class="plan-form" onsubmit={on_find}>
                <div class={classes!("field", error.is_some().then_some("invalid"))}>
                    <label for="plan-target">{ t(lang, Key::PlanTarget) }</label>
                    <input
                        id="plan-target"
                        name="plan-target"
                        type="text"
                        inputmode="numeric"
                        autocomplete="off"
                        value={(*target).clone()}
                        oninput={on_input}
                        aria-invalid={error.is_some().to_string()}
                        aria-describedby="plan-target-message"
                    />
                    if let Some(message) = error.clone() {
                        <p class="field-error" id="plan-target-message">{ message }</p>
                    } else {
                        <p class="field-hint" id="plan-target-message">{ t(lang, Key::PlanTargetHelp) }</p>
                    }
                </div>
                <button type="submit" class="button" id="plan-find" disabled={error.is_some()}>{ t(lang, Key::PlanFind) }</button>
            </form>
            { body }
        </section>
    }
}

/// The export of one plan: a format switch, the text and a copy button.
fn export_box(
    lang: crate::i18n::Lang,
    current: Export,
    config: vramfit_core::TrainConfig,
    format: &UseStateHandle<Export>,
    copied: &UseStateHandle<Option<bool>>,
) -> Html {
    let text = current.text(&config);
    let note = current.note(&config, lang);
    let copy = {
        let text = text.clone();
        let copied = copied.setter();
        Callback::from(move |_: MouseEvent| {
            let copied = copied.clone();
            browser::copy_text(
                &text,
                "plan-export",
                Callback::from(move |ok: bool| copied.set(Some(ok))),
            );
        })
    };
    let status = match **copied {
        Some(true) => t(lang, Key::Copied),
        Some(false) => t(lang, Key::CopyFailed),
        None => "",
    };
    html! {
        <div class="plan-export">
            <h3 class="plan-subtitle">{ t(lang, Key::PlanExportTitle) }</h3>
            <div class="segmented" role="group" aria-label={t(lang, Key::PlanExportTitle)}>
                { for Export::ALL.into_iter().map(|e| {
                    let set = {
                        let format = format.setter();
                        let copied = copied.setter();
                        Callback::from(move |_| { format.set(e); copied.set(None); })
                    };
                    html! {
                        <button type="button" id={format!("export-{}", e.id())} aria-pressed={(e == current).to_string()} onclick={set}>{ e.label(lang) }</button>
                    }
                }) }
            </div>
            <textarea id="plan-export" class="copy-text code" readonly=true rows="12" spellcheck="false" translate="no"
                aria-label={tf(lang, Key::PlanExportLabel, &[current.label(lang)])} value={text} />
            if let Some(note) = note {
                <p class="field-hint" id="plan-export-note">{ note }</p>
            }
            <div class="copy-row">
                <button type="button" class="link-button" id="plan-copy" onclick={copy}>{ t(lang, Key::PlanCopy) }</button>
                <span class="copy-status" role="status">{ status }</span>
            </div>
        </div>
    }
}
