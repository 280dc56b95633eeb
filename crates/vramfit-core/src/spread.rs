//! How far real GPUs' device memory fell from vramfit's estimate on the
//! published runs kept in `tests/reference/real_gpu/runs.csv`, for each kind
//! of model: the lowest and the highest `measured / estimated − 1`. An
//! estimate shows its device memory with the range those ratios give it.
//!
//! The table is data, not tuning: `cargo test -p vramfit-core --test
//! real_gpu` fails when it no longer matches what the current estimator
//! gives on those runs, and `VRAMFIT_WRITE_SPREAD=1` with the same command
//! rewrites it.

use crate::models::InputKind;
use crate::units::Bytes;
use serde::Serialize;

/// The spread of one kind of model's published runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// What the models take as input (text transformers, vision models).
    pub kind: InputKind,
    /// Published runs of this kind.
    pub runs: u32,
    /// The lowest `measured / estimated − 1` (negative: a run used less).
    pub below: f64,
    /// The highest `measured / estimated − 1`.
    pub above: f64,
}

/// The published runs' spread by kind (written by the `real_gpu` test).
pub const SPREADS: &[Spread] = &[
    // BEGIN GENERATED
    Spread {
        kind: InputKind::Tokens,
        runs: 133,
        below: -0.034,
        above: 0.105,
    },
    Spread {
        kind: InputKind::Image,
        runs: 134,
        below: -0.026,
        above: 0.301,
    },
    // END GENERATED
];

/// The spread for models of `kind`, if any published run is of that kind.
pub fn spread(kind: InputKind) -> Option<Spread> {
    SPREADS.iter().find(|s| s.kind == kind).copied()
}

/// `device` widened by the spread of its kind: `[low, high]`.
pub fn range(device: Bytes, kind: InputKind) -> Option<[Bytes; 2]> {
    let s = spread(kind)?;
    let at = |r: f64| Bytes((device.0 as f64 * (1.0 + r)).max(0.0) as u64);
    Some([at(s.below.min(0.0)), at(s.above.max(0.0))])
}
