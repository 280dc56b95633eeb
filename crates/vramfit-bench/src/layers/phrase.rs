//! Sentences of a layer report as stable ids and values, beside their
//! English text, so that a page can say them in the reader's language.

/// One sentence as a stable id and the values it quotes (as text, in order).
/// An empty id: no translatable form (an older report); show the English.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Phrase {
    /// Stable id, e.g. `attention-dropout`.
    #[serde(default)]
    pub id: String,
    /// The values the sentence quotes, e.g. the dropout probability.
    #[serde(default)]
    pub args: Vec<String>,
}

impl Phrase {
    /// `id` with `args`.
    pub fn new(id: &str, args: &[&str]) -> Phrase {
        Phrase {
            id: id.to_string(),
            args: args.iter().map(|a| (*a).to_string()).collect(),
        }
    }
}
