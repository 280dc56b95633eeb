//! What a link had that could not be used, and why: data for the front
//! ends to word in their language, with an English [`fmt::Display`] (the CLI's).

use super::{ConfigFault, MAX_QUERY_BYTES, VERSION};
use std::fmt;

/// Longest value quoted back in a warning.
pub(crate) const MAX_QUOTED_CHARS: usize = 48;

/// What was wrong with a value (the key and value are in the [`Warning`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Not one of the accepted values (`|`-separated).
    Choice(String),
    /// Not a whole number in `min..=max`.
    Count {
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// Not a number in (0, 1].
    Fraction,
    /// Not `1` or `0`.
    Switch,
    /// No model preset has this id.
    UnknownModel,
    /// No GPU preset has this id.
    UnknownGpu,
    /// The packed `config.json` cannot be read (why).
    Config(ConfigFault),
    /// `m=hf-import` without a `j` to import.
    NoConfig,
    /// The key appeared before: this later value was ignored.
    Repeated,
    /// The link comes from a newer format version: keys it added are ignored.
    NewerVersion,
    /// The link is longer than [`MAX_QUERY_BYTES`]: the rest was ignored.
    TooLong,
    /// An expert split (`ep`, `etp`) for a model without experts
    /// ([`drop_expert_split`]).
    NoExperts,
}

/// A part of a link that was ignored, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The key (empty for the link as a whole).
    pub key: String,
    /// The value as given, shortened to 48 characters.
    pub value: String,
    /// Why it was ignored.
    pub reason: Reason,
    /// What is used instead, as a URL value (empty when nothing changes).
    pub fallback: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (k, v) = (&self.key, &self.value);
        match &self.reason {
            Reason::Choice(accepted) => write!(f, "ignored {k}={v}: expected one of {accepted}")?,
            Reason::Count { min, max } => write!(
                f,
                "ignored {k}={v}: expected a whole number in {min}..={max}"
            )?,
            Reason::Fraction => write!(f, "ignored {k}={v}: expected a number in (0, 1]")?,
            Reason::Switch => write!(f, "ignored {k}={v}: expected 1 or 0")?,
            Reason::UnknownModel => write!(f, "ignored {k}={v}: no model preset has this id")?,
            Reason::UnknownGpu => write!(f, "ignored {k}={v}: no GPU preset has this id")?,
            Reason::Config(why) => write!(f, "ignored {k}: the config.json cannot be read: {why}")?,
            Reason::NoConfig => write!(f, "ignored {k}={v}: the link carries no config.json (j)")?,
            Reason::NoExperts => write!(
                f,
                "ignored {k}={v}: the model has no experts (not a mixture of experts) to split"
            )?,
            Reason::Repeated => {
                return write!(f, "ignored the repeated {k}={v}: the first {k} is used");
            }
            Reason::NewerVersion => {
                return write!(
                    f,
                    "the link is format version {v}, newer than {VERSION}: keys this version does not know are ignored"
                );
            }
            Reason::TooLong => {
                return write!(
                    f,
                    "the link is longer than {MAX_QUERY_BYTES} bytes: the rest is ignored"
                );
            }
        }
        if self.fallback.is_empty() {
            Ok(())
        } else {
            write!(f, " (using {})", self.fallback)
        }
    }
}

/// A link's expert split when its model has no experts: each of `ep`
/// (above 1) and `etp` (set) becomes a [`Reason::NoExperts`] warning and
/// goes back to its default, so the page says why instead of resetting
/// it unseen. The CLI does not call it: there the estimate refuses the
/// split with [`crate::error::Inapplicable::ExpertParallelNoExperts`].
pub fn drop_expert_split(state: &mut super::ShareState) -> Vec<Warning> {
    let p = &mut state.train.parallel;
    let mut out = Vec::new();
    let mut drop = |key: &str, value: &mut u64, default: u64| {
        if *value != default {
            out.push(Warning {
                key: key.to_string(),
                value: value.to_string(),
                reason: Reason::NoExperts,
                fallback: default.to_string(),
            });
            *value = default;
        }
    };
    drop("ep", &mut p.ep, 1);
    drop("etp", &mut p.etp, 0);
    out
}

/// `value` shortened to [`MAX_QUOTED_CHARS`] characters for a message.
pub(crate) fn quote(value: &str) -> String {
    match value.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((end, _)) => format!("{}…", value.get(..end).unwrap_or_default()),
        None => value.to_string(),
    }
}
