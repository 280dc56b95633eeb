//! The share card: the link to the result on screen and the embed code for
//! a live widget of it, each with a copy button; the widget's options
//! (locked inputs, batch curve, theme, language) are chosen above its code.

use crate::browser;
use crate::hooks::use_prefs;
use crate::i18n::{Key, Lang, t};
use crate::prefs::Theme;
use crate::url::{EmbedChoice, embed_snippet};
use vramfit_core::share::ShareState;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// Props of [`ShareBox`].
#[derive(Properties, PartialEq)]
pub struct ShareBoxProps {
    /// The full link to the page with this state.
    pub link: AttrValue,
    /// Where the calculator is published (the embed script's base).
    pub base: AttrValue,
    /// The state the widget shows.
    pub share: ShareState,
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
    let choice = use_state_eq(EmbedChoice::default);
    let embed = AttrValue::from(embed_snippet(&props.base, &choice.query(&props.share)));
    // A new link or new options make an old "Copied." untrue.
    {
        let status = status.setter();
        use_effect_with((props.link.clone(), embed.clone()), move |_| {
            status.set(Copy::Idle)
        });
    }
    let toggle = |set: fn(&mut EmbedChoice, bool)| {
        let choice = choice.clone();
        Callback::from(move |e: Event| {
            if let Some(input) = e.target_dyn_into::<HtmlInputElement>() {
                let mut next = *choice;
                set(&mut next, input.checked());
                choice.set(next);
            }
        })
    };
    let on_theme = {
        let choice = choice.clone();
        Callback::from(move |e: Event| {
            if let Some(select) = e.target_dyn_into::<HtmlSelectElement>() {
                let theme = match select.value().as_str() {
                    "light" => Some(Theme::Light),
                    "dark" => Some(Theme::Dark),
                    _ => None,
                };
                choice.set(EmbedChoice { theme, ..*choice });
            }
        })
    };
    let on_lang = {
        let choice = choice.clone();
        Callback::from(move |e: Event| {
            if let Some(select) = e.target_dyn_into::<HtmlSelectElement>() {
                let value = select.value();
                let lang = Lang::ALL.iter().copied().find(|l| l.tag() == value);
                choice.set(EmbedChoice { lang, ..*choice });
            }
        })
    };
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
            <fieldset class="embed-options" id="embed-options">
                <legend class="field-label">{ t(lang, Key::EmbedOptions) }</legend>
                <label class="check">
                    <input type="checkbox" id="embed-lock" checked={choice.lock_all} onchange={toggle(|c, on| c.lock_all = on)} />
                    { t(lang, Key::EmbedLock) }
                </label>
                <label class="check">
                    <input type="checkbox" id="embed-curve" checked={choice.curve} onchange={toggle(|c, on| c.curve = on)} />
                    { t(lang, Key::EmbedCurve) }
                </label>
                <label class="embed-select">
                    { t(lang, Key::EmbedTheme) }
                    <select id="embed-theme" class="compact" onchange={on_theme}>
                        <option value="" selected={choice.theme.is_none()}>{ t(lang, Key::EmbedReaders) }</option>
                        <option value="light" selected={choice.theme == Some(Theme::Light)}>{ t(lang, Key::EmbedLight) }</option>
                        <option value="dark" selected={choice.theme == Some(Theme::Dark)}>{ t(lang, Key::EmbedDark) }</option>
                    </select>
                </label>
                <label class="embed-select">
                    { t(lang, Key::Language) }
                    <select id="embed-lang" class="compact" onchange={on_lang}>
                        <option value="" selected={choice.lang.is_none()}>{ t(lang, Key::EmbedReaders) }</option>
                        { for Lang::ALL.iter().map(|l| html! {
                            <option value={l.tag()} lang={l.tag()} translate="no" selected={choice.lang == Some(*l)}>{ l.native_name() }</option>
                        }) }
                    </select>
                </label>
            </fieldset>
            <label class="field-label" for="embed-code">{ t(lang, Key::EmbedLabel) }</label>
            <textarea id="embed-code" class="copy-text" readonly=true rows="3" value={embed.clone()} translate="no" />
            <div class="copy-row">
                <button type="button" id="copy-embed" class="link-button" onclick={copy("embed-code", embed.clone())}>
                    { t(lang, Key::CopyEmbed) }
                </button>
                <p class="copy-status" role="status" id="embed-code-status">{ message("embed-code") }</p>
            </div>
        </section>
    }
}
