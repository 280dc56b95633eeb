//! The settings in effect that the form does not show (a link set them),
//! as the `vramfit estimate` flags that set them, with a button to clear them.

use crate::hooks::use_prefs;
use crate::i18n::{Key, t};
use vramfit_core::share::Setting;
use yew::prelude::*;

/// Props of [`LinkExtras`].
#[derive(Properties, PartialEq)]
pub struct LinkExtrasProps {
    /// The settings.
    pub extras: Vec<Setting>,
    /// Emitted by the clear button; without it there is none (the widget).
    #[prop_or_default]
    pub on_clear: Option<Callback<()>>,
}

/// One line under the summary.
#[function_component]
pub fn LinkExtras(props: &LinkExtrasProps) -> Html {
    let lang = use_prefs().lang;
    if props.extras.is_empty() {
        return html! {};
    }
    let flags = props
        .extras
        .iter()
        .map(Setting::cli)
        .collect::<Vec<_>>()
        .join(" ");
    html! {
        <p class="extras" id="extras">
            { t(lang, Key::ExtrasTitle) }{ " " }<code translate="no">{ flags }</code>
            if let Some(on_clear) = props.on_clear.clone() {
                { " " }
                <button type="button" class="link-button" onclick={Callback::from(move |_| on_clear.emit(()))}>
                    { t(lang, Key::ExtrasClear) }
                </button>
            }
        </p>
    }
}
