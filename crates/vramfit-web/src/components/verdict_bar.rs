//! The verdict in one line (`✓ 9.67 / 24 GiB`), kept in view at the top of
//! narrow screens, where the form comes first; it jumps to the full verdict.

use crate::browser;
use crate::hooks::use_prefs;
use crate::i18n::{Key, t};
use crate::present::Glance;
use yew::prelude::*;

/// Props of [`VerdictBar`].
#[derive(Properties, PartialEq)]
pub struct VerdictBarProps {
    /// The verdict.
    pub glance: Glance,
    /// The id of the full verdict's card.
    pub target: AttrValue,
}

/// A link to the verdict; the stylesheet shows it on narrow screens only.
#[function_component]
pub fn VerdictBar(props: &VerdictBarProps) -> Html {
    let prefs = use_prefs();
    let onclick = {
        let target = props.target.clone();
        Callback::from(move |e: MouseEvent| {
            e.prevent_default();
            browser::focus(&target);
        })
    };
    let fits = props.glance.fits;
    html! {
        <a
            id="verdict-bar"
            class={classes!("verdict-bar", if fits { "fits" } else { "no-fit" })}
            href={format!("#{}", props.target)}
            data-fits={fits.to_string()}
            title={t(prefs.lang, Key::VerdictBarLabel)}
            {onclick}
        >
            { props.glance.line(prefs.units) }
        </a>
    }
}
