//! The comparison strip: the same configuration with AMP, checkpointing,
//! accumulation ×4 or an 8-bit optimizer, and how much each saves.

use crate::compare::{Effect, technique_rows};
use crate::hooks::use_prefs;
use crate::i18n::{Key, t, tf};
use crate::present::css_width;
use crate::report::Report;
use crate::state::Action;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`Techniques`].
#[derive(Properties, PartialEq)]
pub struct TechniquesProps {
    /// The current report (with its variants).
    pub report: Rc<Report>,
    /// Emits [`Action::Adopt`] when a technique is applied.
    pub on_action: Callback<Action>,
}

/// The comparison card.
#[function_component]
pub fn Techniques(props: &TechniquesProps) -> Html {
    let prefs = use_prefs();
    let lang = prefs.lang;
    let rows = technique_rows(&props.report, prefs);
    // When the configuration does not fit, say which techniques make it fit.
    let current_fits = props.report.estimate.gpu.as_ref().is_none_or(|g| g.fits);
    let body = if rows.is_empty() {
        html! { <p class="empty">{ t(lang, Key::TechNone) }</p> }
    } else {
        html! {
            <ul class="tech-list">
                { for rows.into_iter().map(|row| {
                    let on_action = props.on_action.clone();
                    let config = row.config;
                    let effect = match row.effect {
                        Effect::Saves => "saves",
                        Effect::Costs => "costs",
                        Effect::Same => "same",
                    };
                    html! {
                        <li class={classes!("tech", effect)} id={format!("tech-{}", row.id)} data-saved={row.saved.to_string()}>
                            <div class="tech-head">
                                <span class="tech-name">{ row.name }</span>
                                if let Some(detail) = row.detail {
                                    <span class="tech-detail">{ detail }</span>
                                }
                            </div>
                            <div class="tech-bar" aria-hidden="true"><span style={css_width(row.share)}></span></div>
                            <div class="tech-figures">
                                <span class="tech-device">{ row.device }</span>
                                <span class="tech-change">{ row.change }</span>
                                if row.fits && !current_fits {
                                    <span class="badge">{ t(lang, Key::PointFits) }</span>
                                }
                            </div>
                            <button
                                type="button"
                                class="link-button"
                                aria-label={tf(lang, Key::TechApplyLabel, &[row.name])}
                                onclick={Callback::from(move |_| on_action.emit(Action::Adopt(config)))}
                            >{ t(lang, Key::TechApply) }</button>
                        </li>
                    }
                }) }
            </ul>
        }
    };
    html! {
        <section class="card" id="techniques" aria-labelledby="techniques-title">
            <h2 id="techniques-title" class="card-title">{ t(lang, Key::TechTitle) }</h2>
            <p class="card-sub">{ t(lang, Key::TechSub) }</p>
            { body }
        </section>
    }
}
