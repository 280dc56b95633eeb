//! The root component: owns the state, provides the display preferences to
//! every component, reflects them on `<html>`, and lays out the page.

use super::{ConfigForm, Header, Notice, Results};
use crate::browser;
use crate::i18n::{Key, t};
use crate::prefs::Prefs;
use crate::state::{Action, AppState, Inputs};
use yew::prelude::*;

/// The whole calculator, header to footer.
#[function_component]
pub fn App() -> Html {
    let state = use_reducer(|| AppState::new(Inputs::default(), browser::initial_prefs()));
    let prefs = state.prefs;
    use_effect_with(prefs, |prefs| browser::reflect(*prefs));
    // Once a new verdict is on screen, add the batch curve and the comparison.
    {
        let dispatcher = state.dispatcher();
        use_effect_with((state.generation, state.incomplete()), move |(_, incomplete)| {
            if *incomplete {
                browser::soon(move || dispatcher.dispatch(Action::CompleteReport));
            }
        });
    }
    let on_action = {
        let dispatcher = state.dispatcher();
        Callback::from(move |action: Action| dispatcher.dispatch(action))
    };
    let lang = prefs.lang;
    let results = match &state.report {
        Some(report) => html! {
            <Results
                report={report.clone()}
                stale={state.stale}
                problem={state.problem.clone()}
                layer_sort={state.layer_sort}
                on_action={on_action.clone()}
            />
        },
        // Only reachable if the defaults themselves were rejected.
        None => {
            let text = state.problem.as_ref().map_or_else(|| t(lang, Key::FixFields).to_string(), |p| p.message(lang));
            html! { <Notice kind="error" {text} /> }
        }
    };
    html! {
        <ContextProvider<Prefs> context={prefs}>
            <Header {prefs} on_action={on_action.clone()} />
            <main class="wrap">
                <div class="layout">
                    <ConfigForm
                        catalog={state.catalog.clone()}
                        inputs={state.inputs.clone()}
                        import={state.import.clone()}
                        errors={state.errors.clone()}
                        fields={state.visible_fields()}
                        tokens={state.input_field() == Some(crate::state::Field::Seq)}
                        {on_action}
                    />
                    <div class="results-column">{ results }</div>
                </div>
            </main>
            <footer class="site-footer wrap"><p>{ t(lang, Key::Footer) }</p></footer>
        </ContextProvider<Prefs>>
    }
}
