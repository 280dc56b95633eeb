//! Byte counts and their formatting, in one place.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// One mebibyte (2^20 bytes).
pub const MIB: u64 = 1 << 20;
/// One gibibyte (2^30 bytes).
pub const GIB: u64 = 1 << 30;

/// A number of bytes. Arithmetic saturates instead of overflowing, so absurd
/// inputs yield a huge but well-defined number rather than a panic.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Zero bytes.
    pub const ZERO: Bytes = Bytes(0);

    /// `count` elements of `bytes_per_element` each (saturating).
    pub fn of(count: u64, bytes_per_element: u64) -> Bytes {
        Bytes(count.saturating_mul(bytes_per_element))
    }

    /// Rounds up to a multiple of `quantum` (which must be non-zero; zero returns `self`).
    pub fn round_up(self, quantum: u64) -> Bytes {
        if quantum == 0 {
            return self;
        }
        Bytes(self.0.div_ceil(quantum).saturating_mul(quantum))
    }

    /// The value in GiB as a float, for display and charts.
    pub fn gib(self) -> f64 {
        self.0 as f64 / GIB as f64
    }

    /// The value in MiB as a float, for display and charts.
    pub fn mib(self) -> f64 {
        self.0 as f64 / MIB as f64
    }

    /// Saturating subtraction.
    pub fn saturating_sub(self, other: Bytes) -> Bytes {
        Bytes(self.0.saturating_sub(other.0))
    }
}

impl Add for Bytes {
    type Output = Bytes;
    fn add(self, rhs: Bytes) -> Bytes {
        Bytes(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Bytes {
    fn add_assign(&mut self, rhs: Bytes) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for Bytes {
    type Output = Bytes;
    fn sub(self, rhs: Bytes) -> Bytes {
        self.saturating_sub(rhs)
    }
}

impl std::iter::Sum for Bytes {
    fn sum<I: Iterator<Item = Bytes>>(iter: I) -> Bytes {
        iter.fold(Bytes::ZERO, |a, b| a + b)
    }
}

/// Formats with binary units: `512 B`, `1.50 KiB`, `12.3 MiB`, `7.84 GiB`, `1.20 TiB`.
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut value = self.0 as f64;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        let name = UNITS.get(unit).copied().unwrap_or("B");
        if unit == 0 {
            write!(f, "{} B", self.0)
        } else if value >= 100.0 {
            write!(f, "{value:.0} {name}")
        } else if value >= 10.0 {
            write!(f, "{value:.1} {name}")
        } else {
            write!(f, "{value:.2} {name}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_binary_units() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(1536).to_string(), "1.50 KiB");
        assert_eq!(Bytes(80 * GIB).to_string(), "80.0 GiB");
        assert_eq!(Bytes(300 * MIB).to_string(), "300 MiB");
    }

    #[test]
    fn rounding_and_saturation() {
        assert_eq!(Bytes(1).round_up(512), Bytes(512));
        assert_eq!(Bytes(1024).round_up(512), Bytes(1024));
        assert_eq!(Bytes(u64::MAX).round_up(512).0, u64::MAX);
        assert_eq!(Bytes::of(u64::MAX, 4), Bytes(u64::MAX));
        assert_eq!(Bytes(3) - Bytes(5), Bytes(0));
    }
}
