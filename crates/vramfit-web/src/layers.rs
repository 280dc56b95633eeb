//! Sorting of the per-layer table. Names sort naturally (`h.2` before
//! `h.10`), numbers largest first on the first click.

use std::cmp::Ordering;
use vramfit_core::LayerRow;

/// A column of the per-layer table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayerColumn {
    /// Module path.
    Name,
    /// Parameters registered by the layer.
    Parameters,
    /// Bytes kept for backward.
    Saved,
    /// Forward FLOPs.
    Flops,
}

impl LayerColumn {
    /// Every column, in table order.
    pub const ALL: &'static [LayerColumn] = &[
        LayerColumn::Name,
        LayerColumn::Parameters,
        LayerColumn::Saved,
        LayerColumn::Flops,
    ];

    /// A stable id, for test ids.
    pub fn id(self) -> &'static str {
        match self {
            LayerColumn::Name => "name",
            LayerColumn::Parameters => "parameters",
            LayerColumn::Saved => "saved",
            LayerColumn::Flops => "flops",
        }
    }
}

/// How the table is sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LayerSort {
    /// The column sorted on.
    pub column: LayerColumn,
    /// Largest (or last) first.
    pub descending: bool,
}

impl Default for LayerSort {
    /// Model order: names ascending, which for module paths is the order of the layers.
    fn default() -> Self {
        LayerSort {
            column: LayerColumn::Name,
            descending: false,
        }
    }
}

impl LayerSort {
    /// The sort after clicking `column`: the same column flips direction; a
    /// new one starts ascending for names and descending for numbers.
    pub fn toggled(self, column: LayerColumn) -> LayerSort {
        if column == self.column {
            LayerSort {
                column,
                descending: !self.descending,
            }
        } else {
            LayerSort {
                column,
                descending: column != LayerColumn::Name,
            }
        }
    }

    /// The rows in this order; ties keep the model's order.
    pub fn apply(self, rows: &[LayerRow]) -> Vec<&LayerRow> {
        let mut sorted: Vec<&LayerRow> = rows.iter().collect();
        sorted.sort_by(|a, b| {
            let o = match self.column {
                LayerColumn::Name => natural(&a.name, &b.name),
                LayerColumn::Parameters => a.parameters.cmp(&b.parameters),
                LayerColumn::Saved => a.saved_bytes.cmp(&b.saved_bytes),
                LayerColumn::Flops => a.forward_flops.total_cmp(&b.forward_flops),
            };
            if self.descending { o.reverse() } else { o }
        });
        sorted
    }
}

/// Compares strings with runs of digits compared as numbers.
fn natural(a: &str, b: &str) -> Ordering {
    let mut x = a.as_bytes();
    let mut y = b.as_bytes();
    loop {
        match (x.first(), y.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (n, rest_x) = split_digits(x);
                let (m, rest_y) = split_digits(y);
                // Compare without leading zeros by length, then digit by digit.
                let (n, m) = (trim_zeros(n), trim_zeros(m));
                let o = n.len().cmp(&m.len()).then_with(|| n.cmp(m));
                if o != Ordering::Equal {
                    return o;
                }
                x = rest_x;
                y = rest_y;
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                x = x.get(1..).unwrap_or_default();
                y = y.get(1..).unwrap_or_default();
            }
        }
    }
}

fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let end = s
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(s.len());
    s.split_at(end)
}

fn trim_zeros(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&c| c != b'0').unwrap_or(s.len());
    s.get(start..).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::Bytes;

    fn row(name: &str, parameters: u64, saved: u64, flops: f64) -> LayerRow {
        LayerRow {
            name: name.to_string(),
            parameters,
            saved_bytes: Bytes(saved),
            forward_flops: flops,
        }
    }

    fn names(rows: &[&LayerRow]) -> Vec<String> {
        rows.iter().map(|r| r.name.clone()).collect()
    }

    #[test]
    fn names_sort_naturally_and_numbers_largest_first() {
        let rows = vec![
            row("h.10", 5, 10, 1.0),
            row("h.2", 5, 30, 3.0),
            row("embeddings", 9, 1, 0.5),
            row("h.1", 1, 20, 2.0),
        ];
        let s = LayerSort::default();
        assert_eq!(names(&s.apply(&rows)), ["embeddings", "h.1", "h.2", "h.10"]);
        let s = s.toggled(LayerColumn::Saved);
        assert!(s.descending);
        assert_eq!(names(&s.apply(&rows)), ["h.2", "h.1", "h.10", "embeddings"]);
        let s = s.toggled(LayerColumn::Saved);
        assert_eq!(names(&s.apply(&rows)), ["embeddings", "h.10", "h.1", "h.2"]);
        // Ties keep the model's order.
        let s = LayerSort::default().toggled(LayerColumn::Parameters);
        assert_eq!(names(&s.apply(&rows)), ["embeddings", "h.10", "h.2", "h.1"]);
        let s = s.toggled(LayerColumn::Flops);
        assert_eq!(names(&s.apply(&rows)), ["h.2", "h.1", "h.10", "embeddings"]);
    }

    #[test]
    fn natural_order_handles_zeros_and_prefixes() {
        assert_eq!(natural("a01", "a1"), Ordering::Equal);
        assert_eq!(natural("a", "a1"), Ordering::Less);
        assert_eq!(natural("layer9", "layer10"), Ordering::Less);
        assert_eq!(natural("b", "a100"), Ordering::Greater);
    }
}
