//! ggml's tensor types as a GGUF file stores them: how many weights one block
//! holds and how many bytes it takes.
//!
//! Source: llama.cpp, `ggml/src/ggml-common.h` (the `block_*` structs and
//! their `static_assert`ed sizes; `QK_K` = 256 is the K-quants' and IQ types'
//! super-block) and `ggml/src/ggml.c` (`type_traits`: `blck_size`,
//! `type_size`). A row of `n` weights takes `n / block × bytes` bytes
//! (`ggml_row_size`); a row whose length the block does not divide cannot be
//! stored in that type (see [`GgmlType::fallback`]).

use crate::units::Bytes;

/// A ggml tensor type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GgmlType {
    /// 32-bit float.
    F32,
    /// 16-bit float.
    F16,
    /// bfloat16.
    Bf16,
    /// 32 weights: an f16 scale and 16 bytes of 4-bit quants (18 bytes).
    Q4_0,
    /// 32 weights: f16 scale and minimum, 16 bytes of quants (20 bytes).
    Q4_1,
    /// 32 weights: f16 scale, 4 bytes of fifth bits, 16 bytes of quants (22 bytes).
    Q5_0,
    /// 32 weights: f16 scale and minimum, 4 + 16 bytes of quants (24 bytes).
    Q5_1,
    /// 32 weights: an f16 scale and 32 int8 quants (34 bytes).
    Q8_0,
    /// 256 weights: 16 bytes of scales, 64 of quants, f16 scale and minimum (84 bytes).
    Q2K,
    /// 256 weights: 32 bytes of high bits, 64 of low bits, 12 of scales, an f16 (110 bytes).
    Q3K,
    /// 256 weights: f16 scale and minimum, 12 bytes of scales, 128 of quants (144 bytes).
    Q4K,
    /// 256 weights: as Q4_K plus 32 bytes of fifth bits (176 bytes).
    Q5K,
    /// 256 weights: 128 + 64 bytes of quants, 16 of scales, an f16 (210 bytes).
    Q6K,
    /// 256 weights: an f16 and 32 u16 grid indices (66 bytes).
    Iq2Xxs,
    /// 256 weights: as IQ2_XXS plus 8 bytes of scales (74 bytes).
    Iq2Xs,
    /// 256 weights: an f16, 64 + 8 + 8 bytes (82 bytes).
    Iq2S,
    /// 256 weights: an f16 and 96 bytes (98 bytes).
    Iq3Xxs,
    /// 256 weights: an f16, 64 + 8 + 32 + 4 bytes (110 bytes).
    Iq3S,
    /// 256 weights: an f16, 32 bytes and 8 u16 (50 bytes).
    Iq1S,
    /// 256 weights: 32 + 16 + 8 bytes, no separate scale (56 bytes).
    Iq1M,
    /// 32 weights: an f16 and 16 bytes of non-linear 4-bit quants (18 bytes).
    Iq4Nl,
    /// 256 weights: an f16, a u16 and 4 bytes of scales, 128 of quants (136 bytes).
    Iq4Xs,
    /// 32 weights: an E8M0 shared exponent and 16 bytes of FP4 (E2M1)
    /// values (17 bytes; `block_mxfp4`, the OCP microscaling format that
    /// gpt-oss's experts ship in).
    Mxfp4,
}

impl GgmlType {
    /// Weights per block (`blck_size`).
    pub fn block(self) -> u64 {
        match self {
            GgmlType::F32 | GgmlType::F16 | GgmlType::Bf16 => 1,
            GgmlType::Q4_0
            | GgmlType::Q4_1
            | GgmlType::Q5_0
            | GgmlType::Q5_1
            | GgmlType::Q8_0
            | GgmlType::Iq4Nl
            | GgmlType::Mxfp4 => 32,
            GgmlType::Q2K
            | GgmlType::Q3K
            | GgmlType::Q4K
            | GgmlType::Q5K
            | GgmlType::Q6K
            | GgmlType::Iq2Xxs
            | GgmlType::Iq2Xs
            | GgmlType::Iq2S
            | GgmlType::Iq3Xxs
            | GgmlType::Iq3S
            | GgmlType::Iq1S
            | GgmlType::Iq1M
            | GgmlType::Iq4Xs => 256,
        }
    }

    /// Bytes per block (`type_size`, the block struct's `sizeof`).
    pub fn block_bytes(self) -> u64 {
        match self {
            GgmlType::F32 => 4,
            GgmlType::F16 | GgmlType::Bf16 => 2,
            GgmlType::Q4_0 | GgmlType::Iq4Nl => 18,
            GgmlType::Q4_1 => 20,
            GgmlType::Q5_0 => 22,
            GgmlType::Q5_1 => 24,
            GgmlType::Q8_0 => 34,
            GgmlType::Q2K => 84,
            GgmlType::Q3K | GgmlType::Iq3S => 110,
            GgmlType::Q4K => 144,
            GgmlType::Q5K => 176,
            GgmlType::Q6K => 210,
            GgmlType::Iq2Xxs => 66,
            GgmlType::Iq2Xs => 74,
            GgmlType::Iq2S => 82,
            GgmlType::Iq3Xxs => 98,
            GgmlType::Iq1S => 50,
            GgmlType::Iq1M => 56,
            GgmlType::Iq4Xs => 136,
            GgmlType::Mxfp4 => 17,
        }
    }

    /// Bits per weight (block bytes × 8 / block).
    pub fn bits_per_weight(self) -> f64 {
        (self.block_bytes() * 8) as f64 / self.block() as f64
    }

    /// The name `ggml_type_name` prints.
    pub fn name(self) -> &'static str {
        match self {
            GgmlType::F32 => "f32",
            GgmlType::F16 => "f16",
            GgmlType::Bf16 => "bf16",
            GgmlType::Q4_0 => "q4_0",
            GgmlType::Q4_1 => "q4_1",
            GgmlType::Q5_0 => "q5_0",
            GgmlType::Q5_1 => "q5_1",
            GgmlType::Q8_0 => "q8_0",
            GgmlType::Q2K => "q2_K",
            GgmlType::Q3K => "q3_K",
            GgmlType::Q4K => "q4_K",
            GgmlType::Q5K => "q5_K",
            GgmlType::Q6K => "q6_K",
            GgmlType::Iq2Xxs => "iq2_xxs",
            GgmlType::Iq2Xs => "iq2_xs",
            GgmlType::Iq2S => "iq2_s",
            GgmlType::Iq3Xxs => "iq3_xxs",
            GgmlType::Iq3S => "iq3_s",
            GgmlType::Iq1S => "iq1_s",
            GgmlType::Iq1M => "iq1_m",
            GgmlType::Iq4Nl => "iq4_nl",
            GgmlType::Iq4Xs => "iq4_xs",
            GgmlType::Mxfp4 => "mxfp4",
        }
    }

    /// Bytes of a `rows × cols` tensor whose rows (`ne[0]` = `cols`) the
    /// block divides (`ggml_row_size(type, cols) × rows`).
    pub fn tensor_bytes(self, rows: u64, cols: u64) -> Bytes {
        debug_assert!(
            cols.is_multiple_of(self.block()),
            "{} rows of {cols} do not split into blocks of {}",
            self.name(),
            self.block()
        );
        Bytes::of(
            rows,
            (cols / self.block()).saturating_mul(self.block_bytes()),
        )
    }

    /// The type `llama-quantize` stores a tensor in when its rows (`cols`
    /// weights long) do not split into this type's blocks: `src/llama-quant.cpp`,
    /// `tensor_type_fallback` (the 256-blocks fall back to a 32-block type of
    /// about their size, then to f16 when 32 does not divide either).
    pub fn fallback(self, cols: u64) -> GgmlType {
        if cols.is_multiple_of(self.block()) {
            return self;
        }
        let next = match self {
            GgmlType::Iq1S
            | GgmlType::Iq1M
            | GgmlType::Iq2Xxs
            | GgmlType::Iq2Xs
            | GgmlType::Iq2S
            | GgmlType::Iq3Xxs
            | GgmlType::Iq3S
            | GgmlType::Iq4Xs => GgmlType::Iq4Nl,
            GgmlType::Q2K | GgmlType::Q3K => GgmlType::Q4_0,
            GgmlType::Q4K => GgmlType::Q5_0,
            GgmlType::Q5K => GgmlType::Q5_1,
            GgmlType::Q6K => GgmlType::Q8_0,
            GgmlType::F32
            | GgmlType::F16
            | GgmlType::Bf16
            | GgmlType::Q4_0
            | GgmlType::Q4_1
            | GgmlType::Q5_0
            | GgmlType::Q5_1
            | GgmlType::Q8_0
            | GgmlType::Iq4Nl
            | GgmlType::Mxfp4 => GgmlType::F16,
        };
        if cols.is_multiple_of(next.block()) {
            next
        } else {
            GgmlType::F16
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bits_per_weight_are_those_ggml_common_h_states() {
        // The header's comments: "Effectively 2.625 / 3.4375 / 4.5 / 5.5 /
        // 6.5625 bits per weight", "2.0625 bpw", "2.3125", "2.5625", "3.0625",
        // "3.4375", "1.5625", "1.75".
        for (t, bpw) in [
            (GgmlType::Q2K, 2.625),
            (GgmlType::Q3K, 3.4375),
            (GgmlType::Q4K, 4.5),
            (GgmlType::Q5K, 5.5),
            (GgmlType::Q6K, 6.5625),
            (GgmlType::Q8_0, 8.5),
            (GgmlType::Q4_0, 4.5),
            (GgmlType::Iq2Xxs, 2.0625),
            (GgmlType::Iq2Xs, 2.3125),
            (GgmlType::Iq2S, 2.5625),
            (GgmlType::Iq3Xxs, 3.0625),
            (GgmlType::Iq3S, 3.4375),
            (GgmlType::Iq1S, 1.5625),
            (GgmlType::Iq1M, 1.75),
            (GgmlType::Iq4Xs, 4.25),
            (GgmlType::Mxfp4, 4.25),
        ] {
            assert!((t.bits_per_weight() - bpw).abs() < 1e-12, "{}", t.name());
        }
    }

    #[test]
    fn a_row_the_super_block_does_not_divide_falls_back_as_llama_quantize_does() {
        // Qwen2.5-0.5B's hidden size, 896 = 3.5 × 256 = 28 × 32.
        assert_eq!(GgmlType::Q4K.fallback(896), GgmlType::Q5_0);
        assert_eq!(GgmlType::Q6K.fallback(896), GgmlType::Q8_0);
        assert_eq!(GgmlType::Q3K.fallback(896), GgmlType::Q4_0);
        assert_eq!(GgmlType::Iq4Xs.fallback(896), GgmlType::Iq4Nl);
        assert_eq!(GgmlType::Q4K.fallback(4096), GgmlType::Q4K);
        assert_eq!(GgmlType::Q8_0.fallback(100), GgmlType::F16);
    }
}
