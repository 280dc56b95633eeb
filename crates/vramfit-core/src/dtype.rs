//! Element types of tensors as they sit in GPU memory.

use serde::{Deserialize, Serialize};

/// The storage type of a tensor's elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// IEEE single precision, 4 bytes.
    F32,
    /// IEEE half precision, 2 bytes.
    F16,
    /// bfloat16, 2 bytes.
    Bf16,
    /// 8-bit float (e4m3 / e5m2), 1 byte.
    Fp8,
    /// 64-bit integer (token ids, labels), 8 bytes.
    I64,
    /// One byte per element (bool masks, uint8 optimizer state).
    U8,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::Bf16 => 2,
            DType::Fp8 | DType::U8 => 1,
            DType::I64 => 8,
        }
    }

    /// Whether this is a floating-point type that can carry gradients.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::Bf16 | DType::Fp8)
    }
}
