//! The count fields of the form (batch, sequence length, image size,
//! gradient accumulation, checkpoint interval): their ids, ranges, how typed
//! text is parsed, and what is wrong with it as data ([`FieldError`]), so the
//! message can be written in whichever language is chosen.

use crate::i18n::{Key, Lang, t, tf};
use crate::present::group_digits;
use vramfit_core::config::MAX_DIMENSION;
use vramfit_core::engines::serving::{MAX_CONCURRENCY, MAX_GPU_LAYERS};
use vramfit_core::models::InputKind;

/// Largest gradient-accumulation count and checkpoint interval the core accepts.
pub const MAX_STEPS: u64 = 1 << 16;

/// Most GPUs per node the share links accept.
pub const MAX_GPUS: u64 = 1024;

/// A numeric field of the form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// Micro-batch size.
    Batch,
    /// Sequence length in tokens (text models).
    Seq,
    /// Image side in pixels (vision models).
    Image,
    /// Gradient-accumulation steps.
    Accum,
    /// Checkpoint one block in every K.
    EveryK,
    /// Data-parallel GPUs per node.
    Gpus,
    /// Expert-parallel GPUs (models with experts).
    Ep,
    /// Expert tensor-parallel GPUs (models with experts); 0 means as tensor parallelism.
    Etp,
    /// The memory of a GPU given by its memory alone, GiB.
    GpuMemory,
    /// LoRA rank (fine-tuning modes).
    LoraRank,
    /// KV-cache length (inference); 0 means the sequence length.
    Context,
    /// Sequences in flight (a serving engine's).
    Concurrency,
    /// vLLM's `--gpu-memory-utilization` (SGLang's `--mem-fraction-static`), a fraction.
    Utilization,
    /// llama.cpp's `-ngl`; blank (or `all`) offloads every layer.
    GpuLayers,
}

impl Field {
    /// The input-size field of a model reading `kind`: sequence length for
    /// text, image size for vision, none for feature vectors.
    pub fn input_size(kind: InputKind) -> Option<Field> {
        match kind {
            InputKind::Tokens => Some(Field::Seq),
            InputKind::Image => Some(Field::Image),
            InputKind::Features => None,
        }
    }

    /// The element id of the field's input.
    pub fn id(self) -> &'static str {
        match self {
            Field::Batch => "batch",
            Field::Seq => "seq",
            Field::Image => "image",
            Field::Accum => "accum",
            Field::EveryK => "every-k",
            Field::Gpus => "gpus",
            Field::Ep => "ep",
            Field::Etp => "etp",
            Field::GpuMemory => "gpu-memory",
            Field::LoraRank => "lora-rank",
            Field::Context => "context",
            Field::Concurrency => "concurrency",
            Field::Utilization => "gpu-utilization",
            Field::GpuLayers => "gpu-layers",
        }
    }

    /// The field's label, which also starts its error messages.
    pub fn label(self) -> Key {
        match self {
            Field::Batch => Key::BatchSize,
            Field::Seq => Key::SeqLength,
            Field::Image => Key::ImageSize,
            Field::Accum => Key::GradAccum,
            Field::EveryK => Key::EveryK,
            Field::Gpus => Key::GpusPerNode,
            Field::Ep => Key::ExpertParallel,
            Field::Etp => Key::ExpertTensorParallel,
            Field::GpuMemory => Key::GpuMemory,
            Field::LoraRank => Key::LoraRank,
            Field::Context => Key::ContextTokens,
            Field::Concurrency => Key::Concurrency,
            Field::Utilization => Key::Utilization,
            Field::GpuLayers => Key::GpuLayers,
        }
    }

    /// Help shown under the field.
    pub fn hint(self) -> Key {
        match self {
            Field::Batch => Key::BatchHint,
            Field::Seq => Key::SeqHint,
            Field::Image => Key::ImageHint,
            Field::Accum => Key::GradAccumHint,
            Field::EveryK => Key::EveryKHint,
            Field::Gpus => Key::GpusHint,
            Field::Ep => Key::ExpertParallelHint,
            Field::Etp => Key::ExpertTensorParallelHint,
            Field::GpuMemory => Key::GpuMemoryHint,
            Field::LoraRank => Key::LoraRankHint,
            Field::Context => Key::ContextHint,
            Field::Concurrency => Key::ConcurrencyHint,
            Field::Utilization => Key::UtilizationHint,
            Field::GpuLayers => Key::GpuLayersHint,
        }
    }

    /// The unit shown inside the field, if any.
    pub fn unit(self) -> Option<Key> {
        match self {
            Field::Batch | Field::LoraRank | Field::Utilization => None,
            Field::Concurrency => Some(Key::UnitSequences),
            Field::GpuLayers => Some(Key::UnitLayers),
            Field::Gpus | Field::Ep | Field::Etp => Some(Key::UnitGpus),
            Field::GpuMemory => Some(Key::UnitGib),
            Field::Context => Some(Key::UnitTokens),
            Field::Seq => Some(Key::UnitTokens),
            Field::Image => Some(Key::UnitPx),
            Field::Accum => Some(Key::UnitSteps),
            Field::EveryK => Some(Key::UnitBlocks),
        }
    }

    /// The accepted values.
    pub fn range(self) -> (u64, u64) {
        match self {
            Field::Batch | Field::Seq | Field::Image => (1, MAX_DIMENSION),
            Field::Accum | Field::EveryK | Field::LoraRank => (1, MAX_STEPS),
            Field::Gpus | Field::Ep => (1, MAX_GPUS),
            Field::GpuMemory => (
                *vramfit_core::gpus::CUSTOM_GIB.start(),
                *vramfit_core::gpus::CUSTOM_GIB.end(),
            ),
            Field::Context => (0, MAX_DIMENSION),
            Field::Etp => (0, MAX_GPUS),
            Field::Concurrency => (1, MAX_CONCURRENCY),
            // A fraction: read by `parse_fraction`, which has its own message.
            Field::Utilization => (0, 1),
            Field::GpuLayers => (0, MAX_GPU_LAYERS),
        }
    }

    /// A typical value, quoted in error messages.
    fn example(self) -> u64 {
        match self {
            Field::Batch => 8,
            Field::Seq => 512,
            Field::Image => 224,
            Field::Accum => 4,
            Field::EveryK => 2,
            Field::Gpus | Field::Ep => 8,
            Field::Etp => 2,
            Field::GpuMemory => 24,
            Field::LoraRank => 16,
            Field::Context => 4096,
            Field::Concurrency => 8,
            // Never quoted: `parse_fraction` says "like 0.9" itself.
            Field::Utilization => 1,
            Field::GpuLayers => 20,
        }
    }

    fn empty(self) -> Key {
        match self {
            Field::Batch => Key::EmptyBatch,
            Field::Seq => Key::EmptySeq,
            Field::Image => Key::EmptyImage,
            Field::Accum => Key::EmptyAccum,
            Field::EveryK => Key::EmptyEveryK,
            Field::Gpus => Key::EmptyGpus,
            Field::Ep => Key::EmptyExpertParallel,
            Field::Etp => Key::EmptyExpertTensorParallel,
            Field::GpuMemory => Key::EmptyGpuMemory,
            Field::LoraRank => Key::EmptyLoraRank,
            Field::Context => Key::EmptyContext,
            Field::Concurrency => Key::EmptyConcurrency,
            Field::Utilization => Key::EmptyUtilization,
            // Blank means every layer (`parse_gpu_layers`): said, not refused.
            Field::GpuLayers => Key::EmptyGpuLayers,
        }
    }

    /// The field a core error's `field` name refers to.
    pub(crate) fn from_core(name: &str) -> Option<Field> {
        match name {
            "batch" => Some(Field::Batch),
            "seq" => Some(Field::Seq),
            "image" => Some(Field::Image),
            "grad-accum" => Some(Field::Accum),
            "checkpointing every-K" => Some(Field::EveryK),
            "gpus-per-node" => Some(Field::Gpus),
            "ep" => Some(Field::Ep),
            "etp" => Some(Field::Etp),
            "lora-rank" => Some(Field::LoraRank),
            "context" => Some(Field::Context),
            "concurrency" => Some(Field::Concurrency),
            "gpu-memory-utilization" => Some(Field::Utilization),
            "gpu-layers" => Some(Field::GpuLayers),
            _ => None,
        }
    }
}

/// What is wrong with a field's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldError {
    /// Nothing typed.
    Empty,
    /// Not a whole number.
    NotWhole,
    /// Below the smallest accepted value.
    TooSmall(u64),
    /// Above the largest accepted value.
    TooLarge(u64),
    /// Not a fraction above 0 and at most 1.
    NotFraction,
    /// The estimator says this value does not apply to the model (why).
    NotApplicable(vramfit_core::error::Inapplicable),
}

impl FieldError {
    /// The message shown under `field`, as a sentence in `lang`.
    pub fn message(&self, field: Field, lang: Lang) -> String {
        let label = t(lang, field.label());
        match self {
            FieldError::Empty => t(lang, field.empty()).to_string(),
            FieldError::NotWhole => tf(lang, Key::NotWhole, &[label, &field.example().to_string()]),
            FieldError::TooSmall(min) => tf(lang, Key::TooSmall, &[label, &group_digits(*min)]),
            FieldError::TooLarge(max) => tf(lang, Key::TooLarge, &[label, &group_digits(*max)]),
            FieldError::NotFraction => tf(lang, Key::NotFraction, &[label]),
            FieldError::NotApplicable(why) => tf(
                lang,
                Key::NotApplicable,
                &[&crate::messages::inapplicable(why, lang)],
            ),
        }
    }
}

/// Parses what the user typed into a count field: a whole number in the
/// field's range, surrounding spaces allowed, scientific notation (`1e3`)
/// accepted when it names a whole number.
///
/// # Errors
/// What is wrong, as a [`FieldError`].
pub fn parse_count(field: Field, raw: &str) -> Result<u64, FieldError> {
    let s = raw.trim();
    if s.is_empty() {
        return Err(FieldError::Empty);
    }
    let (min, max) = field.range();
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let value = whole_number(digits).ok_or(FieldError::NotWhole)?;
    if negative && value > 0.0 {
        return Err(FieldError::TooSmall(min));
    }
    if value < min as f64 {
        Err(FieldError::TooSmall(min))
    } else if value > max as f64 {
        Err(FieldError::TooLarge(max))
    } else {
        // In range, so at most 2^24: exact as f64.
        Ok(value as u64)
    }
}

/// Parses a fraction above 0 and at most 1 (`0.9`, ` .85 `), as vLLM's
/// `--gpu-memory-utilization` takes it.
///
/// # Errors
/// [`FieldError::Empty`] or [`FieldError::NotFraction`].
pub fn parse_fraction(raw: &str) -> Result<f64, FieldError> {
    let s = raw.trim();
    if s.is_empty() {
        return Err(FieldError::Empty);
    }
    // NaN and infinities fail the range test.
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(FieldError::NotFraction),
    }
}

/// Parses llama.cpp's `-ngl` as typed: blank or `all` offloads every layer
/// (`None`), else a count of layers.
///
/// # Errors
/// As [`parse_count`] for [`Field::GpuLayers`].
pub fn parse_gpu_layers(raw: &str) -> Result<Option<u64>, FieldError> {
    let s = raw.trim();
    if s.is_empty() || s.eq_ignore_ascii_case("all") {
        return Ok(None);
    }
    parse_count(Field::GpuLayers, s).map(Some)
}

/// `123`, `1e3` or `2.5e2` as a number, if it is a whole one.
fn whole_number(s: &str) -> Option<f64> {
    let (mantissa, exponent) = match s.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix('+').unwrap_or(e))),
        None => (s, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    let well_formed = digits(int)
        && (frac.is_empty() || digits(frac))
        && (exponent.is_some() || frac.is_empty())
        && exponent.is_none_or(digits);
    if !well_formed {
        return None;
    }
    // Only digits, a dot and an exponent are left: parsing succeeds, and
    // overflows to infinity, which is "too large".
    let v = s.parse::<f64>().ok()?;
    (v.is_infinite() || v.fract() == 0.0).then_some(v)
}

/// The invalid fields and why, in the order they were found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldErrors(Vec<(Field, FieldError)>);

impl FieldErrors {
    /// Why a field is invalid, if it is.
    pub fn get(&self, field: Field) -> Option<&FieldError> {
        self.0.iter().find(|(f, _)| *f == field).map(|(_, e)| e)
    }

    /// Whether every field is valid.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Records why `field` is invalid, replacing an earlier reason.
    pub(crate) fn set(&mut self, field: Field, error: FieldError) {
        self.0.retain(|(f, _)| *f != field);
        self.0.push((field, error));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn en(field: Field, raw: &str) -> Result<u64, String> {
        parse_count(field, raw).map_err(|e| e.message(field, Lang::En))
    }

    #[test]
    fn counts_parse_with_specific_messages() {
        assert_eq!(en(Field::Seq, " 2048 "), Ok(2048));
        assert_eq!(
            en(Field::Image, "x"),
            Err("Image size must be a whole number, like 224.".to_string())
        );
        assert_eq!(
            en(Field::Seq, ""),
            Err("Enter a sequence length.".to_string())
        );
        assert_eq!(
            en(Field::Image, " "),
            Err("Enter an image size.".to_string())
        );
        assert_eq!(en(Field::Batch, "16777216"), Ok(MAX_DIMENSION));
        assert_eq!(
            en(Field::Accum, "65537"),
            Err("Gradient accumulation must be at most 65,536.".to_string())
        );
        assert_eq!(
            en(Field::EveryK, "0"),
            Err("Interval K must be at least 1.".to_string())
        );
    }

    #[test]
    fn scientific_notation_is_read_when_whole() {
        assert_eq!(parse_count(Field::Batch, "1e3"), Ok(1000));
        assert_eq!(parse_count(Field::Batch, "2.5e1"), Ok(25));
        assert_eq!(
            parse_count(Field::Batch, "1e12"),
            Err(FieldError::TooLarge(MAX_DIMENSION))
        );
        assert_eq!(
            parse_count(Field::Batch, "1e999"),
            Err(FieldError::TooLarge(MAX_DIMENSION))
        );
        assert_eq!(
            parse_count(Field::Batch, "2.55e1"),
            Err(FieldError::NotWhole)
        );
        assert_eq!(parse_count(Field::Batch, "1.5"), Err(FieldError::NotWhole));
        assert_eq!(parse_count(Field::Batch, "e3"), Err(FieldError::NotWhole));
        assert_eq!(parse_count(Field::Batch, "1e"), Err(FieldError::NotWhole));
        assert_eq!(parse_count(Field::Batch, "1e-3"), Err(FieldError::NotWhole));
        assert_eq!(parse_count(Field::Batch, "inf"), Err(FieldError::NotWhole));
        assert_eq!(parse_count(Field::Batch, "NaN"), Err(FieldError::NotWhole));
    }

    #[test]
    fn serving_fields_read_fractions_and_all_layers() {
        assert_eq!(parse_fraction(" 0.85 "), Ok(0.85));
        assert_eq!(parse_fraction("1"), Ok(1.0));
        for bad in ["0", "1.5", "-0.2", "abc", "NaN", "inf"] {
            assert_eq!(parse_fraction(bad), Err(FieldError::NotFraction), "{bad}");
        }
        assert_eq!(parse_fraction(""), Err(FieldError::Empty));
        assert_eq!(
            FieldError::NotFraction.message(Field::Utilization, Lang::En),
            "GPU memory utilization must be a number above 0 and at most 1, like 0.9."
        );
        assert_eq!(parse_gpu_layers(""), Ok(None));
        assert_eq!(parse_gpu_layers(" All "), Ok(None));
        assert_eq!(parse_gpu_layers("0"), Ok(Some(0)));
        assert_eq!(parse_gpu_layers("20"), Ok(Some(20)));
        assert_eq!(parse_gpu_layers("x"), Err(FieldError::NotWhole));
        assert_eq!(
            en(Field::Concurrency, "0"),
            Err("Concurrency must be at least 1.".to_string())
        );
    }

    #[test]
    fn negative_and_zero_are_too_small() {
        assert_eq!(
            parse_count(Field::Batch, "-3"),
            Err(FieldError::TooSmall(1))
        );
        assert_eq!(parse_count(Field::Batch, "0"), Err(FieldError::TooSmall(1)));
        assert_eq!(
            parse_count(Field::Batch, "-0"),
            Err(FieldError::TooSmall(1))
        );
        assert_eq!(parse_count(Field::Batch, "--3"), Err(FieldError::NotWhole));
        assert_eq!(parse_count(Field::Batch, "+16"), Ok(16));
    }

    #[test]
    fn messages_are_translated() {
        let e = parse_count(Field::Batch, "abc")
            .err()
            .map(|e| e.message(Field::Batch, Lang::Zh));
        assert_eq!(e.as_deref(), Some("批大小必须是整数，例如 8。"));
        let e = parse_count(Field::Batch, "")
            .err()
            .map(|e| e.message(Field::Batch, Lang::Zh));
        assert_eq!(e.as_deref(), Some("请输入批大小。"));
    }
}
