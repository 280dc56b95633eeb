//! The form's first choice: training, LoRA, QLoRA or inference, as native
//! radio buttons drawn as a segmented control (arrow keys move between them).

use crate::hooks::use_prefs;
use crate::i18n::{Key, t};
use crate::labels;
use vramfit_core::config::Mode;
use yew::prelude::*;

/// Props of [`ModeSwitch`].
#[derive(Properties, PartialEq)]
pub struct ModeSwitchProps {
    /// The chosen mode.
    pub mode: Mode,
    /// Emits the newly chosen mode.
    pub onchange: Callback<Mode>,
}

/// The mode, one segment per [`Mode`]; each radio's id is `mode-<id>`.
#[function_component]
pub fn ModeSwitch(props: &ModeSwitchProps) -> Html {
    let lang = use_prefs().lang;
    let segment = |mode: Mode| {
        let id = format!("mode-{}", mode.id());
        let onchange = {
            let emit = props.onchange.clone();
            Callback::from(move |_: Event| emit.emit(mode))
        };
        html! {
            <label class="mode-seg" for={id.clone()} title={labels::mode(mode, lang)}>
                <input type="radio" name="mode" id={id} value={mode.id()} checked={props.mode == mode} {onchange} />
                <span>{ labels::mode_short(mode, lang) }</span>
            </label>
        }
    };
    html! {
        <fieldset class="mode-switch" id="mode-switch">
            <legend>{ t(lang, Key::ModeLabel) }</legend>
            <div class="mode-segs">{ for Mode::ALL.iter().copied().map(segment) }</div>
        </fieldset>
    }
}
