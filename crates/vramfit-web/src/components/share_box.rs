//! The share card: the link to the result on screen and the embed code for
//! a live widget of it, each with a copy button.

use crate::browser;
use crate::hooks::use_prefs;
use crate::i18n::{Key, t};
use yew::prelude::*;

/// Props of [`ShareBox`].
#[derive(Properties, PartialEq)]
pub struct ShareBoxProps {
    /// The full link to the page with this state.
    pub link: AttrValue,
    /// The embed snippet for this state.
    pub embed: AttrValue,
}

/// What the last copy did, per field.
#[derive(Clone, Copy, PartialEq)]
enum Copy {
    Idle,
    Done(&'static str),
    Failed(&'static str),
}

/// The share card.
#[function_component]
pub fn ShareBox(props: &ShareBoxProps) -> Html {
    let lang = use_prefs().lang;
    let status = use_state_eq(|| Copy::Idle);
    // A new link makes an old "Copied." untrue.
    {
        let status = status.setter();
        use_effect_with((props.link.clone(), props.embed.clone()), move |_| {
            status.set(Copy::Idle)
        });
    }
    let copy = |field: &'static str, text: AttrValue| {
        let status = status.setter();
        Callback::from(move |_: MouseEvent| {
            let status = status.clone();
            let done = Callback::from(move |ok: bool| {
                status.set(if ok {
                    Copy::Done(field)
                } else {
                    Copy::Failed(field)
                })
            });
            browser::copy_text(&text, field, done);
        })
    };
    let message = |field: &'static str| match *status {
        Copy::Done(f) if f == field => t(lang, Key::Copied),
        Copy::Failed(f) if f == field => t(lang, Key::CopyFailed),
        _ => "",
    };
    html! {
        <section class="card share" id="share" aria-labelledby="share-title">
            <h2 id="share-title" class="card-title">{ t(lang, Key::ShareTitle) }</h2>
            <p class="card-sub">{ t(lang, Key::ShareSub) }</p>
            <label class="field-label" for="share-link">{ t(lang, Key::ShareLinkLabel) }</label>
            <div class="copy-row">
                <input id="share-link" class="copy-text" type="text" readonly=true value={props.link.clone()} translate="no" />
                <button type="button" id="copy-link" class="link-button" onclick={copy("share-link", props.link.clone())}>
                    { t(lang, Key::CopyLink) }
                </button>
            </div>
            <p class="copy-status" role="status" id="share-link-status">{ message("share-link") }</p>
            <label class="field-label" for="embed-code">{ t(lang, Key::EmbedLabel) }</label>
            <textarea id="embed-code" class="copy-text" readonly=true rows="3" value={props.embed.clone()} translate="no" />
            <div class="copy-row">
                <button type="button" id="copy-embed" class="link-button" onclick={copy("embed-code", props.embed.clone())}>
                    { t(lang, Key::CopyEmbed) }
                </button>
                <p class="copy-status" role="status" id="embed-code-status">{ message("embed-code") }</p>
            </div>
        </section>
    }
}
