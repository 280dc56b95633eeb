//! Display preferences: language, byte units and colour theme. They change
//! how results read, never what is estimated, so changing one re-renders
//! without re-estimating. Components read them from a Yew context.

use crate::i18n::Lang;

/// How byte counts are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Units {
    /// Powers of 1024 (KiB, MiB, GiB): what PyTorch and nvidia-smi count in.
    #[default]
    Binary,
    /// Powers of 1000 (kB, MB, GB).
    Decimal,
}

/// The colour theme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Theme {
    /// Dark text on light backgrounds.
    #[default]
    Light,
    /// Light text on dark backgrounds.
    Dark,
}

impl Theme {
    /// The value of `<html data-theme>`, which the stylesheet keys on.
    pub fn id(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

/// The display preferences in effect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Prefs {
    /// Language of every string.
    pub lang: Lang,
    /// Byte units.
    pub units: Units,
    /// Colour theme.
    pub theme: Theme,
}

impl Prefs {
    /// The preferences a browser asks for: its language tag
    /// (`navigator.language`) and whether it prefers a dark scheme. Units
    /// start binary everywhere: GPU memory is sold and reported in GiB.
    pub fn from_browser(language: &str, prefers_dark: bool) -> Prefs {
        Prefs {
            lang: Lang::from_tag(language),
            units: Units::Binary,
            theme: if prefers_dark {
                Theme::Dark
            } else {
                Theme::Light
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_preferences_pick_language_and_theme() {
        let p = Prefs::from_browser("zh-CN", true);
        assert_eq!(
            (p.lang, p.units, p.theme),
            (Lang::Zh, Units::Binary, Theme::Dark)
        );
        let p = Prefs::from_browser("en-US", false);
        assert_eq!((p.lang, p.theme), (Lang::En, Theme::Light));
    }
}
