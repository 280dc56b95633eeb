//! The list of what the page's link had that could not be used, and why.
//! Keys and values are shown as text (never markup), inside `<code>`.

use crate::hooks::use_prefs;
use crate::i18n::{Key, t};
use crate::url::describe;
use vramfit_core::share::Warning;
use yew::prelude::*;

/// Props of [`LinkWarnings`].
#[derive(Properties, PartialEq)]
pub struct LinkWarningsProps {
    /// What was ignored.
    pub warnings: Vec<Warning>,
    /// Emitted by the dismiss button; without it there is none.
    #[prop_or_default]
    pub on_dismiss: Option<Callback<()>>,
}

/// A polite notice listing the ignored parameters.
#[function_component]
pub fn LinkWarnings(props: &LinkWarningsProps) -> Html {
    let lang = use_prefs().lang;
    if props.warnings.is_empty() {
        return html! {};
    }
    let item = |w: &Warning| {
        let d = describe(w, lang);
        let param = if w.key.is_empty() {
            String::new()
        } else {
            format!("{}={}", w.key, w.value)
        };
        html! {
            <li data-key={w.key.clone()}>
                if !param.is_empty() {
                    <code translate="no">{ param }</code>{ ": " }
                }
                { d.text }
                if let Some(detail) = d.detail {
                    { " " }<code translate="no">{ detail }</code>
                }
                if let Some(fallback) = d.fallback {
                    { "; " }{ t(lang, Key::LinkUsing) }{ " " }<code translate="no">{ fallback }</code>
                }
            </li>
        }
    };
    html! {
        <div id="link-warnings" class="notice notice-warn" role="status">
            <p class="notice-title">{ t(lang, Key::LinkWarningsTitle) }</p>
            <ul>{ for props.warnings.iter().map(item) }</ul>
            if let Some(on_dismiss) = props.on_dismiss.clone() {
                <button type="button" class="link-button" onclick={Callback::from(move |_| on_dismiss.emit(()))}>
                    { t(lang, Key::Dismiss) }
                </button>
            }
        </div>
    }
}
