//! The root component: owns the state (first read from the address),
//! provides the display preferences to every component, reflects them on
//! `<html>`, keeps the address equal to the state, and lays out the page.

use super::{
    BatchText, BenchFrame, ConfigForm, Header, LinkWarnings, Notice, Results, ServeResults,
    ShareBox, VerdictBar,
};
use crate::browser;
use crate::hooks::use_app_actions;
use crate::hooks::use_url_state;
use crate::i18n::{Key, t};
use crate::prefs::Prefs;
use crate::state::{Action, AppState};
use crate::url::{self, View, page_query};
use yew::prelude::*;

/// The whole calculator, header to footer.
#[function_component]
pub fn App() -> Html {
    let browser_prefs = *use_memo((), |_| browser::initial_prefs());
    // What was typed into the prerendered page before the app mounted is
    // where the app starts (it then replaces that page; see `mount`).
    let state = use_reducer(move || {
        AppState::from_link_edited(
            &url::read(&browser::address()),
            browser_prefs,
            browser::take_prerendered_edits(),
            browser::prerendered_largest(),
        )
    });
    // The form's long lists and collapsed boxes, once the first render is
    // on screen (see `ConfigForm`'s `built`).
    let built = use_state_eq(|| false);
    {
        let built = built.setter();
        use_effect_with((), move |()| {
            // In the task that replaced a page typed into, before any key
            // typed next is dispatched.
            browser::restore_prerendered_focus();
            browser::soon(move || {
                built.set(true);
                browser::hydrated();
            });
        });
    }
    let prefs = state.prefs;
    use_effect_with(prefs, |prefs| browser::reflect(*prefs));
    // The link follows the complete report, as the cards below the verdict
    // do: an edit's first frame repaints the verdict alone, and the share
    // box and the address change with the completion a frame later.
    let settled_share = use_mut_ref(|| state.share_state());
    if !state.incomplete() {
        *settled_share.borrow_mut() = state.share_state();
    }
    let share = settled_share.borrow().clone();
    // Encoding the link walks every setting: once per change, not per
    // render, and not before the first render is on screen (the address
    // can wait; `None` leaves it as it is).
    let query = (*use_memo(
        (share.clone(), View::chosen(prefs, browser_prefs), *built),
        |(share, view, built)| {
            share
                .as_ref()
                .filter(|_| *built)
                .map(|s| page_query(s, view))
        },
    ))
    .clone();
    let base = use_memo((), |_| browser::base_url());
    let on_action = use_app_actions(&state);
    // After the report's completion is queued: the address changes after it.
    use_url_state(query.clone());
    let lang = prefs.lang;
    // The Benchmark tab (`#benchmark` in the address) is a frame, loaded the
    // first time the tab is opened (and its wasm with it).
    let bench = use_state(crate::bench::js::bench_in_address);
    let bench_opened = use_state(|| *bench);
    // The Benchmark page's configuration once the tab is open: the last
    // valid one, with every display setting.
    let current = use_memo(
        (share.clone(), prefs, *bench_opened),
        |(share, prefs, opened)| {
            share
                .as_ref()
                .filter(|_| *opened)
                .map(|s| url::frame_query(s, *prefs))
        },
    );
    let last_valid = use_mut_ref(String::new);
    if let Some(q) = current.as_ref() {
        if *last_valid.borrow() != *q {
            last_valid.borrow_mut().clone_from(q);
        }
    }
    let frame_query = last_valid.borrow().clone();
    let on_tab = |open: bool| {
        let (bench, bench_opened) = (bench.clone(), bench_opened.clone());
        Callback::from(move |_| {
            crate::bench::js::set_bench_in_address(open);
            bench.set(open);
            if open {
                bench_opened.set(true);
            }
        })
    };
    let tab = |id: &'static str, open: bool, key: Key| {
        html! {
            <button type="button" role="tab" class="tab" id={format!("tab-{id}")} aria-controls={format!("panel-{id}")}
                aria-selected={(*bench == open).to_string()} onclick={on_tab(open)}>{ t(lang, key) }</button>
        }
    };
    // The settings a link set that the form does not show: walking every
    // setting once per change of what they depend on, not on each batch edit.
    let extras = {
        let state = state.clone();
        (*use_memo((state.inputs.without_batch(), state.shape()), move |_| {
            state.extras()
        }))
        .clone()
    };
    let serving = state.engine() != vramfit_core::engines::Engine::Hf;
    let results = match (&state.report, &state.serving) {
        (_, Some(view)) if serving => html! {
            <ServeResults
                view={view.clone()}
                stale={state.stale}
                problem={state.problem.clone()}
                extras={extras.clone()}
                on_action={on_action.clone()}
            />
        },
        (Some(report), _) if !serving => html! {
            <Results
                report={report.clone()}
                stale={state.stale}
                problem={state.problem.clone()}
                layer_sort={state.layer_sort}
                extras={extras.clone()}
                plans={state.plans.clone()}
                max_input={state.max_input}
                gpu_options={state.gpu_options.clone()}
                revealed={state.revealed}
                on_action={on_action.clone()}
            />
        },
        // The first answer of the engine (or the simulation) was refused.
        _ => {
            let text = state
                .problem
                .as_ref()
                .map_or_else(|| t(lang, Key::FixFields).to_string(), |p| p.message(lang));
            html! { <Notice kind="error" {text} /> }
        }
    };
    let share_box = match (&share, &query) {
        (Some(share), Some(query)) if state.revealed => html! {
            <ShareBox link={format!("{base}?{query}")} base={base.to_string()} share={share.clone()} />
        },
        _ => html! {},
    };
    let on_dismiss = {
        let on_action = on_action.clone();
        Callback::from(move |()| on_action.emit(Action::DismissLinkWarnings))
    };
    html! {
        <ContextProvider<Prefs> context={prefs}>
            <Header {prefs} on_action={on_action.clone()} mode={state.inputs.mode} full={*built} />
            <main class="wrap">
                <nav class="tabs" role="tablist" aria-label={t(lang, Key::TabsLabel)}>
                    { tab("calculator", false, Key::TabCalculator) }
                    { tab("benchmark", true, Key::TabBenchmark) }
                </nav>
                <div id="panel-calculator" role="tabpanel" aria-labelledby="tab-calculator" hidden={*bench}>
                if let Some(glance) = state.glance() {
                    <VerdictBar {glance} target={if serving { "serve-verdict" } else { "verdict" }} />
                }
                <LinkWarnings warnings={state.link_warnings.clone()} {on_dismiss} />
                <div class="layout">
                    <ContextProvider<BatchText> context={BatchText(state.inputs.batch.clone().into())}>
                        <ConfigForm
                            catalog={state.catalog.clone()}
                            inputs={state.inputs.without_batch()}
                            import={state.import.clone()}
                            errors={state.errors.clone()}
                            fields={state.visible_fields()}
                            tokens={state.input_field() == Some(crate::state::Field::Seq)}
                            built={*built}
                            {on_action}
                        />
                    </ContextProvider<BatchText>>
                    <div class="results-column">{ results }{ share_box }</div>
                </div>
                </div>
                <div id="panel-benchmark" role="tabpanel" aria-labelledby="tab-benchmark" hidden={!*bench}>
                    if *bench_opened {
                        <BenchFrame query={frame_query} />
                    }
                </div>
            </main>
            <footer class="site-footer wrap"><p>{ t(lang, crate::present::in_mode(Key::Footer, state.inputs.mode)) }</p></footer>
        </ContextProvider<Prefs>>
    }
}
