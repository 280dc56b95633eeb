//! The searches behind "the largest that fits": over batches (and context
//! tokens) for memory that is non-decreasing and nearly affine, and over
//! input sizes where each probe is a new lowering. Pure algorithms over
//! closures: they know nothing of models, sessions or simulations.

use crate::config::MAX_DIMENSION;
use crate::error::Error;

/// The largest `n` in 1..=[`MAX_DIMENSION`] whose device memory fits in
/// `capacity` (0 if not even 1 does), for non-decreasing memory, given
/// `allocated(n)`, a cheaper lower bound on it, and `used(n, limit)`, the
/// device memory (`None` when it is more than `limit`: the simulation
/// stops as soon as it knows). A search over `allocated` bounds
/// the answer from above. Reserved memory exceeds allocated memory by
/// caching and fragmentation, a gap that grows with what the batch
/// allocates (activations fragment; weights hardly do), so taking it as
/// proportional to `allocated(n) − allocated(1)`, as measured at the bound,
/// a second cheap search finds a close guess; secant steps on `used` finish
/// from there (usually one or two more full simulations).
pub(crate) fn largest_fitting(
    allocated: impl Fn(u64) -> u64,
    used: impl Fn(u64, u64) -> Option<u64>,
    capacity: u64,
) -> u64 {
    // Both searches over allocated memory probe the same small batches.
    let seen = std::cell::RefCell::new(Vec::<(u64, u64)>::new());
    let allocated = |n: u64| {
        if let Some(&(_, m)) = seen.borrow().iter().find(|(k, _)| *k == n) {
            return m;
        }
        let m = allocated(n);
        seen.borrow_mut().push((n, m));
        m
    };
    let bound = largest_guided(allocated, capacity);
    if bound == 0 {
        return 0;
    }
    // The whole simulation at the bound: its memory calibrates the guess below.
    let at_bound = used(bound, u64::MAX).unwrap_or(u64::MAX);
    // More than the capacity unconstrained may still fit under it (the
    // allocator returns cached memory before it fails): `used` at the
    // capacity decides.
    if at_bound <= capacity || used(bound, capacity).is_some() {
        return bound;
    }
    let slope =
        (at_bound.saturating_sub(allocated(1))) as f64 / bound.saturating_sub(1).max(1) as f64;
    // allocated(n) + k·(allocated(n) − a1) ≤ capacity, with k the gap per allocated byte at the bound.
    let a1 = allocated(1);
    let k = at_bound.saturating_sub(allocated(bound)) as f64
        / allocated(bound).saturating_sub(a1).max(1) as f64;
    let target = (((capacity as f64 + k * a1 as f64) / (1.0 + k)) as u64).min(capacity);
    // The bound's search measured allocated memory around the target already: start between the nearest two.
    let known = seen.borrow().clone();
    let below = known
        .iter()
        .filter(|(_, m)| *m <= target)
        .max_by_key(|(n, _)| *n)
        .copied();
    let above = known
        .iter()
        .filter(|(_, m)| *m > target)
        .min_by_key(|(n, _)| *n)
        .map(|&(n, m)| (n, Some(m)));
    let guess = match below {
        Some(lo) => {
            let allocated = |n: u64, _limit: u64| Some(allocated(n));
            secant_search(
                &allocated,
                target,
                Some(lo),
                above,
                slope_between(lo, above).unwrap_or(slope),
            )
        }
        None => 0,
    }
    .min(bound - 1);
    let hi = Some((bound, Some(at_bound)));
    if guess == 0 {
        return secant_search(&used, capacity, None, hi, slope);
    }
    // Without a batch known to fit, the search backs off from the first
    // that does not by its memory, so ask for all of it.
    match used(guess, u64::MAX) {
        Some(u) if u <= capacity => secant_search(&used, capacity, Some((guess, u)), hi, slope),
        u => match used(guess, capacity) {
            Some(within) => secant_search(&used, capacity, Some((guess, within)), hi, slope),
            None => secant_search(&used, capacity, None, Some((guess, u)), slope),
        },
    }
}

/// The largest batch whose `used(batch)` fits in `capacity` (0 if not even
/// 1 does). Memory is non-decreasing and nearly affine in the batch (tensor
/// sizes are; rounding and allocator segments are not), so a line through
/// two simulations gives a first guess and secant steps finish the search.
fn largest_guided(used: impl Fn(u64) -> u64, capacity: u64) -> u64 {
    const PROBE: u64 = 16;
    let u1 = used(1);
    if u1 > capacity {
        return 0;
    }
    let u16 = used(PROBE);
    let slope = u16.saturating_sub(u1) as f64 / (PROBE - 1) as f64;
    let used = |n: u64, _limit: u64| Some(used(n));
    if u16 > capacity {
        return secant_search(
            &used,
            capacity,
            Some((1, u1)),
            Some((PROBE, Some(u16))),
            slope,
        );
    }
    secant_search(&used, capacity, Some((PROBE, u16)), None, slope)
}

/// Bytes per sample between a measured point and another, when it grows.
fn slope_between(lo: (u64, u64), hi: Option<(u64, Option<u64>)>) -> Option<f64> {
    let (n, m) = hi?;
    let m = m?;
    (n > lo.0 && m > lo.1).then(|| (m - lo.1) as f64 / (n - lo.0) as f64)
}

/// Where to split a bracket `(lo, hi)` without a better guess: a batch that
/// does not fit is told at a fraction of the cost of one that does (its
/// simulation stops at the overflow, ~1/4 to 1/7 of the way in the deep
/// models that need long searches), so the split leans to `hi`. Counting a
/// fit as 4 overflows, the worst case costs c per halving of the bracket
/// with 2^(−4/c) + 2^(−1/c) = 1: c ≈ 2.2 (about half a full simulation),
/// at a split 2^(−1/c) ≈ 3/4 of the way, against 4 (a whole one) for
/// halving at the middle.
fn split(lo: u64, hi: u64) -> u64 {
    (lo + (hi - lo) * 3 / 4).clamp(lo + 1, hi - 1)
}

/// The largest batch in 1..=[`MAX_DIMENSION`] whose memory fits in
/// `capacity`, for non-decreasing memory, from what is known: `lo` fits
/// (with its memory), `hi` does not (with its memory when measured),
/// `slope` estimates bytes per sample. `used(n, limit)` is `n`'s memory,
/// or `None` when it exceeds `limit`. Secant steps on the measured memory
/// (or, with one end measured, a step along `slope`); a split of the
/// bracket when they stall on one side of the answer or memory is flat;
/// steps that double while no upper end is known, or no lower one.
fn secant_search(
    used: &impl Fn(u64, u64) -> Option<u64>,
    capacity: u64,
    mut lo: Option<(u64, u64)>,
    mut hi: Option<(u64, Option<u64>)>,
    mut slope: f64,
) -> u64 {
    let mut same_side = 0u32;
    let mut last_fit = None;
    // Whether the last batch that fit used no more memory than the one
    // before it: memory is flat there (a stair of reserved segments), and a
    // secant from it would creep up one sample at a time.
    let mut flat = false;
    // The last step of a run on one side of the answer, without the other end known.
    let mut stride = 0u64;
    // Steps back taken without a batch known to fit.
    let mut backs = 0u32;
    loop {
        let guess = match (lo, hi) {
            (Some(l), Some(h)) if h.0 <= l.0 + 1 => return l.0,
            (None, Some(h)) if h.0 <= 1 => return 0,
            (Some(l), None) if l.0 >= MAX_DIMENSION => return l.0,
            (None, None) => 1,
            (Some(l), Some(h)) => {
                let room = capacity.saturating_sub(l.1) as f64;
                let secant = match h.1 {
                    Some(hm) if hm > l.1 => {
                        Some(l.0 as f64 + (room * (h.0 - l.0) as f64 / (hm - l.1) as f64).floor())
                    }
                    // Along the slope, unless it says that `h` fits: then it is wrong.
                    _ if slope > 0.0 => {
                        Some(l.0 as f64 + (room / slope).floor()).filter(|p| *p < (h.0 - 1) as f64)
                    }
                    _ => None,
                };
                match secant {
                    Some(p) if same_side < 2 && !flat => {
                        (p.max(0.0) as u64).clamp(l.0 + 1, h.0 - 1)
                    }
                    _ => split(l.0, h.0),
                }
            }
            (Some(l), None) => {
                let ahead = if slope > 0.0 {
                    (capacity.saturating_sub(l.1) as f64 / slope).floor() as u64
                } else {
                    l.0
                };
                stride = if same_side >= 2 || flat {
                    stride.saturating_mul(2).max(l.0)
                } else {
                    ahead.max(1)
                };
                l.0.saturating_add(stride).min(MAX_DIMENSION)
            }
            (None, Some(h)) => {
                // The first step back along the slope; when it falls short
                // the answer is mostly just below (a stair of memory), so
                // steps of 1, 2, 4, ... (cheap: batches that do not fit stop early).
                stride = match (h.1, backs) {
                    (Some(hm), 0) if slope > 0.0 => {
                        (hm.saturating_sub(capacity) as f64 / slope).ceil() as u64
                    }
                    (_, 0 | 1) => 1,
                    _ => stride.saturating_mul(2),
                }
                .max(1);
                backs += 1;
                h.0.saturating_sub(stride).max(1)
            }
        };
        // A batch that does not fit need not be measured to the end: no step needs its memory.
        let u = used(guess, capacity);
        let fit = u.is_some_and(|u| u <= capacity);
        same_side = if last_fit == Some(fit) {
            same_side + 1
        } else {
            0
        };
        last_fit = Some(fit);
        // Update the slope from the new point and its nearest measured neighbour.
        let hi_measured = hi.and_then(|(b, m)| Some((b, m?)));
        let near = if fit {
            hi_measured.or(lo)
        } else {
            lo.or(hi_measured)
        };
        if let (Some(u), Some((b, m))) = (u, near.filter(|(b, _)| *b != guess)) {
            let per = (u as f64 - m as f64) / (guess as f64 - b as f64);
            if per > 0.0 {
                slope = per;
            }
        }
        match u {
            Some(u) if fit => {
                flat = lo.is_some_and(|(_, m)| u <= m);
                lo = Some((guess, u));
            }
            u => hi = Some((guess, u)),
        }
    }
}

/// The largest multiple of `step` in 1..=[`MAX_DIMENSION`] for which `fits`
/// holds, for `fits` true up to some size and false above it (0 when it holds
/// for none), searched from `start`: doubling or halving until the answer is
/// bracketed, then bisection.
pub(crate) fn largest_input(
    start: u64,
    step: u64,
    fits: &mut impl FnMut(u64) -> Result<bool, Error>,
) -> Result<u64, Error> {
    let step = step.max(1);
    let top = MAX_DIMENSION - MAX_DIMENSION % step;
    let snap = |v: u64| (v - v % step).clamp(step, top);
    let start = snap(start);
    // `lo` fits (0: none known), `hi` does not (None: none known).
    let (mut lo, mut hi) = (0u64, None::<u64>);
    if fits(start)? {
        lo = start;
        while hi.is_none() && lo < top {
            let next = snap(lo.saturating_mul(2));
            if fits(next)? {
                lo = next;
            } else {
                hi = Some(next);
            }
        }
    } else {
        hi = Some(start);
        while let Some(h) = hi.filter(|h| *h > step) {
            let next = snap(h / 2);
            if fits(next)? {
                lo = next;
                break;
            }
            hi = Some(next);
        }
    }
    while let Some(h) = hi {
        let mid = snap(lo + (h - lo) / 2);
        if mid <= lo || mid >= h {
            break;
        }
        if fits(mid)? {
            lo = mid;
        } else {
            hi = Some(mid);
        }
    }
    Ok(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against every threshold shape: the answer is the largest multiple of
    /// the step at or below the threshold, from any starting size, and the
    /// search probes a few dozen sizes at most.
    #[test]
    fn the_input_search_finds_the_last_fitting_multiple_of_its_step() {
        let thresholds = [
            0,
            1,
            2,
            3,
            7,
            8,
            9,
            100,
            224,
            1023,
            1024,
            1025,
            4097,
            123_457,
            MAX_DIMENSION - 1,
            MAX_DIMENSION,
        ];
        for t in thresholds {
            for step in [1, 2, 3, 8] {
                for start in [1, 2, 100, 512, 4096, 1 << 20, MAX_DIMENSION] {
                    let mut probes = 0;
                    let mut fits = |v: u64| {
                        probes += 1;
                        assert!(
                            v.is_multiple_of(step) && (1..=MAX_DIMENSION).contains(&v),
                            "probed {v} (step {step})"
                        );
                        Ok(v <= t)
                    };
                    let got = largest_input(start, step, &mut fits).unwrap();
                    let want = if t < step {
                        0
                    } else {
                        (t.min(MAX_DIMENSION) / step) * step
                    };
                    assert_eq!(got, want, "threshold {t}, step {step}, from {start}");
                    assert!(
                        probes <= 2 * 26,
                        "{probes} probes for threshold {t}, step {step}, from {start}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_input_search_passes_errors_on() {
        let mut fails = |v: u64| {
            if v > 64 {
                Err(Error::InvalidModel("boom".into()))
            } else {
                Ok(true)
            }
        };
        assert!(largest_input(8, 1, &mut fails).is_err());
    }
}
