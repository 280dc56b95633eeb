//! Seeded pseudo-random inputs, so that every run of a test or benchmark
//! sees the same data without depending on a random-number crate.

/// The SplitMix64 generator (Steele, Lea and Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014): tiny, fast, and good
/// enough for test data. Not for anything that needs real randomness.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform `f32` in `[-1, 1)`, on a grid of `2^-23`: the top 24 bits
    /// are exactly representable, so no rounding skews the distribution.
    pub fn next_f32_signed(&mut self) -> f32 {
        // 24 bits fit an f32 mantissa exactly, so both conversions are exact.
        let unit = (self.next_u64() >> 40) as f32 / (1_u32 << 24) as f32;
        2.0 * unit - 1.0
    }
}

/// `len` pseudo-random `f32`s in `[-1, 1)`, determined by `seed`.
///
/// # Example
///
/// ```
/// use vramfit_bench::data::seeded_f32s;
///
/// let v = seeded_f32s(42, 1000);
/// assert_eq!(v, seeded_f32s(42, 1000));
/// assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
/// ```
pub fn seeded_f32s(seed: u64, len: usize) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..len).map(|_| rng.next_f32_signed()).collect()
}

#[cfg(test)]
mod tests {
    use super::{SplitMix64, seeded_f32s};

    #[test]
    fn splitmix64_matches_the_published_sequence() {
        // First outputs for seed 1234567, from the reference C implementation
        // (https://prng.di.unimi.it/splitmix64.c).
        let mut rng = SplitMix64::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn seeded_f32s_differ_between_seeds() {
        assert_ne!(seeded_f32s(1, 16), seeded_f32s(2, 16));
    }
}
