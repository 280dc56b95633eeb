//! Display values: byte counts in the chosen units, shares, percentages,
//! rounded counts and the rows of the breakdown. This is the web crate's one
//! place for number formatting; binary units reuse the core's `Bytes`
//! formatting so the page and the CLI print the same figures.

use crate::i18n::{Key, Lang};
use crate::prefs::Units;
use vramfit_core::config::Mode;
use vramfit_core::units::GIB;
use vramfit_core::{Breakdown, Bytes};

/// One category of the breakdown at the peak.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakdownRow {
    /// Stable key, used for CSS classes and test ids (`parameters`, `optimizer-states`, ...).
    pub key: &'static str,
    /// Its name.
    pub label: Key,
    /// What the category holds, in a few words.
    pub note: Key,
    /// Its bytes at the peak.
    pub bytes: Bytes,
    /// Its share of the peak, in `[0, 1]`.
    pub share: f64,
}

/// The categories of `at_peak`, in the order they are stacked: the six of
/// a training step, and the KV cache when there is one (inference).
pub fn breakdown_rows(b: &Breakdown) -> Vec<BreakdownRow> {
    let total = b.total();
    let row = |key, label, note, bytes: Bytes| BreakdownRow {
        key,
        label,
        note,
        bytes,
        share: share(bytes, total),
    };
    let kv_cache = (b.kv_cache.0 > 0)
        .then(|| row("kv-cache", Key::CatKvCache, Key::CatKvCacheNote, b.kv_cache));
    let mut rows = vec![
        row(
            "parameters",
            Key::CatParameters,
            Key::CatParametersNote,
            b.parameters,
        ),
        row(
            "gradients",
            Key::CatGradients,
            Key::CatGradientsNote,
            b.gradients,
        ),
        row(
            "optimizer-states",
            Key::CatOptimizer,
            Key::CatOptimizerNote,
            b.optimizer_states,
        ),
        row(
            "activations",
            Key::CatActivations,
            Key::CatActivationsNote,
            b.activations,
        ),
        row(
            "temporary",
            Key::CatTemporary,
            Key::CatTemporaryNote,
            b.temporary,
        ),
        row("other", Key::CatOther, Key::CatOtherNote, b.other),
    ];
    rows.extend(kv_cache);
    rows
}

/// The text of `key` for a report in `mode`: inference runs one forward
/// without autograd (no training step, nothing kept for backward), so the
/// titles and notes that speak of those take their inference wording.
pub fn in_mode(key: Key, mode: Mode) -> Key {
    if mode != Mode::Inference {
        return key;
    }
    // Every other key reads the same in both modes.
    match key {
        Key::Tagline => Key::TaglineInference,
        Key::Footer => Key::FooterInference,
        Key::TimelineTitle => Key::TimelineTitleInference,
        Key::TimelineSub => Key::TimelineSubInference,
        Key::PeaksSub => Key::PeaksSubInference,
        Key::AllocatedNote => Key::AllocatedNoteInference,
        Key::CatActivationsNote => Key::CatActivationsNoteInference,
        Key::LayersSub => Key::LayersSubInference,
        Key::ColSaved => Key::ColSavedInference,
        other => other,
    }
}

/// `part / whole`, clamped to `[0, 1]`; zero when `whole` is zero.
pub fn share(part: Bytes, whole: Bytes) -> f64 {
    if whole.0 == 0 {
        0.0
    } else {
        (part.0 as f64 / whole.0 as f64).clamp(0.0, 1.0)
    }
}

/// A share as a percentage: `42%`, `3.5%`, `<0.1%` for tiny non-zero shares, `0%`.
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p <= 0.0 {
        "0%".to_string()
    } else if p < 0.1 {
        "<0.1%".to_string()
    } else if p < 10.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

/// A ratio with two decimals, as vLLM prints its maximum concurrency: `6.04`.
pub fn ratio(x: f64) -> String {
    format!("{x:.2}")
}

/// The same share as a CSS width (`42.123%`), unrounded so bars add up.
pub fn css_width(share: f64) -> String {
    format!("width: {:.3}%", share.clamp(0.0, 1.0) * 100.0)
}

/// The same share as the verdict meter's fill (`--fill: 42.123%`), which
/// its background paints: the meter's box stays the same size whatever the
/// share, so an edit's frame repaints it without laying anything out.
pub fn css_fill(share: f64) -> String {
    format!("--fill: {:.3}%", share.clamp(0.0, 1.0) * 100.0)
}

/// Bytes in the chosen units, three significant digits: `8.93 GiB` or `9.59 GB`.
/// A saturated count (the true number exceeds `u64`) says so: `> 16 EiB`.
pub fn bytes(b: Bytes, units: Units) -> String {
    if b.0 == u64::MAX {
        return match units {
            Units::Binary => "> 16 EiB".into(),
            Units::Decimal => "> 18.4 EB".into(),
        };
    }
    match units {
        Units::Binary => b.to_string(),
        Units::Decimal => {
            const NAMES: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
            let mut value = b.0 as f64;
            let mut unit = 0;
            while value >= 1000.0 && unit + 1 < NAMES.len() {
                value /= 1000.0;
                unit += 1;
            }
            let name = NAMES.get(unit).copied().unwrap_or("B");
            if unit == 0 {
                format!("{} B", b.0)
            } else {
                format!("{} {name}", three_digits(value))
            }
        }
    }
}

/// The unit name and divisor a chart axis uses for values up to `max`.
pub fn axis_unit(max: Bytes, units: Units) -> (&'static str, f64) {
    let (base, names): (f64, [&'static str; 4]) = match units {
        Units::Binary => (1024.0, ["B", "KiB", "MiB", "GiB"]),
        Units::Decimal => (1000.0, ["B", "kB", "MB", "GB"]),
    };
    let mut divisor = 1.0;
    let mut name = names[0];
    for n in names.iter().skip(1) {
        if max.0 as f64 >= divisor * base {
            divisor *= base;
            name = n;
        }
    }
    (name, divisor)
}

/// A GPU's capacity: whole units without decimals (`24 GiB`, `80 GB`),
/// anything else as [`bytes`] writes it.
pub fn capacity(b: Bytes, units: Units) -> String {
    match units {
        Units::Binary if b.0 > 0 && b.0.is_multiple_of(GIB) => format!("{} GiB", b.0 / GIB),
        Units::Decimal if b.0 > 0 && b.0.is_multiple_of(1_000_000_000) => {
            format!("{} GB", b.0 / 1_000_000_000)
        }
        _ => bytes(b, units),
    }
}

/// A parameter count rounded for reading: `124M`, `6.74B` in English;
/// `1.24 亿`, `2556 万` in Chinese, which groups by ten thousands.
pub fn count(n: u64, lang: Lang) -> String {
    let units: &[(f64, &str)] = match lang {
        Lang::En => &[(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")],
        Lang::Zh => &[(1e12, " 万亿"), (1e8, " 亿"), (1e4, " 万")],
    };
    let x = n as f64;
    units
        .iter()
        .find(|(scale, _)| x >= *scale)
        .map(|(scale, suffix)| format!("{}{suffix}", three_digits(x / scale)))
        .unwrap_or_else(|| n.to_string())
}

/// FLOPs with an SI prefix: `64.8 G`, `1.20 T`, `512`.
pub fn flops(f: f64) -> String {
    let units = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    units
        .iter()
        .find(|(scale, _)| f >= *scale)
        .map(|(scale, suffix)| format!("{} {suffix}", three_digits(f / scale)))
        .unwrap_or_else(|| format!("{f:.0}"))
}

/// Three significant digits for values from 1 to 999: `1.24`, `25.6`, `124`.
fn three_digits(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A whole number with thousands separators: `16,777,216`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The verdict's title around the GPU's name, which is rendered apart (a
/// product name): `("Fits on ", "")`, or on several GPUs
/// `("Fits on 4 × ", " (45 GiB per GPU)")`, `per_gpu` being one GPU's share.
pub fn verdict_title(lang: Lang, fits: bool, gpus: u64, per_gpu: &str) -> (String, String) {
    let key = match (fits, gpus > 1) {
        (true, false) => Key::FitsOn,
        (false, false) => Key::NoFitOn,
        (true, true) => Key::FitsOnGpus,
        (false, true) => Key::NoFitOnGpus,
    };
    let template = crate::i18n::t(lang, key);
    let name = if gpus > 1 { "{1}" } else { "{0}" };
    let (before, after) = template.split_once(name).unwrap_or((template, ""));
    let count = gpus.to_string();
    let args = [count.as_str(), "", per_gpu];
    (
        crate::i18n::fill(before, &args),
        crate::i18n::fill(after, &args),
    )
}

/// The verdict at a glance, for the one-line bar narrow screens keep in view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Glance {
    /// Whether it fits.
    pub fits: bool,
    /// Device memory used at the peak, per GPU.
    pub used: Bytes,
    /// What one GPU offers.
    pub usable: Bytes,
}

impl Glance {
    /// The simulation's verdict on its GPU (`None` without one): on the
    /// GPU, less than the estimate where the allocator returns cached
    /// segments to stay within it.
    pub fn of(e: &vramfit_core::Estimate) -> Option<Glance> {
        let fit = e.gpu.as_ref()?;
        Some(Glance {
            fits: fit.fits,
            used: fit.device_used_bytes.unwrap_or(e.device_used_bytes),
            usable: fit.usable_bytes,
        })
    }

    /// `✓ 9.67 / 24 GiB` or `✕ 31.2 / 24 GiB`: the unit once when both
    /// figures share it.
    pub fn line(self, units: Units) -> String {
        let mark = if self.fits { "✓" } else { "✕" };
        let used = bytes(self.used, units);
        let cap = capacity(self.usable, units);
        let shared = used
            .rsplit_once(' ')
            .filter(|(_, unit)| cap.rsplit_once(' ').is_some_and(|(_, u)| u == *unit));
        match shared {
            Some((figure, _)) => format!("{mark} {figure} / {cap}"),
            None => format!("{mark} {used} / {cap}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breakdown_shares_add_up_to_one() {
        let b = Breakdown {
            parameters: Bytes(400),
            gradients: Bytes(400),
            optimizer_states: Bytes(800),
            activations: Bytes(300),
            temporary: Bytes(100),
            other: Bytes(0),
            kv_cache: Bytes(0),
        };
        let rows = breakdown_rows(&b);
        assert_eq!(rows.len(), 6);
        let sum: f64 = rows.iter().map(|r| r.share).sum();
        assert!((sum - 1.0).abs() < 1e-12, "{sum}");
        assert_eq!(
            rows.iter()
                .find(|r| r.key == "optimizer-states")
                .map(|r| r.share),
            Some(0.4)
        );
        let with_cache = Breakdown {
            kv_cache: Bytes(1000),
            ..b
        };
        assert_eq!(
            breakdown_rows(&with_cache).last().map(|r| r.key),
            Some("kv-cache")
        );
    }

    #[test]
    fn a_saturated_byte_count_says_so() {
        assert_eq!(bytes(Bytes(u64::MAX), Units::Binary), "> 16 EiB");
        assert_eq!(bytes(Bytes(u64::MAX), Units::Decimal), "> 18.4 EB");
        assert_eq!(capacity(Bytes(u64::MAX), Units::Binary), "> 16 EiB");
        assert_ne!(bytes(Bytes(u64::MAX - 1), Units::Binary), "> 16 EiB");
    }

    #[test]
    fn empty_breakdown_has_zero_shares_not_nan() {
        assert!(
            breakdown_rows(&Breakdown::default())
                .iter()
                .all(|r| r.share == 0.0)
        );
    }

    #[test]
    fn percentages_round_by_size() {
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(0.0004), "<0.1%");
        assert_eq!(percent(0.035), "3.5%");
        assert_eq!(percent(0.4249), "42%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(css_width(1.7), "width: 100.000%");
        assert_eq!(css_fill(0.42), "--fill: 42.000%");
        assert_eq!(css_fill(-1.0), "--fill: 0.000%");
    }

    #[test]
    fn bytes_follow_the_unit_choice() {
        assert_eq!(bytes(Bytes(24 * GIB), Units::Binary), "24.0 GiB");
        assert_eq!(bytes(Bytes(24 * GIB), Units::Decimal), "25.8 GB");
        assert_eq!(bytes(Bytes(1536), Units::Decimal), "1.54 kB");
        assert_eq!(bytes(Bytes(999), Units::Decimal), "999 B");
        assert_eq!(capacity(Bytes(24 * GIB), Units::Binary), "24 GiB");
        assert_eq!(capacity(Bytes(GIB + GIB / 2), Units::Binary), "1.50 GiB");
        assert_eq!(capacity(Bytes(80_000_000_000), Units::Decimal), "80 GB");
        assert_eq!(
            axis_unit(Bytes(24 * GIB), Units::Binary),
            ("GiB", GIB as f64)
        );
        assert_eq!(axis_unit(Bytes(300_000_000), Units::Decimal), ("MB", 1e6));
    }

    #[test]
    fn counts_read_naturally_in_both_languages() {
        assert_eq!(count(124_439_808, Lang::En), "124M");
        assert_eq!(count(6_738_415_616, Lang::En), "6.74B");
        assert_eq!(count(25_557_032, Lang::En), "25.6M");
        assert_eq!(count(999, Lang::En), "999");
        assert_eq!(count(124_439_808, Lang::Zh), "1.24 亿");
        assert_eq!(count(6_738_415_616, Lang::Zh), "67.4 亿");
        assert_eq!(count(25_557_032, Lang::Zh), "2556 万");
        assert_eq!(count(9_999, Lang::Zh), "9999");
        assert_eq!(flops(64_839_745_536.0), "64.8 G");
        assert_eq!(flops(512.0), "512");
        assert_eq!(group_digits(16_777_216), "16,777,216");
        assert_eq!(group_digits(512), "512");
    }
}
