//! The count fields of the form (batch, sequence length, image size): their
//! labels, how typed text is parsed into a number, and their messages.

use crate::present::group_digits;
use vramfit_core::config::MAX_DIMENSION;

/// A numeric field of the form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// Micro-batch size.
    Batch,
    /// Sequence length in tokens (text models).
    Seq,
    /// Image side in pixels (vision models).
    Image,
}

impl Field {
    /// The element id of the field's input (`batch`, `seq`, `image`).
    pub fn id(self) -> &'static str {
        match self {
            Field::Batch => "batch",
            Field::Seq => "seq",
            Field::Image => "image",
        }
    }

    /// The field's label, which also starts its error messages.
    pub fn label(self) -> &'static str {
        match self {
            Field::Batch => "Batch size",
            Field::Seq => "Sequence length",
            Field::Image => "Image size",
        }
    }

    /// Help shown under the field.
    pub fn hint(self) -> &'static str {
        match self {
            Field::Batch => "Samples per step",
            Field::Seq => "Tokens per sample",
            Field::Image => "Side of the square input image",
        }
    }

    /// The unit shown inside the field, if any.
    pub fn unit(self) -> Option<&'static str> {
        match self {
            Field::Batch => None,
            Field::Seq => Some("tokens"),
            Field::Image => Some("px"),
        }
    }

    /// A typical value, quoted in error messages.
    fn example(self) -> u64 {
        match self {
            Field::Batch => 8,
            Field::Seq => 512,
            Field::Image => 224,
        }
    }

    /// The field a core error's `field` name refers to.
    pub(crate) fn from_core(name: &str) -> Option<Field> {
        match name {
            "batch" => Some(Field::Batch),
            "seq" => Some(Field::Seq),
            "image" => Some(Field::Image),
            _ => None,
        }
    }
}

/// Parses what the user typed into a count field: a whole number in
/// `1..=MAX_DIMENSION`, surrounding spaces allowed.
///
/// # Errors
/// A message for the user naming the field and what is accepted.
pub fn parse_count(field: Field, raw: &str) -> Result<u64, String> {
    let s = raw.trim();
    let label = field.label();
    if s.is_empty() {
        return Err(format!("Enter a {}.", label.to_lowercase()));
    }
    let negative = s.strip_prefix('-').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    if negative {
        return Err(format!("{label} must be at least 1."));
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{label} must be a whole number, like {}.", field.example()));
    }
    // Only digits are left, so parsing fails only on overflow: too large either way.
    let n = s.parse::<u64>().unwrap_or(u64::MAX);
    if n < 1 {
        Err(format!("{label} must be at least 1."))
    } else if n > MAX_DIMENSION {
        Err(format!("{label} must be at most {}.", group_digits(MAX_DIMENSION)))
    } else {
        Ok(n)
    }
}

/// One message per invalid count field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldErrors {
    /// Batch size message.
    pub batch: Option<String>,
    /// Sequence length message.
    pub seq: Option<String>,
    /// Image size message.
    pub image: Option<String>,
}

impl FieldErrors {
    /// The message for a field, if it is invalid.
    pub fn get(&self, field: Field) -> Option<&str> {
        match field {
            Field::Batch => self.batch.as_deref(),
            Field::Seq => self.seq.as_deref(),
            Field::Image => self.image.as_deref(),
        }
    }

    /// Whether every field is valid.
    pub fn is_empty(&self) -> bool {
        self.batch.is_none() && self.seq.is_none() && self.image.is_none()
    }

    pub(crate) fn set(&mut self, field: Field, message: String) {
        let slot = match field {
            Field::Batch => &mut self.batch,
            Field::Seq => &mut self.seq,
            Field::Image => &mut self.image,
        };
        *slot = Some(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_with_specific_messages() {
        assert_eq!(parse_count(Field::Seq, " 2048 "), Ok(2048));
        assert_eq!(parse_count(Field::Image, "x"), Err("Image size must be a whole number, like 224.".to_string()));
        assert_eq!(parse_count(Field::Seq, ""), Err("Enter a sequence length.".to_string()));
        assert_eq!(parse_count(Field::Batch, "16777216"), Ok(MAX_DIMENSION));
    }
}
