//! How every edge writes a number for a person: one way, so that `check`, `compare`, `diff`,
//! `effective` and the editor's hovers give the same figure the same look ("1,334 bytes").
//! Text an agent receives (a budget note inside a rendered block) keeps the agent's own form.

/// 35112 as "35,112".
pub fn number(n: impl Into<u64>) -> String {
    let digits = n.into().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// 1 as "1 byte", 1334 as "1,334 bytes".
pub fn bytes(n: impl Into<u64>) -> String {
    let n = n.into();
    format!("{} byte{}", number(n), if n == 1 { "" } else { "s" })
}

/// The word of `among` that `word` most likely misspells, for a "did you mean": one that equals
/// it but for case, `-` and `_` (`apply_to`, `alwaysapply`), else the nearest within two edits
/// (one for words of up to four letters); `None` when none is that near.
pub fn closest<'a>(word: &str, among: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let fold =
        |w: &str| -> String { w.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect() };
    let folded = fold(word);
    let mut best: Option<(usize, &str)> = None;
    for candidate in among {
        if candidate == word {
            continue;
        }
        let d = if fold(candidate) == folded { 0 } else { edits(&folded, &fold(candidate)) };
        let most = if folded.chars().count() <= 4 { 1 } else { 2 };
        if d <= most && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// The Levenshtein distance between `a` and `b`, in characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// "32 KiB" for whole KiB, else "1000-byte".
pub fn size_words(bytes: u64) -> String {
    if bytes >= 1024 && bytes.is_multiple_of(1024) { format!("{} KiB", bytes / 1024) } else { format!("{bytes}-byte") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_group_thousands_and_bytes_agree_in_number() {
        assert_eq!(number(0u64), "0");
        assert_eq!(number(999u64), "999");
        assert_eq!(number(1000u64), "1,000");
        assert_eq!(number(1_234_567u64), "1,234,567");
        assert_eq!(bytes(1u64), "1 byte");
        assert_eq!(bytes(1334u64), "1,334 bytes");
    }

    #[test]
    fn a_misspelt_word_finds_the_word_meant_and_a_stranger_finds_none() {
        let keys = ["description", "globs", "alwaysApply"];
        assert_eq!(closest("glob", keys), Some("globs"));
        assert_eq!(closest("alwaysapply", keys), Some("alwaysApply"));
        assert_eq!(closest("always_apply", keys), Some("alwaysApply"));
        assert_eq!(closest("descripton", keys), Some("description"));
        assert_eq!(closest("title", keys), None);
        assert_eq!(closest("globs", keys), None);
        assert_eq!(closest("claud", ["claude", "codex", "cursor"]), Some("claude"));
        assert_eq!(closest("gem", ["gemini", "codex"]), None);
    }
}
