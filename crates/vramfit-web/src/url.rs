//! The page's address. It is a share link ([`vramfit_core::share`]: model,
//! GPU, every setting; the CLI reads the same links) plus keys only the page
//! and the widget read: `lang`, `theme`, `units` (display) and `lock`,
//! `curve` (widget). Also the link and embed snippets the page offers to copy.
//!
//! Like the core's keys, these never fail: a bad value is ignored with a
//! [`Warning`] that [`describe`] turns into a sentence.

use crate::i18n::{Key, Lang, t, tf};
use crate::prefs::{Prefs, Theme, Units};
use crate::present::group_digits;
use vramfit_core::share::{self, Reason, ShareState, Warning};

/// The inputs a widget shows, by share key; `lock` names some of them (or `all`).
pub const WIDGET_INPUTS: &[&str] = &["m", "g", "b", "s", "i", "a", "p", "o", "c", "at"];

/// Display settings a link asks for; `None` follows the browser.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct View {
    /// `lang=en|zh-CN`.
    pub lang: Option<Lang>,
    /// `theme=light|dark`.
    pub theme: Option<Theme>,
    /// `units=gib|gb`.
    pub units: Option<Units>,
}

impl View {
    /// The preferences in effect: the link's where it set one, else the browser's.
    pub fn apply(&self, browser: Prefs) -> Prefs {
        Prefs {
            lang: self.lang.unwrap_or(browser.lang),
            theme: self.theme.unwrap_or(browser.theme),
            units: self.units.unwrap_or(browser.units),
        }
    }

    /// The settings of `prefs` that differ from what the browser would pick
    /// by itself (so a link keeps a language chosen on purpose, and nothing else).
    pub fn chosen(prefs: Prefs, browser: Prefs) -> View {
        View {
            lang: (prefs.lang != browser.lang).then_some(prefs.lang),
            theme: (prefs.theme != browser.theme).then_some(prefs.theme),
            units: (prefs.units != browser.units).then_some(prefs.units),
        }
    }

    /// `&lang=...&theme=...&units=...` for the settings present.
    fn query(&self) -> String {
        let mut q = String::new();
        if let Some(l) = self.lang {
            q.push_str(&format!("&lang={}", l.tag()));
        }
        if let Some(th) = self.theme {
            q.push_str(&format!("&theme={}", th.id()));
        }
        if let Some(u) = self.units {
            q.push_str(&format!("&units={}", units_id(u)));
        }
        q
    }
}

fn units_id(u: Units) -> &'static str {
    match u {
        Units::Binary => "gib",
        Units::Decimal => "gb",
    }
}

/// How an embedded widget behaves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WidgetOptions {
    /// The share keys of the inputs shown read-only (`lock=m,g` or `lock=all`).
    pub locked: Vec<&'static str>,
    /// Whether the batch curve is shown (`curve=1`).
    pub curve: bool,
}

impl WidgetOptions {
    /// Whether the input with this share key is read-only.
    pub fn is_locked(&self, key: &str) -> bool {
        self.locked.contains(&key)
    }
}

/// A decoded page address.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// What is estimated.
    pub share: ShareState,
    /// Display settings it asks for.
    pub view: View,
    /// Widget options.
    pub widget: WidgetOptions,
    /// What was ignored, in the order met.
    pub warnings: Vec<Warning>,
}

/// Reads the page's address (`location.search`, or a whole URL).
pub fn read(address: &str) -> Link {
    let decoded = share::decode(address);
    let mut warnings = decoded.warnings;
    let mut view = View::default();
    let mut widget = WidgetOptions::default();
    let mut seen: Vec<String> = Vec::new();
    for (key, value) in share::parse_query(share::query_part(address)) {
        if !["lang", "theme", "units", "lock", "curve"].contains(&key.as_str()) {
            continue;
        }
        let mut warn = |reason, fallback: &str| {
            let value = value.chars().take(48).collect();
            warnings.push(Warning {
                key: key.clone(),
                value,
                reason,
                fallback: fallback.to_string(),
            });
        };
        if seen.contains(&key) {
            warn(Reason::Repeated, "");
            continue;
        }
        seen.push(key.clone());
        let v = value.trim();
        match key.as_str() {
            "lang" => match Lang::parse(v).or_else(|| {
                ["en", "zh"]
                    .contains(&primary(v).as_str())
                    .then(|| Lang::from_tag(v))
            }) {
                Some(l) => view.lang = Some(l),
                None => warn(Reason::Choice("en|zh-CN".into()), ""),
            },
            "theme" => match v {
                "light" => view.theme = Some(Theme::Light),
                "dark" => view.theme = Some(Theme::Dark),
                _ => warn(Reason::Choice("light|dark".into()), ""),
            },
            "units" => match v {
                "gib" => view.units = Some(Units::Binary),
                "gb" => view.units = Some(Units::Decimal),
                _ => warn(Reason::Choice("gib|gb".into()), ""),
            },
            "curve" => match v {
                "1" | "on" | "true" => widget.curve = true,
                "0" | "off" | "false" => widget.curve = false,
                _ => warn(Reason::Switch, "0"),
            },
            _ => {
                let items: Vec<&str> = v
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                if items == ["all"] {
                    widget.locked = WIDGET_INPUTS.to_vec();
                } else {
                    widget.locked = WIDGET_INPUTS
                        .iter()
                        .copied()
                        .filter(|k| items.contains(k))
                        .collect();
                    if items.iter().any(|i| !WIDGET_INPUTS.contains(i)) {
                        warn(
                            Reason::Choice(format!("all, or some of {}", WIDGET_INPUTS.join(","))),
                            "",
                        );
                    }
                }
            }
        }
    }
    Link {
        share: decoded.state,
        view,
        widget,
        warnings,
    }
}

fn primary(tag: &str) -> String {
    tag.split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// The page's query for a state and the display settings chosen on purpose.
pub fn page_query(share: &ShareState, view: &View) -> String {
    format!("{}{}", share.to_query(), view.query())
}

/// The Benchmark page's query ([`crate::frame`]): the state and every display setting in effect.
pub fn frame_query(share: &ShareState, prefs: Prefs) -> String {
    page_query(
        share,
        &View {
            lang: Some(prefs.lang),
            theme: Some(prefs.theme),
            units: Some(prefs.units),
        },
    )
}

/// The widget's query: the state, its display settings and options.
pub fn widget_query(share: &ShareState, view: &View, widget: &WidgetOptions) -> String {
    let mut q = page_query(share, view);
    if !widget.locked.is_empty() {
        q.push_str("&lock=");
        q.push_str(&if widget.locked.len() == WIDGET_INPUTS.len() {
            "all".to_string()
        } else {
            widget.locked.join(",")
        });
    }
    if widget.curve {
        q.push_str("&curve=1");
    }
    q
}

/// What the "Copy embed code" controls choose for a widget: its options and
/// display settings (`None`: the reader's browser decides).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EmbedChoice {
    /// Every input read-only (`lock=all`).
    pub lock_all: bool,
    /// The batch curve under the verdict (`curve=1`).
    pub curve: bool,
    /// A fixed colour theme.
    pub theme: Option<Theme>,
    /// A fixed language.
    pub lang: Option<Lang>,
}

impl EmbedChoice {
    /// The widget's query for `share` with these choices.
    pub fn query(&self, share: &ShareState) -> String {
        let view = View {
            lang: self.lang,
            theme: self.theme,
            units: None,
        };
        let widget = WidgetOptions {
            locked: if self.lock_all {
                WIDGET_INPUTS.to_vec()
            } else {
                Vec::new()
            },
            curve: self.curve,
        };
        widget_query(share, &view, &widget)
    }
}

/// The snippet a docs author pastes: a placeholder the script turns into
/// an iframe of `embed.html` (from `base`, the published calculator).
///
/// # Example
/// ```
/// let s = vramfit_web::url::embed_snippet("https://x.org/vramfit/", "v=1&m=resnet50");
/// assert_eq!(s, "<div data-vramfit=\"v=1&amp;m=resnet50\"></div>\n<script src=\"https://x.org/vramfit/embed.js\" async></script>");
/// ```
pub fn embed_snippet(base: &str, query: &str) -> String {
    // Queries hold only URL-safe characters; `&` is escaped for HTML all the same.
    format!(
        "<div data-vramfit=\"{}\"></div>\n<script src=\"{base}embed.js\" async></script>",
        query.replace('&', "&amp;")
    )
}

/// A warning as shown: the sentence, an id or detail to show as code, and
/// the value used instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Described {
    /// What was wrong, as a sentence fragment in the chosen language.
    pub text: String,
    /// Accepted values, shown as code.
    pub detail: Option<String>,
    /// The value used instead, shown as code.
    pub fallback: Option<String>,
}

/// Describes a warning in `lang`.
pub fn describe(w: &Warning, lang: Lang) -> Described {
    let (text, detail) = match &w.reason {
        Reason::Choice(accepted) => (t(lang, Key::LinkChoice).to_string(), Some(accepted.clone())),
        Reason::Count { min, max } => (
            tf(
                lang,
                Key::LinkCount,
                &[&group_digits(*min), &group_digits(*max)],
            ),
            None,
        ),
        Reason::Fraction => (t(lang, Key::LinkFraction).to_string(), None),
        Reason::Switch => (t(lang, Key::LinkSwitch).to_string(), None),
        Reason::UnknownModel => (t(lang, Key::LinkUnknownModel).to_string(), None),
        Reason::UnknownGpu => (t(lang, Key::LinkUnknownGpu).to_string(), None),
        Reason::Config(fault) => (crate::messages::config_fault(*fault, lang), None),
        Reason::NoConfig => (t(lang, Key::LinkNoConfig).to_string(), None),
        Reason::Repeated => (t(lang, Key::LinkRepeated).to_string(), None),
        Reason::NewerVersion => (t(lang, Key::LinkNewer).to_string(), None),
        Reason::TooLong => (t(lang, Key::LinkTooLong).to_string(), None),
        Reason::NoExperts => (t(lang, Key::LinkNoExperts).to_string(), None),
    };
    Described {
        text,
        detail,
        fallback: (!w.fallback.is_empty()).then(|| w.fallback.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_and_widget_keys_are_read_and_bad_ones_named() {
        let l = read("?m=resnet50&lang=zh&theme=dark&units=gb&lock=m,g,zz&curve=1&curve=0");
        assert_eq!(l.share.model, "resnet50");
        assert_eq!(
            l.view,
            View {
                lang: Some(Lang::Zh),
                theme: Some(Theme::Dark),
                units: Some(Units::Decimal)
            }
        );
        assert_eq!(
            l.widget,
            WidgetOptions {
                locked: vec!["m", "g"],
                curve: true
            }
        );
        let keys: Vec<&str> = l.warnings.iter().map(|w| w.key.as_str()).collect();
        assert_eq!(keys, ["lock", "curve"]);
        let l = read("?lang=fr&theme=<script>&lock=all");
        assert_eq!(l.view, View::default());
        assert_eq!(l.widget.locked.len(), WIDGET_INPUTS.len());
        assert_eq!(l.warnings.len(), 2);
    }

    #[test]
    fn queries_round_trip_through_read() {
        let mut share = ShareState::default();
        share.train.batch = 3;
        let view = View {
            lang: Some(Lang::Zh),
            theme: None,
            units: Some(Units::Decimal),
        };
        let widget = WidgetOptions {
            locked: vec!["m", "b"],
            curve: true,
        };
        let l = read(&widget_query(&share, &view, &widget));
        assert_eq!(
            (l.share, l.view, l.widget, l.warnings.len()),
            (share, view, widget, 0)
        );
        let all = WidgetOptions {
            locked: WIDGET_INPUTS.to_vec(),
            curve: false,
        };
        assert!(
            widget_query(&ShareState::default(), &View::default(), &all).ends_with("&lock=all")
        );
    }

    #[test]
    fn chosen_views_keep_only_what_differs_from_the_browser() {
        let browser = Prefs {
            lang: Lang::En,
            theme: Theme::Light,
            units: Units::Binary,
        };
        let prefs = Prefs {
            lang: Lang::Zh,
            ..browser
        };
        assert_eq!(
            View::chosen(prefs, browser),
            View {
                lang: Some(Lang::Zh),
                ..View::default()
            }
        );
        assert_eq!(View::chosen(prefs, browser).apply(browser), prefs);
    }

    #[test]
    fn every_warning_reads_in_both_languages() {
        let l = read("?b=x&g=y&m=hf-import&ka=2&sp=2&p=z&v=9&j=%%&b=1&lang=x");
        assert!(l.warnings.len() >= 9);
        for w in &l.warnings {
            for lang in Lang::ALL {
                assert!(!describe(w, *lang).text.is_empty(), "{w:?}");
            }
        }
        assert_eq!(
            describe(&l.warnings[0], Lang::En).text,
            "expected a whole number from 1 to 16,777,216"
        );
        assert_eq!(
            describe(&l.warnings[0], Lang::En).fallback.as_deref(),
            Some("8")
        );
    }

    #[test]
    fn the_embed_choices_go_into_the_code_and_read_back() {
        let share = ShareState::default();
        assert_eq!(EmbedChoice::default().query(&share), share.to_query());
        let choice = EmbedChoice {
            lock_all: true,
            curve: true,
            theme: Some(Theme::Dark),
            lang: Some(Lang::Zh),
        };
        let q = choice.query(&share);
        let snippet = embed_snippet("https://x.org/", &q);
        assert!(
            snippet.contains("&amp;lang=zh-CN&amp;theme=dark&amp;lock=all&amp;curve=1"),
            "{snippet}"
        );
        let back = read(&q);
        assert_eq!(back.view.lang, Some(Lang::Zh));
        assert_eq!(back.view.theme, Some(Theme::Dark));
        assert!(back.widget.curve);
        assert!(WIDGET_INPUTS.iter().all(|k| back.widget.is_locked(k)));
        assert!(back.warnings.is_empty(), "{:?}", back.warnings);
    }
}
