//! Fitting a layer's configuration to the adapter: every tensor is one
//! buffer binding, so the largest must fit `max_storage_buffer_binding_size`
//! and `max_buffer_size` (and index within `u32`). Batch is halved first,
//! then the sequence (transformer); what changed is stated.

use super::measure::LayerShape;
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};

/// A shape after fitting, and the sentence saying how it was scaled.
#[derive(Clone, Debug, PartialEq)]
pub struct Scaled {
    /// The shape that will run.
    pub shape: LayerShape,
    /// `None` if nothing changed.
    pub note: Option<String>,
    /// The note as a [`super::Phrase`] (`scaled`: the changes, the largest
    /// tensor's elements, the element type, the binding limit in bytes).
    pub phrase: Option<super::Phrase>,
}

/// Fits `shape` to `ctx`'s adapter limits in `dtype`; see [`fit_to_limit`].
///
/// # Errors
///
/// As [`fit_to_limit`].
pub fn fit_to_device(ctx: &GpuContext, shape: LayerShape, dtype: DType) -> Result<Scaled> {
    let limits = ctx.device().limits();
    fit_to_limit(
        shape,
        limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size),
        dtype,
    )
}

/// Halves the batch, then the sequence, until the largest tensor of
/// `shape` in `dtype` fits `max_bytes` and has at most `u32::MAX` elements.
///
/// # Errors
///
/// [`BenchError::InputTooLarge`] if even batch 1 (and sequence 1) does not fit.
///
/// # Example
///
/// ```
/// use vramfit_bench::DType;
/// use vramfit_bench::layers::{LayerShape, TransformerBlockShape, fit_to_limit};
///
/// let shape = LayerShape::Transformer(TransformerBlockShape { batch: 8, seq: 1024, hidden: 768, heads: 12 });
/// // Probabilities: 8 * 12 * 1024^2 * 4 B = 384 MiB > 128 MiB: batch 8 -> 2.
/// let fitted = fit_to_limit(shape, 128 << 20, DType::F32).unwrap();
/// assert_eq!(fitted.shape, LayerShape::Transformer(TransformerBlockShape { batch: 2, seq: 1024, hidden: 768, heads: 12 }));
/// assert!(fitted.note.unwrap().contains("batch 8 -> 2"));
/// assert_eq!(fitted.phrase.unwrap().args[0], "batch 8 -> 2");
/// assert!(fit_to_limit(shape, 16, DType::F32).is_err());
/// ```
pub fn fit_to_limit(shape: LayerShape, max_bytes: u64, dtype: DType) -> Result<Scaled> {
    let fits = |s: &LayerShape| {
        let elements = s.largest_tensor() as u64;
        elements <= u64::from(u32::MAX) && elements.saturating_mul(dtype.size()) <= max_bytes
    };
    let mut fitted = shape;
    loop {
        if fits(&fitted) {
            break;
        }
        fitted = match fitted {
            LayerShape::Transformer(t) if t.batch > 1 => {
                LayerShape::Transformer(super::TransformerBlockShape {
                    batch: t.batch / 2,
                    ..t
                })
            }
            LayerShape::Transformer(t) if t.seq > 1 => {
                LayerShape::Transformer(super::TransformerBlockShape {
                    seq: t.seq / 2,
                    ..t
                })
            }
            LayerShape::Resnet(r) if r.batch > 1 => LayerShape::Resnet(super::BottleneckShape {
                batch: r.batch / 2,
                ..r
            }),
            _ => {
                return Err(BenchError::InputTooLarge {
                    kernel: "layer",
                    len: shape.largest_tensor(),
                    max: max_bytes / dtype.size(),
                });
            }
        };
    }
    let (changes, largest) = (shape.changes(&fitted), shape.largest_tensor());
    let changed = fitted != shape;
    let note = changed.then(|| {
        format!(
            "scaled {changes}: the largest tensor ({largest} elements of {dtype}) must fit the adapter's {max_bytes}-byte buffer binding"
        )
    });
    let phrase = changed.then(|| {
        super::Phrase::new(
            "scaled",
            &[
                &changes,
                &largest.to_string(),
                &dtype.to_string(),
                &max_bytes.to_string(),
            ],
        )
    });
    Ok(Scaled {
        shape: fitted,
        note,
        phrase,
    })
}
