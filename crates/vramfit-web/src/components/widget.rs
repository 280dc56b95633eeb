//! The embeddable widget (`embed.html`, framed by `embed.js`): the verdict,
//! the breakdown bar, optionally the batch curve, the inputs (editable or
//! locked) and a link to the full page with the same state. Its state is
//! the page's ([`AppState`]), read from the frame's address.

use super::{
    BatchChart, BreakdownBar, Headline, LinkExtras, LinkWarnings, Notice, ServeResults, WidgetForm,
};
use crate::browser;
use crate::hooks::use_app_actions;
use crate::i18n::{Key, t};
use crate::prefs::Prefs;
use crate::state::AppState;
use crate::url::{self, page_query};
use std::rc::Rc;
use yew::prelude::*;

/// The widget, read from the frame's address.
#[function_component]
pub fn Widget() -> Html {
    let link = use_memo((), |_| url::read(&browser::address()));
    let state = {
        let link = link.clone();
        use_reducer(move || AppState::from_link(&link, browser::initial_prefs()))
    };
    let prefs = state.prefs;
    use_effect_with(prefs, |prefs| browser::reflect(*prefs));
    let on_action = use_app_actions(&state);
    let lang = prefs.lang;
    // The full page opens with what the widget shows now (or the link's
    // state while an edit is invalid), in the widget's display settings.
    let share = state.share_state().unwrap_or_else(|| link.share.clone());
    let href = format!("index.html?{}", page_query(&share, &link.view));
    let batch_locked = link.widget.is_locked("b");
    let serving = state.engine() != vramfit_core::engines::Engine::Hf;
    let results = match (&state.report, &state.serving) {
        // An engine's link shows the engine's answer, as the page does.
        (_, Some(view)) if serving => html! {
            <ServeResults
                view={view.clone()}
                stale={state.stale}
                problem={state.problem.clone()}
                extras={state.widget_extras()}
                on_action={on_action.clone()}
                compact=true
            />
        },
        (Some(r), _) if !serving => {
            let e = &r.estimate;
            let notice = match (&state.problem, state.stale) {
                (Some(p), _) => html! { <Notice kind="error" text={p.message(lang)} /> },
                (None, true) => html! { <Notice kind="info" text={t(lang, Key::StaleNotice)} /> },
                (None, false) => html! {},
            };
            html! {
                <>
                    { notice }
                    <div id="results" data-state={if state.stale { "stale" } else { "fresh" }} data-complete={r.complete.to_string()}>
                        <Headline report={r.clone()} on_action={on_action.clone()} can_use={!batch_locked} compact=true>
                            <LinkExtras extras={state.widget_extras()} />
                        </Headline>
                        <section class="card" id="breakdown" aria-label={t(lang, Key::BreakdownTitle)}>
                            <BreakdownBar at_peak={e.at_peak} legend=true />
                            <span id="peak-allocated" data-bytes={e.peak_allocated_bytes.0.to_string()} hidden=true></span>
                            <span id="device-used" data-bytes={e.device_used_bytes.0.to_string()} hidden=true></span>
                        </section>
                        if link.widget.curve {
                            <BatchChart report={r.clone()} />
                        }
                    </div>
                </>
            }
        }
        _ => {
            let text = state
                .problem
                .as_ref()
                .map_or_else(|| t(lang, Key::FixFields).to_string(), |p| p.message(lang));
            html! { <Notice kind="error" {text} /> }
        }
    };
    html! {
        <ContextProvider<Prefs> context={prefs}>
            <main class="widget" aria-label={t(lang, Key::WidgetLabel)}>
                <LinkWarnings warnings={state.link_warnings.clone()} />
                { results }
                <WidgetForm state={Rc::new((*state).clone())} options={link.widget.clone()} {on_action} />
                <p class="open-full">
                    <a id="open-full" href={href} target="_blank" rel="noopener">{ t(lang, Key::OpenFull) }{ " ↗" }</a>
                </p>
            </main>
        </ContextProvider<Prefs>>
    }
}
