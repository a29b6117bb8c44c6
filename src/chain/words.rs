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
}
