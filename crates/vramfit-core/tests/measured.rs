//! The measured-memory reader on a real CUDA memory snapshot
//! (`tests/reference/snapshots/`, summarised independently by
//! `summarise.py` into `summary.csv`), on malformed files, and the
//! comparison with vramfit's estimate of the configuration it recorded.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

mod common;

use vramfit_core::measured::{self, MAX_FILE_BYTES, MeasuredError, Measurement, Source};
use vramfit_core::{Attention, Bytes, Optimizer, Overheads, Precision, TrainConfig, estimate, hf};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/reference/snapshots"
);
const CS336: &str = "cs336_lm_small_fp32_b32_ctx256.pickle";

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/{name}")).unwrap()
}

/// The row of `summary.csv` for `file`, by column name.
fn summary(file: &str) -> std::collections::HashMap<String, u64> {
    let text = std::fs::read_to_string(format!("{DIR}/summary.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|r| r[0] == file)
        .unwrap();
    header
        .iter()
        .zip(&row)
        .skip(1)
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect()
}

#[test]
fn a_real_snapshot_reads_as_pytorch_tools_summarise_it() {
    let m = measured::read(&read(CS336)).unwrap();
    let want = summary(CS336);
    assert_eq!(m.source, Source::Snapshot);
    assert_eq!(m.peak_allocated_bytes, Bytes(want["peak_allocated"]));
    assert_eq!(m.peak_reserved_bytes, Bytes(want["peak_reserved"]));
    assert_eq!(
        m.reserved_gap_at_peak,
        Some(Bytes(want["reserved_gap_at_peak"]))
    );
    assert_eq!(m.segments.small, want["small_segments"]);
    assert_eq!(m.segments.large, want["large_segments"]);
    assert_eq!(m.segments.largest, Some(Bytes(want["largest_segment"])));
    assert_eq!(m.trace_events, want["trace_events"]);
    assert!(m.timeline.len() <= measured::MAX_TIMELINE_POINTS);
    let top = m.timeline.iter().map(|p| p.allocated_bytes).max();
    assert_eq!(
        top,
        Some(m.peak_allocated_bytes),
        "resampling keeps the peak"
    );
}

#[test]
fn malformed_files_get_specific_errors() {
    let real = read(CS336);
    for cut in [1, 2, 20, 1000, real.len() / 2, real.len() - 1] {
        let err = measured::read(&real[..cut]).unwrap_err();
        assert!(
            matches!(
                err,
                MeasuredError::Truncated | MeasuredError::Malformed { .. }
            ),
            "cut at {cut}: {err}"
        );
    }
    assert_eq!(
        measured::read(b"hello, not a pickle").unwrap_err(),
        MeasuredError::NotPickle
    );
    assert_eq!(measured::read(b"  \n").unwrap_err(), MeasuredError::Empty);
    // pickle.dumps(os.system, protocol=2): code, refused at its opcode.
    let code = [
        0x80, 2, b'c', b'p', b'o', b's', b'i', b'x', b'\n', b's', b'y', b's', b't', b'e', b'm',
        b'\n', b'q', 0, b'.',
    ];
    let err = measured::read(&code).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unsupported pickle opcode 0x63 GLOBAL (imports code) at byte 2: only plain data is read, never code"
    );
    let mut big = vec![0u8; MAX_FILE_BYTES + 1];
    big[0] = 0x80;
    assert!(matches!(
        measured::read(&big).unwrap_err(),
        MeasuredError::TooLarge { .. }
    ));
    // A pickle of plain data that is not a snapshot: `pickle.dumps([1], protocol=4)`.
    let list = [
        0x80, 4, 0x95, 7, 0, 0, 0, 0, 0, 0, 0, b']', 0x94, b'K', 1, b'a', b'.',
    ];
    assert_eq!(
        measured::read(&list).unwrap_err(),
        MeasuredError::NotSnapshot("no 'segments' list at the top")
    );
}

#[test]
fn memory_stats_json_reads_its_peaks_and_counters() {
    // The key names `torch.cuda.memory_stats()` flattens to (torch/cuda/memory.py).
    let json = br#"{"allocated_bytes.all.peak": 1000, "allocated_bytes.all.current": 10,
        "reserved_bytes.all.peak": 3000, "segment.small_pool.peak": 2,
        "segment.large_pool.peak": 5, "num_alloc_retries": 1, "num_ooms": 0}"#;
    let m = measured::read(json).unwrap();
    assert_eq!(m.source, Source::MemoryStats);
    assert_eq!(m.peak_allocated_bytes, Bytes(1000));
    assert_eq!(m.peak_reserved_bytes, Bytes(3000));
    assert_eq!((m.segments.small, m.segments.large), (2, 5));
    assert_eq!((m.alloc_retries, m.ooms), (Some(1), Some(0)));
    let err = measured::read(br#"{"reserved_bytes.all.peak": 3}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "not memory_stats() JSON: no non-negative integer 'allocated_bytes.all.peak'"
    );
    assert!(matches!(
        measured::read(b"{oops").unwrap_err(),
        MeasuredError::NotMemoryStats(_)
    ));
}

/// The recorded configuration as a Llama-style `config.json` (README.md
/// beside the snapshot), fp32, batch 32, context 256, eager attention; SGD
/// without momentum keeps no optimizer state, as the run kept none.
fn cs336_estimate() -> vramfit_core::Estimate {
    let config = r#"{"model_type": "llama", "hidden_size": 768, "intermediate_size": 3072,
        "num_hidden_layers": 12, "num_attention_heads": 12, "num_key_value_heads": 12,
        "vocab_size": 10000, "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "tie_word_embeddings": false, "hidden_act": "silu"}"#;
    let spec = hf::import(config).unwrap().spec;
    let cfg = TrainConfig {
        batch: 32,
        seq: 256,
        precision: Precision::Fp32,
        optimizer: Optimizer::Sgd,
        attention: Attention::Eager,
        ..TrainConfig::default()
    };
    estimate(&spec, &cfg, &Overheads::default(), None).unwrap()
}

#[test]
fn the_comparison_lists_notable_differences_largest_first() {
    let m = measured::read(&read(CS336)).unwrap();
    let e = cs336_estimate();
    let c = measured::compare(&m, &e);
    eprintln!(
        "cs336 small: measured peak {} reserved {} ({} small + {} large segments); simulated peak {} reserved {} ({} + {})",
        m.peak_allocated_bytes,
        m.peak_reserved_bytes,
        m.segments.small,
        m.segments.large,
        e.peak_allocated_bytes,
        e.peak_reserved_bytes,
        e.segments.small,
        e.segments.large
    );
    for d in &c.differences {
        eprintln!("  {d:?}");
        assert!(d.weight() > 0.0);
    }
    assert!(c.differences.windows(2).all(|w| {
        let ((ta, wa), (tb, wb)) = (w[0].rank(), w[1].rank());
        ta < tb || (ta == tb && wa >= wb)
    }));
    assert_eq!(c.simulated.segments, e.segments);
    assert!(
        c.simulated.segments.count() > 0,
        "the allocator model reserved segments"
    );
    let sim_top = c.simulated_timeline.iter().max().copied();
    assert_eq!(
        sim_top,
        Some(e.peak_allocated_bytes),
        "resampling keeps the simulated peak"
    );
}

#[test]
fn a_measurement_that_matches_the_simulation_shows_no_difference() {
    let e = cs336_estimate();
    let same = Measurement {
        source: Source::Snapshot,
        device: 0,
        peak_allocated_bytes: e.peak_allocated_bytes,
        peak_reserved_bytes: e.peak_reserved_bytes,
        reserved_gap_at_peak: None,
        segments: e.segments,
        timeline: Vec::new(),
        trace_events: 0,
        alloc_retries: Some(0),
        ooms: Some(0),
        other_devices: Vec::new(),
    };
    assert_eq!(measured::compare(&same, &e).differences, vec![]);
    let more = Measurement {
        peak_reserved_bytes: Bytes(e.peak_reserved_bytes.0 * 2),
        alloc_retries: Some(3),
        ..same
    };
    let kinds: Vec<String> = measured::compare(&more, &e)
        .differences
        .iter()
        .map(|d| {
            serde_json::to_value(d).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    // Reserved doubled: its share above allocated grows by about 100 points
    // (weight ~1), the peak by half (weight 0.5).
    assert_eq!(
        kinds,
        ["alloc_retries", "reserved_above_allocated", "peak_reserved"]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Corrupting a real snapshot anywhere gives a measurement or an error
    /// with a message, never a panic, and a measurement keeps its invariants.
    #[test]
    fn a_corrupted_snapshot_never_panics(
        edits in proptest::collection::vec((0usize..495_064, proptest::prelude::any::<u8>()), 1..8),
        cut in 1usize..495_064,
    ) {
        let mut data = read(CS336);
        let len = data.len();
        for (at, byte) in edits {
            data[at % len] = byte;
        }
        data.truncate(cut.max(1));
        match measured::read(&data) {
            Ok(m) => {
                proptest::prop_assert!(m.timeline.len() <= measured::MAX_TIMELINE_POINTS);
                let top = m.timeline.iter().map(|p| p.allocated_bytes).max();
                proptest::prop_assert!(top.is_none_or(|t| t == m.peak_allocated_bytes));
            }
            Err(e) => proptest::prop_assert!(!e.to_string().is_empty()),
        }
    }
}

/// The snapshots `tests/gpu/memory_truth.py` saved on a real GPU, read
/// against PyTorch's own counters of the same process (the run's CSV row):
/// recording began before the model was built, so the trace holds every
/// allocation of both steps. Reserved memory and the segments are exact.
/// The allocated peak replayed from the trace is not a counter PyTorch
/// keeps. The trace's steps are what each allocation asked for, and the
/// replay starts from the end state as `memory_allocated()` counts it (the
/// segments' `allocated_size`, `summarise.py`'s `calc_active`) less those
/// steps, so a complete trace's replay is `requested_bytes.all.peak` lifted
/// by the blocks' rounding at the end (their `allocated_size` less their
/// `requested_size`): OLMo 2's reads 33,784,673,416 B, 33,751,118,216
/// requested plus 33,555,200 of rounding, 2.6 MB above
/// `max_memory_allocated()`.
#[test]
fn the_real_gpu_snapshots_read_as_pytorchs_own_counters() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference/real_gpu/measured"
    );
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "csv") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        let header = common::split_csv(lines.next().unwrap());
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let (file, requested, allocated, reserved, large, small) = (
            col("snapshot_file"),
            col("requested_peak_bytes"),
            col("allocated_bytes"),
            col("reserved_bytes"),
            col("segments_large"),
            col("segments_small"),
        );
        for line in lines {
            let f = common::split_csv(line);
            let name = &f[file];
            if !name.ends_with(".pickle") {
                continue;
            }
            let bytes = std::fs::read(format!("{dir}/{name}")).unwrap();
            let m = measured::read(&bytes).unwrap();
            let num = |i: usize| f[i].parse::<u64>().unwrap();
            let p = measured::pickle::parse(&bytes).unwrap();
            let segments = p.items(p.get(p.root, "segments").unwrap()).to_vec();
            let sum = |key: &str| -> i128 {
                segments
                    .iter()
                    .map(|&s| p.int(p.get(s, key).unwrap()).unwrap())
                    .sum()
            };
            let rounding = u64::try_from(sum("allocated_size") - sum("requested_size")).unwrap();
            let peak = m.peak_allocated_bytes.0;
            assert_eq!(peak, num(requested) + rounding, "{name}");
            assert!(
                num(requested) <= num(allocated),
                "{name}: requested above allocated"
            );
            assert_eq!(m.peak_reserved_bytes, Bytes(num(reserved)), "{name}");
            assert_eq!(m.segments.large, num(large), "{name}");
            assert_eq!(m.segments.small, num(small), "{name}");
            checked += 1;
        }
    }
    assert!(checked >= 1, "no snapshot of memory_truth.py found");
}
