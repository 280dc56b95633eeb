//! Element types of GPU tensors (`f32`, `f16`) and how one WGSL file serves
//! both.
//!
//! Every kernel is written once, for `f32`, with the storage type named by a
//! single line `alias scalar = f32;`. For `f16` the host prepends
//! `enable f16;` and rewrites that line to `alias scalar = f16;` (see
//! [`DType::specialize`]); nothing else in the file changes. The host side
//! always talks in `f32` slices and converts at upload and read-back, with
//! the round-to-nearest-even conversion in this file (no `half` crate).

use std::fmt;
use std::str::FromStr;

use crate::error::{BenchError, Result};

/// The line every kernel's WGSL declares its storage type with.
pub const SCALAR_ALIAS_F32: &str = "alias scalar = f32;";

/// What the `f16` variant's alias line becomes.
const SCALAR_ALIAS_F16: &str = "alias scalar = f16;";

/// The element type of a tensor on the GPU.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// IEEE binary32.
    F32,
    /// IEEE binary16; needs the adapter feature `SHADER_F16`.
    F16,
}

impl DType {
    /// Both types, `f32` first.
    pub const ALL: [DType; 2] = [DType::F32, DType::F16];

    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            DType::F32 => 4,
            DType::F16 => 2,
        }
    }

    /// The unit roundoff `u` (half an ulp of 1): `2^-24` for `f32`, `2^-11`
    /// for `f16`. Tolerances in [`reference`](mod@crate::reference) are
    /// multiples of it.
    pub fn unit_roundoff(self) -> f32 {
        match self {
            DType::F32 => f32::EPSILON / 2.0,
            DType::F16 => 1.0 / 2048.0,
        }
    }

    /// The lowercase name, as used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
        }
    }

    /// `x` rounded to this type and widened back to `f32`, i.e. the value
    /// the GPU sees after upload.
    ///
    /// # Example
    ///
    /// ```
    /// use vramfit_bench::DType;
    ///
    /// assert_eq!(DType::F32.round(0.1), 0.1);
    /// assert_eq!(DType::F16.round(0.1), 0.099975586);
    /// ```
    pub fn round(self, x: f32) -> f32 {
        match self {
            DType::F32 => x,
            DType::F16 => f16_bits_to_f32(f32_to_f16_bits(x)),
        }
    }

    /// The bytes of `values` in this type, little-endian, as uploaded.
    pub fn encode(self, values: &[f32]) -> Vec<u8> {
        match self {
            DType::F32 => bytemuck::cast_slice(values).to_vec(),
            DType::F16 => values
                .iter()
                .flat_map(|&x| f32_to_f16_bits(x).to_le_bytes())
                .collect(),
        }
    }

    /// The first `len` elements of `bytes`, widened to `f32`. Missing
    /// trailing bytes (never the case for buffers this crate made) end the
    /// output early.
    pub fn decode(self, bytes: &[u8], len: usize) -> Vec<f32> {
        match self {
            // `chunks_exact` yields whole chunks, so the conversions cannot fail.
            DType::F32 => bytes
                .chunks_exact(4)
                .take(len)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4])))
                .collect(),
            DType::F16 => bytes
                .chunks_exact(2)
                .take(len)
                .map(|c| f16_bits_to_f32(u16::from_le_bytes(c.try_into().unwrap_or([0; 2]))))
                .collect(),
        }
    }

    /// The WGSL of a kernel for this type: `source` unchanged for `f32`;
    /// for `f16`, `enable f16;` first and the [`SCALAR_ALIAS_F32`] line
    /// rewritten.
    ///
    /// # Errors
    ///
    /// [`BenchError::ShaderTemplate`] if `source` has no alias line, i.e. the
    /// kernel cannot be specialised.
    pub fn specialize(self, kernel: &'static str, source: &str) -> Result<String> {
        if !source.contains(SCALAR_ALIAS_F32) {
            return Err(BenchError::ShaderTemplate {
                kernel,
                missing: SCALAR_ALIAS_F32,
            });
        }
        Ok(match self {
            DType::F32 => source.to_string(),
            DType::F16 => format!(
                "enable f16;\n{}",
                source.replace(SCALAR_ALIAS_F32, SCALAR_ALIAS_F16)
            ),
        })
    }

    /// The device feature this type needs, if any.
    pub fn required_features(self) -> wgpu::Features {
        match self {
            DType::F32 => wgpu::Features::empty(),
            DType::F16 => wgpu::Features::SHADER_F16,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "f32" | "fp32" => Ok(DType::F32),
            "f16" | "fp16" => Ok(DType::F16),
            _ => Err(BenchError::InvalidChoice {
                what: "dtype",
                value: s.to_string(),
                accepted: "f32|f16",
            }),
        }
    }
}

/// `x` as IEEE binary16 bits, rounded to nearest, ties to even; overflow
/// gives infinity, NaN stays NaN (quiet).
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = (bits >> 23) & 0xff;
    let man = bits & 0x007f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man == 0 { 0 } else { 0x0200 };
    }
    // Exponent rebased from f32's bias 127 to f16's bias 15.
    let rebased = exp as i32 - 112;
    if rebased >= 0x1f {
        return sign | 0x7c00;
    }
    if rebased <= 0 {
        // Subnormal in f16: the value is m * 2^-24, m = significand >> shift.
        let shift = 126 - exp;
        if shift >= 25 {
            return sign;
        }
        let significand = man | 0x0080_0000;
        let rounded = round_shift(significand, shift);
        // A carry into 0x400 is exactly the smallest normal's encoding.
        return sign | rounded as u16;
    }
    // A carry out of the mantissa correctly bumps the exponent (to infinity
    // at the top).
    let combined = ((rebased as u32) << 23) | man;
    sign | round_shift(combined, 13) as u16
}

/// `value >> shift`, rounded to nearest, ties to even.
fn round_shift(value: u32, shift: u32) -> u32 {
    let kept = value >> shift;
    let rest = value & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    if rest > half || (rest == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    }
}

/// The `f32` whose value is the IEEE binary16 `bits` (exact: every `f16`
/// is an `f32`).
pub fn f16_bits_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits & 0x8000) << 16;
    let exp = u32::from((bits >> 10) & 0x1f);
    let man = u32::from(bits & 0x03ff);
    let magnitude = match exp {
        0 => {
            // Subnormal (or zero): man * 2^-24, exact in f32.
            let value = man as f32 / 16_777_216.0;
            return if sign == 0 { value } else { -value };
        }
        0x1f => 0x7f80_0000 | (man << 13),
        _ => ((exp + 112) << 23) | (man << 13),
    };
    f32::from_bits(sign | magnitude)
}

#[cfg(test)]
mod tests {
    use super::{DType, f16_bits_to_f32, f32_to_f16_bits};

    #[test]
    fn every_f16_survives_a_round_trip_through_f32() {
        for bits in 0..=u16::MAX {
            let x = f16_bits_to_f32(bits);
            if x.is_nan() {
                assert!(f16_bits_to_f32(f32_to_f16_bits(x)).is_nan(), "{bits:#06x}");
            } else {
                assert_eq!(f32_to_f16_bits(x), bits, "{bits:#06x} -> {x:e}");
            }
        }
    }

    #[test]
    fn f16_rounding_is_to_nearest_even_with_overflow_to_infinity() {
        let round = |x: f32| f16_bits_to_f32(f32_to_f16_bits(x));
        // Halfway between 1 and 1 + 2^-10 rounds to the even one, 1.
        assert_eq!(round(1.0 + 1.0 / 2048.0), 1.0);
        // Halfway between 1 + 2^-10 and 1 + 2^-9 rounds up to the even one.
        assert_eq!(round(1.0 + 3.0 / 2048.0), 1.0 + 2.0 / 1024.0);
        assert_eq!(round(65519.0), 65504.0);
        assert_eq!(round(65520.0), f32::INFINITY);
        assert_eq!(round(-1e-8), -0.0);
        // Half the smallest subnormal rounds to zero (even), a bit more up.
        assert_eq!(round(2f32.powi(-25)), 0.0);
        assert_eq!(round(2f32.powi(-25) * 1.001), 2f32.powi(-24));
        // The largest subnormal rounds up into the smallest normal.
        assert_eq!(round(2f32.powi(-14) - 2f32.powi(-26)), 2f32.powi(-14));
    }

    #[test]
    fn encode_and_decode_are_inverse_on_representable_values() {
        let values = [0.5, -2.0, 1024.0, 0.099_975_586];
        for dtype in DType::ALL {
            assert_eq!(dtype.decode(&dtype.encode(&values), values.len()), values);
        }
    }

    #[test]
    fn specialize_rewrites_the_alias_and_enables_f16() {
        let src = "// k\nalias scalar = f32;\nfn f(x: scalar) -> scalar { return x; }";
        assert_eq!(DType::F32.specialize("k", src).unwrap(), src);
        let f16 = DType::F16.specialize("k", src).unwrap();
        assert!(f16.starts_with("enable f16;\n"));
        assert!(f16.contains("alias scalar = f16;") && !f16.contains("alias scalar = f32;"));
        assert!(DType::F16.specialize("k", "fn f() {}").is_err());
    }

    #[test]
    fn dtype_parses_both_spellings() {
        assert_eq!("fp16".parse::<DType>().unwrap(), DType::F16);
        assert_eq!("f32".parse::<DType>().unwrap(), DType::F32);
        assert!("bf16".parse::<DType>().is_err());
    }
}
