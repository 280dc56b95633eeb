//! Model states: weights, gradients and optimizer state, per parameter.
//!
//! Every tensor is rounded up to the CUDA caching allocator's 512-byte
//! granularity (`c10/cuda/CUDACachingAllocator.cpp`, `kMinBlockSize = 512`),
//! because that is what `torch.cuda.memory_allocated()` counts.

use crate::config::{Optimizer, OptimizerImpl};
use crate::dtype::DType;
use crate::graph::Param;
use crate::units::Bytes;

/// The CUDA caching allocator rounds every allocation up to this many bytes.
pub const ALLOCATION_QUANTUM: u64 = 512;

/// Bytes one allocation of `numel` elements of `dtype` occupies.
pub fn allocation(numel: u64, dtype: DType) -> Bytes {
    if numel == 0 {
        return Bytes::ZERO;
    }
    Bytes::of(numel, dtype.size()).round_up(ALLOCATION_QUANTUM)
}

/// Weight bytes of one parameter stored as `dtype`.
pub fn weight_bytes(p: &Param, dtype: DType) -> Bytes {
    allocation(p.numel(), p.dtype.unwrap_or(dtype))
}

/// Weight bytes as stored under a weight format: int8 (bitsandbytes
/// `Int8Params`: one byte per weight plus an fp32 scale per output row) or
/// NF4 (`Params4bit` with double quantization: half a byte per weight, one
/// 8-bit absmax per 64 weights, one fp32 absmax per 256 of those). Only block
/// linear weights are quantized; everything else keeps `dtype`.
pub fn stored_weight_bytes(p: &Param, dtype: DType, format: crate::config::WeightFormat) -> Bytes {
    use crate::config::WeightFormat;
    let n = p.numel();
    match format {
        WeightFormat::Int8 if p.quantizable => {
            allocation(n, DType::U8) + allocation(p.shape.first().copied().unwrap_or(1), DType::F32)
        }
        WeightFormat::Int4 if p.quantizable => {
            let blocks = n.div_ceil(64);
            allocation(n.div_ceil(2), DType::U8)
                + allocation(blocks, DType::U8)
                + allocation(blocks.div_ceil(256), DType::F32)
        }
        _ => weight_bytes(p, dtype),
    }
}

/// Gradient bytes of one parameter: `param.grad` has the parameter's dtype
/// (`torch/csrc/autograd/functions/accumulate_grad.h`). Frozen parameters have none.
pub fn gradient_bytes(p: &Param, dtype: DType) -> Bytes {
    if p.trainable {
        allocation(p.numel(), p.dtype.unwrap_or(dtype))
    } else {
        Bytes::ZERO
    }
}

/// bitsandbytes keeps 32-bit state for tensors smaller than this (`min_8bit_size`).
pub const BNB_MIN_8BIT_SIZE: u64 = 4096;
/// bitsandbytes' block size for blockwise-quantized 8-bit optimizer state.
pub const BNB_BLOCK: u64 = 256;

/// Persistent optimizer-state bytes of one parameter.
///
/// - SGD: none. SGD with momentum: `momentum_buffer = clone(grad)` (`torch/optim/sgd.py`).
/// - Adam/AdamW: `exp_avg`, `exp_avg_sq` = `zeros_like(param)`; `step` is a CPU
///   scalar unless `capturable`/`fused` (`torch/optim/adam.py`, `_init_group`:
///   fused makes it a 0-d fp32 tensor on the parameter's device, one
///   512-byte block each).
/// - AdamW8bit (bitsandbytes `Optimizer2State`): two uint8 states plus one
///   fp32 absmax per 256-element block each, for tensors of ≥ 4096 elements;
///   smaller tensors keep two fp32 states.
/// - Adafactor (`transformers.optimization.Adafactor`, default `beta1=None`):
///   factored second moment for ≥ 2-D tensors (`shape[:-1]` row and
///   `shape[:-2] + shape[-1:]` column statistics), a full one for 1-D tensors.
/// - Lion: one `exp_avg` (lion-pytorch).
pub fn optimizer_state_bytes(p: &Param, dtype: DType, opt: Optimizer, imp: OptimizerImpl) -> Bytes {
    optimizer_state_tensors(p, dtype, opt, imp)
        .into_iter()
        .sum()
}

/// The most tensors an optimizer keeps per parameter (bitsandbytes' two
/// states and two absmax vectors).
pub const STATE_TENSORS: usize = 4;

/// [`optimizer_state_bytes`] as the separate tensors the optimizer creates,
/// in the order its first step creates them (zero where it keeps fewer):
/// each is its own allocation, and the caching allocator places each apart.
pub fn optimizer_state_tensors(
    p: &Param,
    dtype: DType,
    opt: Optimizer,
    imp: OptimizerImpl,
) -> [Bytes; STATE_TENSORS] {
    let none = Bytes::ZERO;
    if !p.trainable {
        return [none; STATE_TENSORS];
    }
    let dtype = p.dtype.unwrap_or(dtype);
    let n = p.numel();
    match opt {
        Optimizer::Sgd => [none; STATE_TENSORS],
        Optimizer::SgdMomentum | Optimizer::Lion => [allocation(n, dtype), none, none, none],
        Optimizer::Adam | Optimizer::AdamW => {
            // `_init_group`: `step`, then `exp_avg`, then `exp_avg_sq`.
            let step = match imp {
                OptimizerImpl::Fused => allocation(1, DType::F32),
                OptimizerImpl::Foreach | OptimizerImpl::Loop => none,
            };
            [step, allocation(n, dtype), allocation(n, dtype), none]
        }
        Optimizer::AdamW8bit => {
            if n >= BNB_MIN_8BIT_SIZE {
                // `Optimizer2State.init_state`: state1, absmax1, state2, absmax2.
                let blocks = n.div_ceil(BNB_BLOCK);
                [
                    allocation(n, DType::U8),
                    allocation(blocks, DType::F32),
                    allocation(n, DType::U8),
                    allocation(blocks, DType::F32),
                ]
            } else {
                [
                    allocation(n, DType::F32),
                    allocation(n, DType::F32),
                    none,
                    none,
                ]
            }
        }
        Optimizer::Adafactor => {
            let shape = &p.shape;
            if shape.len() >= 2 {
                let last = shape.last().copied().unwrap_or(1);
                let rows: u64 = shape.iter().rev().skip(1).product();
                let cols_lead: u64 = shape.iter().rev().skip(2).product();
                [
                    allocation(rows, dtype),
                    allocation(cols_lead.saturating_mul(last), dtype),
                    none,
                    none,
                ]
            } else {
                [allocation(n, dtype), none, none, none]
            }
        }
    }
}

/// Transient bytes the optimizer step allocates on top of the persistent state.
pub fn optimizer_step_temp(
    params: &[Param],
    dtype: DType,
    opt: Optimizer,
    imp: OptimizerImpl,
) -> Bytes {
    optimizer_step_temps(params, dtype, opt, imp)
        .into_iter()
        .sum()
}

/// Whether [`optimizer_step_temps`] gives one temporary per trainable
/// parameter, in order (`foreach` Adam), rather than copies of the largest.
pub fn step_temps_per_parameter(opt: Optimizer, imp: OptimizerImpl) -> bool {
    match opt {
        Optimizer::Adam | Optimizer::AdamW => imp == OptimizerImpl::Foreach,
        Optimizer::Sgd
        | Optimizer::SgdMomentum
        | Optimizer::AdamW8bit
        | Optimizer::Adafactor
        | Optimizer::Lion => false,
    }
}

/// The optimizer step's temporaries as the separate tensors they are.
///
/// - Adam/AdamW, `foreach` (`_multi_tensor_adam`): `torch._foreach_sqrt(exp_avg_sqs)`
///   materializes one parameter-sized tensor per parameter, all at once
///   (divided and offset in place, then read by `_foreach_addcdiv_`).
/// - Adam/AdamW, `fused` (`_fused_adam`: `torch._fused_adam_`/`_fused_adamw_`
///   update every tensor in place): none.
/// - Adam/AdamW, `loop` (`_single_tensor_adam`): per parameter,
///   `(exp_avg_sq.sqrt() / bias_correction2_sqrt)` — the square root and the
///   quotient both live for a moment — so two copies of the largest.
/// - SGD (with or without momentum), AdamW8bit: update in place, none.
/// - Adafactor: per parameter, `grad**2 + eps` and the reconstructed second
///   moment — about two copies of the largest parameter in fp32.
/// - Lion: per parameter, `exp_avg.clone()` then `.add(grad)` — two copies of the largest.
pub fn optimizer_step_temps(
    params: &[Param],
    dtype: DType,
    opt: Optimizer,
    imp: OptimizerImpl,
) -> Vec<Bytes> {
    let trainable = params.iter().filter(|p| p.trainable);
    let largest = trainable
        .clone()
        .map(|p| allocation(p.numel(), p.dtype.unwrap_or(dtype)))
        .max()
        .unwrap_or(Bytes::ZERO);
    match (opt, imp) {
        (Optimizer::Adam | Optimizer::AdamW, OptimizerImpl::Foreach) => trainable
            .map(|p| allocation(p.numel(), p.dtype.unwrap_or(dtype)))
            .collect(),
        (Optimizer::Adam | Optimizer::AdamW, OptimizerImpl::Fused) => Vec::new(),
        (Optimizer::Adam | Optimizer::AdamW, OptimizerImpl::Loop) => vec![largest; 2],
        (Optimizer::Sgd | Optimizer::SgdMomentum | Optimizer::AdamW8bit, _) => Vec::new(),
        (Optimizer::Adafactor, _) => {
            let largest = trainable.map(Param::numel).max().unwrap_or(0);
            vec![allocation(largest, DType::F32); 2]
        }
        (Optimizer::Lion, _) => {
            let largest = trainable.map(Param::numel).max().unwrap_or(0);
            vec![allocation(largest, dtype); 2]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(shape: &[u64]) -> Param {
        Param {
            name: "w".into(),
            shape: shape.to_vec(),
            trainable: true,
            quantizable: false,
            dtype: None,
            expert: false,
        }
    }

    #[test]
    fn each_state_tensor_is_its_own_allocation_in_creation_order() {
        // BERT's word embeddings: 30522 × 1024 fp32, 119.2 MiB each.
        let p = param(&[30522, 1024]);
        let each = Bytes(30522 * 1024 * 4);
        // `_init_group`: the fused step's 0-d fp32 tensor (one 512-byte
        // block), then `exp_avg`, then `exp_avg_sq`: never one 238 MiB block.
        assert_eq!(
            optimizer_state_tensors(&p, DType::F32, Optimizer::AdamW, OptimizerImpl::Fused),
            [Bytes(512), each, each, Bytes::ZERO]
        );
        // Foreach keeps `step` on the CPU.
        assert_eq!(
            optimizer_state_tensors(&p, DType::F32, Optimizer::AdamW, OptimizerImpl::Foreach),
            [Bytes::ZERO, each, each, Bytes::ZERO]
        );
        // bitsandbytes: state1, absmax1, state2, absmax2.
        let blocks = allocation(30522 * 1024 / 256, DType::F32);
        let state = allocation(30522 * 1024, DType::U8);
        assert_eq!(
            optimizer_state_tensors(&p, DType::F32, Optimizer::AdamW8bit, OptimizerImpl::Foreach),
            [state, blocks, state, blocks]
        );
    }

    #[test]
    fn adam_keeps_two_param_sized_states() {
        let p = param(&[1024, 1024]);
        assert_eq!(
            optimizer_state_bytes(&p, DType::F32, Optimizer::AdamW, OptimizerImpl::Foreach),
            Bytes(8 << 20)
        );
        assert_eq!(
            optimizer_state_bytes(
                &p,
                DType::F32,
                Optimizer::SgdMomentum,
                OptimizerImpl::Foreach
            ),
            Bytes(4 << 20)
        );
        assert_eq!(
            optimizer_state_bytes(&p, DType::F32, Optimizer::Sgd, OptimizerImpl::Foreach),
            Bytes(0)
        );
    }

    #[test]
    fn eight_bit_adam_uses_one_byte_per_state_plus_block_scales() {
        let p = param(&[1024, 1024]);
        let blocks = (1u64 << 20) / 256;
        assert_eq!(
            optimizer_state_bytes(&p, DType::F32, Optimizer::AdamW8bit, OptimizerImpl::Foreach),
            Bytes(2 * (1 << 20) + 2 * blocks * 4)
        );
        // Small tensors stay in 32 bits.
        let small = param(&[100]);
        assert_eq!(
            optimizer_state_bytes(
                &small,
                DType::F32,
                Optimizer::AdamW8bit,
                OptimizerImpl::Foreach
            ),
            Bytes(1024)
        );
    }

    #[test]
    fn adafactor_factors_matrices() {
        let p = param(&[1000, 3000]);
        assert_eq!(
            optimizer_state_bytes(&p, DType::F32, Optimizer::Adafactor, OptimizerImpl::Foreach),
            allocation(1000, DType::F32) + allocation(3000, DType::F32)
        );
        let conv = param(&[64, 3, 7, 7]);
        // row: shape[:-1] = 64·3·7, col: shape[:-2] + shape[-1:] = 64·3·7
        assert_eq!(
            optimizer_state_bytes(
                &conv,
                DType::F32,
                Optimizer::Adafactor,
                OptimizerImpl::Foreach
            ),
            allocation(1344, DType::F32) + allocation(1344, DType::F32)
        );
    }

    #[test]
    fn every_allocation_is_rounded_to_512_bytes() {
        assert_eq!(allocation(1, DType::F32), Bytes(512));
        assert_eq!(allocation(129, DType::F32), Bytes(1024));
        assert_eq!(allocation(0, DType::F32), Bytes(0));
    }
}
