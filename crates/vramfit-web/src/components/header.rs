//! The page header: the name, the tagline, and the display settings
//! (language, byte units, dark mode).

use crate::i18n::{Key, Lang, t};
use crate::prefs::{Prefs, Theme, Units};
use crate::state::Action;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

/// Props of [`Header`].
#[derive(Properties, PartialEq)]
pub struct HeaderProps {
    /// The preferences in effect.
    pub prefs: Prefs,
    /// Emits preference changes.
    pub on_action: Callback<Action>,
    /// Training, fine-tuning or inference (the tagline's words).
    #[prop_or(vramfit_core::config::Mode::Train)]
    pub mode: vramfit_core::config::Mode,
    /// Every language in the list; `false` holds only the chosen one, as
    /// the form's selects do until the first render is on screen
    /// (`ConfigForm`'s `built`). The other names are in other scripts: a
    /// Chinese name on the prerendered English page had the browser find
    /// and load a CJK font before its first paint (without it, the first
    /// result painted about 30 ms sooner on a 2-core machine, in two
    /// alternating 10-run sets of the side-by-side page harness).
    #[prop_or(true)]
    pub full: bool,
}

/// The header bar.
#[function_component]
pub fn Header(props: &HeaderProps) -> Html {
    let lang = props.prefs.lang;
    let on_lang = {
        let on_action = props.on_action.clone();
        Callback::from(move |e: Event| {
            let tag = e
                .target_dyn_into::<HtmlSelectElement>()
                .map(|s| s.value())
                .unwrap_or_default();
            if let Some(l) = Lang::parse(&tag) {
                on_action.emit(Action::SetLang(l));
            }
        })
    };
    let unit_button = |units: Units, key: Key, help: Key| {
        let on_action = props.on_action.clone();
        let pressed = props.prefs.units == units;
        html! {
            <button
                type="button"
                class="seg"
                id={format!("units-{}", t(Lang::En, key).to_ascii_lowercase())}
                aria-pressed={pressed.to_string()}
                title={t(lang, help)}
                onclick={Callback::from(move |_| on_action.emit(Action::SetUnits(units)))}
            >{ t(lang, key) }</button>
        }
    };
    let dark = props.prefs.theme == Theme::Dark;
    let on_theme = {
        let on_action = props.on_action.clone();
        Callback::from(move |_| {
            on_action.emit(Action::SetTheme(if dark {
                Theme::Light
            } else {
                Theme::Dark
            }))
        })
    };
    html! {
        <header class="site-header">
            <div class="wrap header-inner">
                <h1 class="brand" translate="no"><img src="favicon.svg" alt="" width="24" height="24" />{ "vramfit" }</h1>
                <p class="tagline">{ t(lang, crate::present::in_mode(Key::Tagline, props.mode)) }</p>
                <div class="settings" role="group" aria-label={t(lang, Key::Settings)}>
                    <label class="visually-hidden" for="lang">{ t(lang, Key::Language) }</label>
                    <select id="lang" class="compact" onchange={on_lang}>
                        { for Lang::ALL.iter().filter(|l| props.full || **l == lang).map(|l| html! {
                            <option value={l.tag()} lang={l.tag()} translate="no" selected={*l == lang}>{ l.native_name() }</option>
                        }) }
                    </select>
                    <div class="segmented" role="group" aria-label={t(lang, Key::Units)}>
                        { unit_button(Units::Binary, Key::UnitsGiB, Key::UnitsGiBHelp) }
                        { unit_button(Units::Decimal, Key::UnitsGB, Key::UnitsGBHelp) }
                    </div>
                    <button
                        type="button"
                        id="theme"
                        class="icon-button"
                        aria-pressed={dark.to_string()}
                        title={t(lang, Key::DarkMode)}
                        onclick={on_theme}
                    >
                        <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
                            <path d="M20.4 14.6A8.5 8.5 0 0 1 9.4 3.6a8.5 8.5 0 1 0 11 11z" />
                        </svg>
                        <span class="visually-hidden">{ t(lang, Key::DarkMode) }</span>
                    </button>
                </div>
            </div>
        </header>
    }
}
