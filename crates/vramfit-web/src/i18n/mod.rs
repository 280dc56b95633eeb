//! Every string the page shows, in English and Simplified Chinese.
//!
//! [`table`] is the one translation table: each [`Key`] has both texts, so a
//! missing translation is a compile error, not a blank label. Texts with
//! values use numbered placeholders (`{0}`, `{1}`) because word order differs
//! between the languages; [`fill`] substitutes them.

mod table;

pub use table::Key;

/// A language the page is offered in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lang {
    /// English (the default).
    #[default]
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// Every language, in the order the switch offers them.
    pub const ALL: &'static [Lang] = &[Lang::En, Lang::Zh];

    /// The BCP 47 tag set on `<html lang>` (it also picks CJK glyph shapes).
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }

    /// The language's name in itself, as the switch shows it.
    pub fn native_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Zh => "简体中文",
        }
    }

    /// The language for a browser tag (`navigator.language`): any `zh`
    /// variant reads Chinese, everything else English.
    pub fn from_tag(tag: &str) -> Lang {
        let primary = tag.split(['-', '_']).next().unwrap_or_default();
        if primary.eq_ignore_ascii_case("zh") {
            Lang::Zh
        } else {
            Lang::En
        }
    }

    /// The language for a stable tag as [`Lang::tag`] writes it, if known.
    pub fn parse(tag: &str) -> Option<Lang> {
        Lang::ALL.iter().copied().find(|l| l.tag() == tag)
    }
}

/// The text of `key` in `lang`.
pub fn t(lang: Lang, key: Key) -> &'static str {
    match lang {
        Lang::En => key.english(),
        // The first-edit module answers the prerendered page, which shows
        // only in English (`crate::first_edit`): it carries no Chinese.
        Lang::Zh if cfg!(feature = "first-edit") => key.english(),
        Lang::Zh => key.chinese(),
    }
}

/// `t(lang, key)` with `{0}`, `{1}`, ... replaced by `args`.
pub fn tf(lang: Lang, key: Key, args: &[&str]) -> String {
    fill(t(lang, key), args)
}

/// Replaces `{0}`..`{9}` in `template` by `args`; a placeholder without an
/// argument is left as it is, so a mistake shows rather than panics.
pub fn fill(template: &str, args: &[&str]) -> String {
    let mut out =
        String::with_capacity(template.len() + args.iter().map(|a| a.len()).sum::<usize>());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let (before, tail) = rest.split_at(open);
        out.push_str(before);
        let arg = tail
            .as_bytes()
            .get(1..3)
            .and_then(|b| match b {
                [d @ b'0'..=b'9', b'}'] => args.get(usize::from(d - b'0')),
                _ => None,
            })
            .copied();
        match arg {
            Some(a) => {
                out.push_str(a);
                rest = tail.get(3..).unwrap_or_default();
            }
            None => {
                out.push('{');
                rest = tail.get(1..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placeholders(s: &str) -> Vec<char> {
        let mut v: Vec<char> = s
            .as_bytes()
            .windows(3)
            .filter(|w| w[0] == b'{' && w[2] == b'}')
            .map(|w| char::from(w[1]))
            .collect();
        v.sort_unstable();
        v
    }

    fn has_cjk(s: &str) -> bool {
        s.chars().any(|c| {
            ('\u{3000}'..='\u{9fff}').contains(&c) || ('\u{ff00}'..='\u{ffef}').contains(&c)
        })
    }

    #[test]
    fn every_key_has_both_languages_with_the_same_placeholders() {
        for &key in Key::ALL {
            let (en, zh) = key.texts();
            assert!(!en.trim().is_empty(), "{key:?} has no English text");
            assert!(!zh.trim().is_empty(), "{key:?} has no Chinese text");
            assert_eq!(
                placeholders(en),
                placeholders(zh),
                "{key:?}: placeholders differ between {en:?} and {zh:?}"
            );
        }
    }

    #[test]
    fn chinese_texts_are_translated_unless_language_neutral() {
        for &key in Key::ALL {
            let (en, zh) = key.texts();
            if key.is_neutral() {
                assert_eq!(en, zh, "{key:?} is marked language-neutral but differs");
            } else {
                assert!(
                    has_cjk(zh),
                    "{key:?}: the Chinese text {zh:?} has no Chinese in it"
                );
                assert!(
                    !has_cjk(en),
                    "{key:?}: the English text {en:?} has Chinese in it"
                );
            }
        }
    }

    #[test]
    fn keys_are_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for key in Key::ALL {
            assert!(seen.insert(key), "{key:?} is listed twice");
        }
    }

    #[test]
    fn fill_substitutes_numbered_placeholders_in_any_order() {
        assert_eq!(fill("{1} of {0}", &["a", "b"]), "b of a");
        assert_eq!(fill("{0}{0}", &["x"]), "xx");
        assert_eq!(fill("{2} and {", &["x"]), "{2} and {");
        assert_eq!(fill("no braces", &[]), "no braces");
        assert_eq!(fill("{0}：{1}", &["模型", "7B"]), "模型：7B");
        assert_eq!(tf(Lang::En, Key::FitsOn, &["H100"]), "Fits on H100");
    }

    #[test]
    fn browser_tags_pick_the_language() {
        assert_eq!(Lang::from_tag("zh-CN"), Lang::Zh);
        assert_eq!(Lang::from_tag("zh"), Lang::Zh);
        assert_eq!(Lang::from_tag("zh_Hans_SG"), Lang::Zh);
        assert_eq!(Lang::from_tag("ZH-tw"), Lang::Zh);
        assert_eq!(Lang::from_tag("en-GB"), Lang::En);
        assert_eq!(Lang::from_tag("de"), Lang::En);
        assert_eq!(Lang::from_tag(""), Lang::En);
        for &l in Lang::ALL {
            assert_eq!(Lang::parse(l.tag()), Some(l));
        }
    }
}
