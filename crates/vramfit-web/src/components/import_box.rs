//! The "paste or drop a Hugging Face config.json" box under the model list.

use crate::browser;
use crate::hooks::use_prefs;
use crate::i18n::{Key, t};
use crate::import::{ImportError, ImportState, Tone, hub_id};
use crate::state::Action;
use web_sys::{HtmlInputElement, HtmlTextAreaElement};
use yew::prelude::*;

/// Props of [`ImportBox`].
#[derive(Properties, PartialEq)]
pub struct ImportBoxProps {
    /// The box's state.
    pub import: ImportState,
    /// Whether it starts expanded (an imported model is selected, or there is an error).
    pub open: bool,
    /// Whether the body is rendered when the box starts collapsed: `false`
    /// in the app's first render (prerendered and hydrated: the summary
    /// line only), until that has been painted; see [`super::SelectField`]'s `full`.
    pub built: bool,
    /// Emits the text, or why a file could not be used.
    pub on_action: Callback<Action>,
}

/// A collapsible text box that imports as you type, and takes a dropped or
/// chosen file.
#[function_component]
pub fn ImportBox(props: &ImportBoxProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let on_text = {
        let on_action = props.on_action.clone();
        Callback::from(move |r: Result<String, ImportError>| {
            on_action.emit(match r {
                Ok(text) => Action::ImportConfig(text),
                Err(e) => Action::ImportFailed(e),
            })
        })
    };
    let oninput = {
        let on_action = props.on_action.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(area) = e.target_dyn_into::<HtmlTextAreaElement>() {
                on_action.emit(Action::ImportConfig(area.value()));
            }
        })
    };
    let drop = {
        let on_text = on_text.clone();
        crate::hooks::use_file_drop(Callback::from(move |file: web_sys::File| {
            browser::read_text(file, on_text.clone());
        }))
    };
    let onchange = Callback::from(move |e: Event| {
        if let Some(file) = e
            .target_dyn_into::<HtmlInputElement>()
            .and_then(|i| i.files())
            .and_then(|f| f.get(0))
        {
            browser::read_text(file, on_text.clone());
        }
    });
    let fetching = use_state_eq(|| false);
    let hub = hub_id(&props.import.text).map(str::to_string);
    let on_fetch = {
        let on_action = props.on_action.clone();
        let fetching = fetching.clone();
        let hub = hub.clone();
        Callback::from(move |_: MouseEvent| {
            let Some(id) = hub.clone() else { return };
            fetching.set(true);
            let on_action = on_action.clone();
            let fetching = fetching.clone();
            browser::fetch_hub_config(
                id,
                Callback::from(move |r: Result<String, ImportError>| {
                    fetching.set(false);
                    on_action.emit(match r {
                        Ok(text) => Action::ImportConfig(text),
                        Err(e) => Action::ImportFailed(e),
                    });
                }),
            );
        })
    };
    let (tone, status) = props.import.status(lang, prefs.units);
    let status_class = match tone {
        Tone::Hint => "field-hint",
        Tone::Ok => "field-ok",
        Tone::Warn => "field-warn",
        Tone::Error => "field-error",
    };
    html! {
        <details class="import" open={props.open}>
            <summary>{ t(lang, Key::ImportTitle) }</summary>
            if props.open || props.built {
                <div
                    class={classes!("field", "import-body", drop.dragging.then_some("dragging"), (tone == Tone::Error).then_some("invalid"))}
                    ondragover={drop.ondragover.clone()}
                    ondragleave={drop.ondragleave.clone()}
                    ondrop={drop.ondrop.clone()}
                >
                    <label for="hf-config">{ t(lang, Key::ImportLabel) }</label>
                    <textarea
                        id="hf-config"
                        rows="5"
                        spellcheck="false"
                        autocomplete="off"
                        translate="no"
                        placeholder="{ \"model_type\": \"llama\", … }"
                        value={props.import.text.clone()}
                        aria-invalid={(tone == Tone::Error).then_some("true")}
                        aria-describedby="hf-config-status"
                        {oninput}
                    />
                    <p class={status_class} id="hf-config-status" role="status">{ status }</p>
                    if hub.is_some() {
                        <button type="button" class="file-button" id="hub-fetch" disabled={*fetching} onclick={on_fetch}>
                            { t(lang, if *fetching { Key::ImportHubFetching } else { Key::ImportHubFetch }) }
                        </button>
                    }
                    <label class="file-button">
                        { t(lang, Key::ImportChoose) }
                        <input type="file" accept=".json,application/json" class="visually-hidden" {onchange} />
                    </label>
                </div>
            }
        </details>
    }
}
