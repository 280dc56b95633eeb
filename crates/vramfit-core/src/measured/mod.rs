//! A measurement brought by the user, read without I/O: a PyTorch CUDA
//! memory snapshot (the pickle `torch.cuda.memory._dump_snapshot` writes
//! and `pytorch.org/memory_viz` reads) or the JSON of
//! `torch.cuda.memory_stats()`, summarised as a [`Measurement`] and compared
//! with vramfit's simulation of the same configuration ([`compare`]).
//!
//! The reader is safe on untrusted input: a size limit ([`MAX_FILE_BYTES`]),
//! a nesting limit, no opcode that would run code, and an error that says
//! what was wrong ([`MeasuredError`]).

pub mod compare;
pub mod pickle;
pub mod snapshot;
pub mod stats;

use crate::units::Bytes;
use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use crate::simulate::allocator::Segments;
pub use compare::{Comparison, Difference, compare};

/// The largest file read (64 MiB): a snapshot of a long trace with stack
/// frames reaches tens of MB; much beyond this the page would hold the
/// parsed arena in memory for little gain.
pub const MAX_FILE_BYTES: usize = 64 << 20;

/// The most points a measured timeline keeps after resampling.
pub const MAX_TIMELINE_POINTS: usize = 400;

/// Why a file could not be read as a measurement.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MeasuredError {
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("the file is {size} bytes; at most {limit} bytes are read")]
    TooLarge {
        /// The file's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The file is empty.
    #[error("the file is empty")]
    Empty,
    /// Neither a pickle (protocol 2 or later) nor a JSON object.
    #[error(
        "not a memory snapshot: expected a pickle from torch.cuda.memory._dump_snapshot or the JSON of torch.cuda.memory_stats()"
    )]
    NotPickle,
    /// A pickle of a protocol this reader does not take.
    #[error("pickle protocol {0} is not read: snapshots use protocols 2 to 5")]
    UnsupportedProtocol(u8),
    /// The pickle ends before its `STOP` opcode.
    #[error("the pickle is truncated: it ends before its last value is complete")]
    Truncated,
    /// An opcode outside the data-only subset.
    #[error("unsupported pickle opcode {opcode} at byte {at}: only plain data is read, never code")]
    UnsupportedOpcode {
        /// The opcode and its name.
        opcode: String,
        /// Its byte offset.
        at: usize,
    },
    /// The containers nest deeper than the reader accepts.
    #[error("the pickle nests containers more than {0} deep")]
    TooDeep(usize),
    /// The opcodes do not fit together.
    #[error("malformed pickle at byte {at}: {what}")]
    Malformed {
        /// The byte offset.
        at: usize,
        /// What did not fit.
        what: &'static str,
    },
    /// A pickle of data that is not a memory snapshot.
    #[error("not a memory snapshot: {0}")]
    NotSnapshot(&'static str),
    /// JSON that is not `memory_stats()`'s.
    #[error("not memory_stats() JSON: {0}")]
    NotMemoryStats(String),
}

/// A [`MeasuredError`] as plain data, for a front end to word in its own
/// language (the page's parsing worker sends it back as JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorData {
    /// The variant, in snake case (`truncated`, `unsupported_opcode`, …).
    pub code: String,
    /// Its numbers: `too_large` [size, limit]; `unsupported_protocol`
    /// [protocol]; `unsupported_opcode` and `malformed` [byte offset];
    /// `too_deep` [limit]; none for the others.
    pub numbers: Vec<u64>,
    /// Its text: the opcode's name, or what did not fit (English, from the
    /// reader); empty when none.
    pub text: String,
}

impl From<&MeasuredError> for ErrorData {
    fn from(e: &MeasuredError) -> ErrorData {
        let n = |v: usize| u64::try_from(v).unwrap_or(u64::MAX);
        let (code, numbers, text) = match e {
            MeasuredError::TooLarge { size, limit } => {
                ("too_large", vec![n(*size), n(*limit)], String::new())
            }
            MeasuredError::Empty => ("empty", vec![], String::new()),
            MeasuredError::NotPickle => ("not_pickle", vec![], String::new()),
            MeasuredError::UnsupportedProtocol(p) => {
                ("unsupported_protocol", vec![u64::from(*p)], String::new())
            }
            MeasuredError::Truncated => ("truncated", vec![], String::new()),
            MeasuredError::UnsupportedOpcode { opcode, at } => {
                ("unsupported_opcode", vec![n(*at)], opcode.clone())
            }
            MeasuredError::TooDeep(d) => ("too_deep", vec![n(*d)], String::new()),
            MeasuredError::Malformed { at, what } => {
                ("malformed", vec![n(*at)], (*what).to_string())
            }
            MeasuredError::NotSnapshot(what) => ("not_snapshot", vec![], (*what).to_string()),
            MeasuredError::NotMemoryStats(what) => ("not_memory_stats", vec![], what.clone()),
        };
        ErrorData {
            code: code.to_string(),
            numbers,
            text,
        }
    }
}

/// Which kind of file a measurement came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A `torch.cuda.memory._snapshot()` pickle.
    Snapshot,
    /// `torch.cuda.memory_stats()` as JSON.
    MemoryStats,
}

/// One moment of a measured timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeasuredPoint {
    /// `memory_allocated()` at that moment.
    pub allocated_bytes: Bytes,
    /// `memory_reserved()` at that moment.
    pub reserved_bytes: Bytes,
}

/// What a measurement says, in the terms vramfit estimates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The kind of file.
    pub source: Source,
    /// The CUDA device the figures are for.
    pub device: u32,
    /// Peak of `memory_allocated()`: over the recorded trace for a
    /// snapshot (its start inferred from the segments' state at its end),
    /// `allocated_bytes.all.peak` for `memory_stats()`.
    pub peak_allocated_bytes: Bytes,
    /// Peak of `memory_reserved()`.
    pub peak_reserved_bytes: Bytes,
    /// Reserved minus allocated at the allocated peak (a snapshot's trace only).
    pub reserved_gap_at_peak: Option<Bytes>,
    /// Segments at the end (a snapshot) or at their peak (`memory_stats()`).
    pub segments: Segments,
    /// The timeline, resampled to at most [`MAX_TIMELINE_POINTS`] by the
    /// highest moment of each stretch; empty without a recorded trace.
    pub timeline: Vec<MeasuredPoint>,
    /// Allocation events in the recorded trace.
    pub trace_events: u64,
    /// `num_alloc_retries`: allocations that freed the cache and retried.
    pub alloc_retries: Option<u64>,
    /// `num_ooms`: out-of-memory errors raised.
    pub ooms: Option<u64>,
    /// Other devices the file also holds data for (only `device` is read).
    pub other_devices: Vec<u32>,
}

/// Reads `data` as a snapshot pickle or `memory_stats()` JSON, by its first
/// byte (a pickle of protocol 2+ starts with `0x80`, JSON with `{`).
///
/// # Errors
/// [`MeasuredError`]: too large, empty, neither format, or a file of that
/// format that does not hold what a measurement needs.
pub fn read(data: &[u8]) -> Result<Measurement, MeasuredError> {
    if data.len() > MAX_FILE_BYTES {
        return Err(MeasuredError::TooLarge {
            size: data.len(),
            limit: MAX_FILE_BYTES,
        });
    }
    let first = data.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        None => Err(MeasuredError::Empty),
        Some(0x80) => snapshot::summarise(&pickle::parse(data)?),
        Some(b'{') => stats::read(data),
        Some(_) => Err(MeasuredError::NotPickle),
    }
}

/// Keeps at most `max` points of `points`, each the highest-allocated
/// moment of its stretch, so a resampled peak is the true peak.
pub fn resample(points: &[MeasuredPoint], max: usize) -> Vec<MeasuredPoint> {
    if points.len() <= max || max == 0 {
        return points.to_vec();
    }
    let n = points.len();
    (0..max)
        .filter_map(|i| {
            let (lo, hi) = (i * n / max, (i + 1) * n / max);
            points
                .get(lo..hi)?
                .iter()
                .max_by_key(|p| p.allocated_bytes)
                .copied()
        })
        .collect()
}
