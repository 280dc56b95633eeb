//! The settings in effect that the form does not show (a link set them),
//! named in words with their values, with a button to clear them.

use crate::hooks::use_prefs;
use crate::i18n::{Key, t};
use crate::labels;
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
    let items = props.extras.iter().enumerate().map(|(i, s)| {
        // A key without a name (none today, a test checks) shows its CLI flag.
        let name = labels::setting(s.key, lang).map_or_else(|| s.flag.to_string(), str::to_string);
        let value = labels::setting_value(s.key, &s.value, lang);
        html! {
            <>
                if i > 0 { { t(lang, Key::ListSeparator) } }
                <span class="extra" data-key={s.key}>{ name }{ " " }<code translate="no">{ value }</code></span>
            </>
        }
    });
    html! {
        <p class="extras" id="extras">
            { t(lang, Key::ExtrasTitle) }{ " " }{ for items }
            if let Some(on_clear) = props.on_clear.clone() {
                { " " }
                <button type="button" class="link-button" onclick={Callback::from(move |_| on_clear.emit(()))}>
                    { t(lang, Key::ExtrasClear) }
                </button>
            }
        </p>
    }
}
