//! What the texts a side's agents read name: the files an agent may read because a file it
//! reads names them (`@notes.md` for Claude Code and Gemini CLI, a Markdown link or a
//! `#file:` mention for Copilot) and, in a settings file, the file names an agent is told to
//! look for in every folder (Gemini CLI's `context.fileName`, the file names of
//! `instructions-lsp.toml`). A layout writes a Markdown, text or settings file outside the
//! agents' own files and folders only when one of these names it: a tree of hundreds of
//! thousands of notes that no instruction names costs their names, not their writing.
//!
//! The reading is wider than any agent's (inside code too, with and without trailing
//! punctuation, each way an agent resolves a path): a file named too many is written for
//! nothing, a file named too few would be missing from a view.

use std::collections::HashSet;

use crate::chain::agents::imports::TRAILING;

/// The paths (from the root, with `/`) and the file names the texts scanned name.
#[derive(Default)]
pub(super) struct Mentions {
    pub paths: HashSet<String>,
    pub names: HashSet<String>,
}

/// The extensions of the files whose text a layout writes only when mentioned (and of the
/// settings files whose names count in every folder).
pub(super) const TEXT_EXTENSIONS: &[&str] = &["md", "mdc", "markdown", "txt", "toml", "json", "jsonc", "yaml", "yml"];

/// The extensions of settings files: the names they hold are names agents look for anywhere.
const SETTINGS_EXTENSIONS: &[&str] = &["toml", "json", "jsonc", "yaml", "yml"];

/// The extension of a name or path, lowercased, when it is one of `among`.
fn extension_among(path: &str, among: &[&str]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && among.iter().any(|e| e.eq_ignore_ascii_case(ext)))
}

/// Whether `path` has one of [`TEXT_EXTENSIONS`].
pub(super) fn text_extension(path: &str) -> bool {
    extension_among(path, TEXT_EXTENSIONS)
}

impl Mentions {
    /// Takes in what `text`, the file at `rel` (from the root, with `/`), names.
    pub(super) fn scan(&mut self, rel: &str, text: &[u8]) {
        let text = String::from_utf8_lossy(text);
        let dir = rel.rsplit_once('/').map_or("", |(dir, _)| dir);
        let settings = extension_among(rel, SETTINGS_EXTENSIONS);
        each_mention(&text, |mention| {
            if !text_extension(mention) {
                return;
            }
            if settings {
                let name = mention.rsplit('/').next().unwrap_or(mention);
                if !self.names.contains(name) {
                    self.names.insert(name.to_string());
                }
            }
            if let Some(path) = joined(dir, mention) {
                self.paths.insert(path);
            }
        });
    }
}

/// Each path-like piece of `text`: every word (split at white space, then again at brackets
/// and quotes), without a leading `@`, from a `#file:` on, without an anchor and with and
/// without trailing punctuation; and every Markdown link's target, which may hold spaces.
fn each_mention(text: &str, mut each: impl FnMut(&str)) {
    let mut piece = |word: &str| {
        let word = word.trim_start_matches('@');
        let word = match find_ignoring_case(word, "#file:") {
            Some(i) => &word[i + "#file:".len()..],
            None => word,
        };
        let word = word.split('#').next().unwrap_or_default();
        if !word.is_empty() {
            each(word);
        }
        let trimmed = word.trim_end_matches(TRAILING);
        if !trimmed.is_empty() && trimmed.len() != word.len() {
            each(trimmed);
        }
    };
    for word in text.split(char::is_whitespace) {
        piece(word);
        if word.contains(BRACKETS) {
            word.split(BRACKETS).for_each(&mut piece);
        }
    }
    for (at, _) in text.match_indices("](") {
        let rest = &text[at + 2..];
        let end = rest.find([')', '\n']).unwrap_or(rest.len());
        piece(rest[..end].trim());
    }
}

const BRACKETS: &[char] = &['(', ')', '[', ']', '<', '>', '{', '}', '"', '\'', '`', '|', '=', ','];

fn find_ignoring_case(hay: &str, needle: &str) -> Option<usize> {
    hay.as_bytes().windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// `rel` joined to the folder `dir` (both with `/`; `""`: the root), `.` and `..` folded; `None`
/// for a path that leaves the root or is absolute (nothing of the side is there).
fn joined(dir: &str, rel: &str) -> Option<String> {
    if rel.starts_with('/') || rel.starts_with('~') || rel.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(rel: &str, text: &str) -> Mentions {
        let mut m = Mentions::default();
        m.scan(rel, text.as_bytes());
        m
    }

    /// Each way an agent names a file is read, resolved from the file's folder: an import, one
    /// followed by punctuation, a Markdown link with spaces and an anchor, `#file:`, `..`.
    #[test]
    fn every_way_an_agent_names_a_file_is_read_from_the_files_folder() {
        let m = scanned(
            "docs/CLAUDE.md",
            "See @notes.md, and [the guide](../guide/my guide.md#start) or #file:./a/b.txt.\n\
             `@../CODE.md` then (x.yaml) and @../../out.md and README without extension and src/x.rs\n",
        );
        for path in ["CODE.md", "docs/a/b.txt", "docs/notes.md", "docs/x.yaml", "guide/my guide.md"] {
            assert!(m.paths.contains(path), "{path}: {:?}", m.paths);
        }
        // Nothing above the root, nothing that no agent keeps text of, no name for every folder.
        assert!(m.paths.iter().all(|p| !p.contains("out.md") && !p.ends_with(".rs") && !p.contains("README")));
        assert!(m.names.is_empty(), "{:?}", m.names);
    }

    /// A settings file's names count in every folder (Gemini CLI's `context.fileName`); a
    /// Markdown file's do not.
    #[test]
    fn a_settings_file_names_files_by_name_for_every_folder() {
        let m = scanned(".gemini/settings.json", r#"{"context": {"fileName": ["NOTES.md", "docs/AI.md"]}}"#);
        assert!(m.names.contains("NOTES.md") && m.names.contains("AI.md"), "{:?}", m.names);
        assert!(m.paths.contains(".gemini/docs/AI.md"), "{:?}", m.paths);
    }
}
