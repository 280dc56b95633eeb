//! Display values derived from a report: shares, percentages, rounded counts
//! and the rows of the breakdown. Byte formatting itself is the core's
//! (`Bytes`'s `Display`); this module only adds what the page needs on top.

use vramfit_core::units::GIB;
use vramfit_core::{Breakdown, Bytes};

/// One category of the breakdown at the peak.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakdownRow {
    /// Stable key, used for CSS classes and test ids (`parameters`, `optimizer-states`, ...).
    pub key: &'static str,
    /// What the user reads.
    pub label: &'static str,
    /// What the category holds, in a few words.
    pub note: &'static str,
    /// Its bytes at the peak.
    pub bytes: Bytes,
    /// Its share of the peak, in `[0, 1]`.
    pub share: f64,
}

/// The six categories of `at_peak`, in the order they are stacked.
pub fn breakdown_rows(b: &Breakdown) -> Vec<BreakdownRow> {
    let total = b.total();
    let row = |key, label, note, bytes: Bytes| BreakdownRow { key, label, note, bytes, share: share(bytes, total) };
    vec![
        row("parameters", "Parameters", "Model weights", b.parameters),
        row("gradients", "Gradients", "Accumulated during backward", b.gradients),
        row("optimizer-states", "Optimizer states", "Moments, momentum buffers", b.optimizer_states),
        row("activations", "Activations", "Saved for backward", b.activations),
        row("temporary", "Temporary", "Activation gradients, workspaces", b.temporary),
        row("other", "Other", "Inputs and buffers", b.other),
    ]
}

/// `part / whole`, clamped to `[0, 1]`; zero when `whole` is zero.
pub fn share(part: Bytes, whole: Bytes) -> f64 {
    if whole.0 == 0 { 0.0 } else { (part.0 as f64 / whole.0 as f64).clamp(0.0, 1.0) }
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

/// The same share as a CSS width (`42.123%`), unrounded so bars add up.
pub fn css_width(share: f64) -> String {
    format!("width: {:.3}%", share.clamp(0.0, 1.0) * 100.0)
}

/// A GPU's capacity: whole GiB without decimals (`24 GiB`), anything else as `Bytes` shows it.
pub fn capacity(b: Bytes) -> String {
    if b.0 > 0 && b.0.is_multiple_of(GIB) { format!("{} GiB", b.0 / GIB) } else { b.to_string() }
}

/// A parameter count rounded for reading: `124M`, `6.74B`, `25.6M`, `930K`.
pub fn count(n: u64) -> String {
    let units = [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")];
    let x = n as f64;
    for (scale, suffix) in units {
        if x >= scale {
            let v = x / scale;
            return if v >= 100.0 {
                format!("{v:.0}{suffix}")
            } else if v >= 10.0 {
                format!("{v:.1}{suffix}")
            } else {
                format!("{v:.2}{suffix}")
            };
        }
    }
    n.to_string()
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
        };
        let rows = breakdown_rows(&b);
        assert_eq!(rows.len(), 6);
        let sum: f64 = rows.iter().map(|r| r.share).sum();
        assert!((sum - 1.0).abs() < 1e-12, "{sum}");
        assert_eq!(rows.iter().find(|r| r.key == "optimizer-states").map(|r| r.share), Some(0.4));
    }

    #[test]
    fn empty_breakdown_has_zero_shares_not_nan() {
        assert!(breakdown_rows(&Breakdown::default()).iter().all(|r| r.share == 0.0));
    }

    #[test]
    fn percentages_round_by_size() {
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(0.0004), "<0.1%");
        assert_eq!(percent(0.035), "3.5%");
        assert_eq!(percent(0.4249), "42%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(css_width(1.7), "width: 100.000%");
    }

    #[test]
    fn counts_and_capacities_read_naturally() {
        assert_eq!(count(124_439_808), "124M");
        assert_eq!(count(6_738_415_616), "6.74B");
        assert_eq!(count(25_557_032), "25.6M");
        assert_eq!(count(999), "999");
        assert_eq!(capacity(Bytes(24 * GIB)), "24 GiB");
        assert_eq!(capacity(Bytes(GIB + GIB / 2)), "1.50 GiB");
        assert_eq!(group_digits(16_777_216), "16,777,216");
        assert_eq!(group_digits(512), "512");
    }
}
