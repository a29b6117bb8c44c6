//! Sizes in tokens beside bytes. People reason about context in tokens; the agents' budgets are
//! in bytes. The count is OpenAI's `o200k_base` encoding: exact for the agents whose models use
//! it (Codex, Copilot), and a labelled estimate for the others, whose tokenizers are not public.
//!
//! The encoding's vocabulary is loaded at the first count (about 0.1 s and 45 MB), so a view
//! that never shows tokens never pays for it.

use std::sync::OnceLock;

use serde::Serialize;

/// The encoding counted with.
pub const ENCODING: &str = "o200k_base";

/// A size in tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    pub count: usize,
    /// The agent's models use [`ENCODING`]; otherwise the count estimates theirs.
    pub exact: bool,
}

fn encoder() -> Option<&'static tiktoken_rs::CoreBPE> {
    static ENCODER: OnceLock<Option<tiktoken_rs::CoreBPE>> = OnceLock::new();
    ENCODER
        .get_or_init(|| match tiktoken_rs::o200k_base() {
            Ok(bpe) => Some(bpe),
            Err(e) => {
                tracing::warn!("the {ENCODING} encoding could not be loaded, sizes are given in bytes only: {e}");
                None
            }
        })
        .as_ref()
}

/// `text`'s length in [`ENCODING`] tokens, read as plain text (a special token's spelling in a
/// file is text to the model too); `None` when the encoding cannot be loaded.
pub fn count(text: &str) -> Option<usize> {
    if text.is_empty() {
        return Some(0);
    }
    Some(encoder()?.count_ordinary(text))
}

/// Whether `agent`'s models use [`ENCODING`] (OpenAI's: Codex, and Copilot's default models).
pub fn exact_for(agent: &str) -> bool {
    matches!(agent, "codex" | "copilot")
}

/// The size of the `parts` an agent gets (each a separate message), in tokens.
pub fn of_parts<'a>(agent: &str, parts: impl IntoIterator<Item = &'a str>) -> Option<Tokens> {
    let mut total = 0;
    for part in parts {
        total += count(part)?;
    }
    Some(Tokens { count: total, exact: exact_for(agent) })
}

/// The size of `text` for `agent`.
pub fn of(agent: &str, text: &str) -> Option<Tokens> {
    of_parts(agent, [text])
}

impl Tokens {
    /// "1,234 tokens", or "~1,234 tokens (estimate)" for an agent whose tokenizer is not
    /// [`ENCODING`].
    pub fn words(&self) -> String {
        let n = super::words::number(self.count as u64);
        let unit = if self.count == 1 { "token" } else { "tokens" };
        if self.exact { format!("{n} {unit}") } else { format!("~{n} {unit} (estimate)") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_o200k_base_and_labelled_for_other_agents() {
        // Counts o200k_base gives, checked with a second implementation of the encoding
        // (GitHub's bpe-openai): one token for a common word, a space and a word together.
        assert_eq!(count(""), Some(0));
        assert_eq!(count("hello"), Some(1));
        assert_eq!(count("hello world"), Some(2));
        assert_eq!(count("Use pnpm.\n"), Some(4));
        let codex = of_parts("codex", ["hello world", "hello"]);
        assert_eq!(codex, Some(Tokens { count: 3, exact: true }));
        assert_eq!(codex.map(|t| t.words()), Some("3 tokens".into()));
        let claude = of("claude", "hello");
        assert_eq!(claude.map(|t| t.words()), Some("~1 token (estimate)".into()));
        assert_eq!(Tokens { count: 12_345, exact: true }.words(), "12,345 tokens");
    }
}
