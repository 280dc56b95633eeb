//! "Did you mean …?" for a preset id the core does not know: the ids that
//! begin with or contain what was typed (spelled loosely: case, spaces,
//! underscores and dots as dashes), else those within two edits of it.

/// At most this many ids are offered.
const MAX: usize = 6;

/// The ids of `known` that `typed` most likely meant, best first.
pub fn nearest<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let loose = |s: &str| -> String {
        s.chars()
            .map(|c| match c {
                ' ' | '_' | '.' => '-',
                c => c.to_ascii_lowercase(),
            })
            .collect()
    };
    let typed = loose(typed);
    if typed.is_empty() {
        return Vec::new();
    }
    let known: Vec<&str> = known.into_iter().collect();
    let mut found: Vec<&str> = known
        .iter()
        .copied()
        .filter(|id| loose(id).starts_with(&typed))
        .collect();
    found.extend(
        known
            .iter()
            .copied()
            .filter(|id| !loose(id).starts_with(&typed) && loose(id).contains(&typed)),
    );
    if found.is_empty() {
        let mut near: Vec<(usize, &str)> = known
            .iter()
            .map(|id| (edits(&typed, &loose(id)), *id))
            .filter(|&(d, _)| d <= 2)
            .collect();
        near.sort_by_key(|&(d, _)| d);
        found = near.into_iter().map(|(_, id)| id).collect();
    }
    found.truncate(MAX);
    found
}

/// The Levenshtein distance between `a` and `b`, in characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row.get(j + 1).copied().unwrap_or(0);
            let insert = row.get(j).copied().unwrap_or(0) + 1;
            let delete = diagonal + 1;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = substitute.min(insert).min(delete);
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_offers_every_variant() {
        let ids = ["a100-40gb", "h100-sxm", "h100-pcie", "h100-nvl", "h200"];
        assert_eq!(nearest("h100", ids), ["h100-sxm", "h100-pcie", "h100-nvl"]);
        assert_eq!(nearest("H100 SXM", ids), ["h100-sxm"]);
        assert_eq!(nearest("sxm", ids), ["h100-sxm"]);
    }

    #[test]
    fn a_typo_offers_the_ids_within_two_edits() {
        let ids = ["llama-3.1-8b", "llama-3-8b", "qwen3-8b"];
        assert_eq!(nearest("lama-3-8b", ids), ["llama-3-8b"]);
        assert_eq!(nearest("llama-3.1-7b", ids), ["llama-3.1-8b"]);
        assert_eq!(nearest("qwen3-8", ids), ["qwen3-8b"]);
        assert!(nearest("resnet", ids).is_empty());
        assert!(nearest("", ids).is_empty());
        assert_eq!(edits("kitten", "sitting"), 3);
    }
}
