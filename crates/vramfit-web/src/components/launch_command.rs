//! The launch command of a serving estimate, copyable, as the planner's
//! exports are.

use crate::browser;
use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use yew::prelude::*;

/// Props of [`LaunchCommand`].
#[derive(Properties, PartialEq)]
pub struct LaunchCommandProps {
    /// The command, one line.
    pub command: AttrValue,
    /// The engine's name.
    pub engine: AttrValue,
}

/// The command in a read-only box with a Copy button.
#[function_component]
pub fn LaunchCommand(props: &LaunchCommandProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let copied = use_state(|| None::<bool>);
    {
        // A new command has not been copied.
        let copied = copied.setter();
        use_effect_with(props.command.clone(), move |_| copied.set(None));
    }
    let copy = {
        let text = props.command.to_string();
        let copied = copied.setter();
        Callback::from(move |_: MouseEvent| {
            let copied = copied.clone();
            browser::copy_text(
                &text,
                "launch-command",
                Callback::from(move |ok: bool| copied.set(Some(ok))),
            );
        })
    };
    let status = match *copied {
        Some(true) => t(lang, Key::Copied),
        Some(false) => t(lang, Key::CopyFailed),
        None => "",
    };
    html! {
        <section class="card" id="launch" aria-labelledby="launch-title">
            <h2 id="launch-title" class="card-title">{ t(lang, Key::LaunchTitle) }</h2>
            <textarea id="launch-command" class="copy-text code" readonly=true rows="3" spellcheck="false" translate="no"
                aria-label={tf(lang, Key::LaunchLabel, &[&props.engine])} value={props.command.clone()} />
            <div class="copy-row">
                <button type="button" class="link-button" id="launch-copy" onclick={copy}>{ t(lang, Key::PlanCopy) }</button>
                <span class="copy-status" role="status">{ status }</span>
            </div>
        </section>
    }
}
