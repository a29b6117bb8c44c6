//! Who names a file (links and references), and what a file's rename or move does to the texts that
//! name it: each `@` import and each link
//! Copilot follows (a Markdown link, `#file:`) that names the file, or a file in a folder that
//! moves, is rewritten to name it at its new place, from its own folder as the agents resolve it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::chain::agents;

/// How a text names a file it can be followed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    /// An `@` import (Claude Code, Gemini CLI), whose text the agent loads with the file's.
    Import,
    /// A Markdown link or a `#file:` mention, which Copilot attaches as a reference.
    Link,
}

/// The mentions of `text` (the file at `path`) that name a file of the project: its `@` imports,
/// then the Markdown links and `#file:` mentions that no import overlaps.
pub fn links(path: &Path, text: &str) -> Vec<(agents::imports::ImportLink, Named)> {
    let mut out: Vec<_> = agents::imports::import_links(path, text).into_iter().map(|l| (l, Named::Import)).collect();
    for l in agents::reference_links(path, text) {
        if !out.iter().any(|(i, _)| l.start < i.end && i.start < l.end) {
            out.push((l, Named::Link));
        }
    }
    out
}

/// Where `files` (each file and its text) name `target` by an `@` import, a Markdown link or a
/// `#file:` mention: per file, the bytes of each mention.
pub fn mentions_of(files: &[(PathBuf, Arc<str>)], target: &Path) -> Vec<(PathBuf, Vec<(usize, usize)>)> {
    let mut out = Vec::new();
    for (path, text) in files {
        let at: Vec<(usize, usize)> =
            links(path, text).into_iter().filter(|(l, _)| l.target == target).map(|(l, _)| (l.start, l.end)).collect();
        if !at.is_empty() {
            out.push((path.clone(), at));
        }
    }
    out
}

/// Bytes of a file to replace, and what with.
pub type Edit = (usize, usize, String);

/// The edits of `files` (each file and its text) that keep their imports and links naming the
/// files `renames` moves (old path, new path; a folder moves with all below it): per file, the
/// bytes to replace and the new path, as written from the file's folder (`./` kept when the
/// mention had it). Only mentions that name an existing file of the project are rewritten.
pub fn rename_edits(files: &[(PathBuf, Arc<str>)], renames: &[(PathBuf, PathBuf)]) -> Vec<(PathBuf, Vec<Edit>)> {
    let mut out = Vec::new();
    for (path, text) in files {
        let Some(dir) = path.parent() else { continue };
        let mut edits: Vec<Edit> = Vec::new();
        for (l, named) in links(path, text) {
            // (An import's path follows its `@`.)
            let (start, end, target) = match named {
                Named::Import => (l.start + 1, l.end, l.target),
                Named::Link => (l.start, l.end, l.target),
            };
            let Some(moved) = renames.iter().find_map(|(old, new)| {
                let rest = target.strip_prefix(old).ok()?;
                Some(if rest.as_os_str().is_empty() { new.clone() } else { new.join(rest) })
            }) else {
                continue;
            };
            // The file itself moving: its mentions are written from its new folder.
            let from = renames
                .iter()
                .find_map(|(old, new)| path.strip_prefix(old).ok().map(|rest| new.join(rest)))
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| dir.to_path_buf());
            let mut written = crate::paths::slash_join(&crate::paths::relative(&moved, &from));
            if text[start..end].starts_with("./") && !written.starts_with("../") {
                written = format!("./{written}");
            }
            // (No two mentions of [`links`] overlap.)
            edits.push((start, end, written));
        }
        if !edits.is_empty() {
            out.push((path.clone(), edits));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A moved file's imports and links follow it, written from each importer's folder; a
    /// folder's move carries the files below it; an import of another file is left alone.
    #[test]
    fn imports_and_links_follow_a_moved_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("real");
        std::fs::create_dir_all(root.join(".git")).expect("git");
        std::fs::create_dir_all(root.join("docs/deep")).expect("dirs");
        std::fs::write(root.join("docs/guide.md"), "g").expect("write");
        std::fs::write(root.join("docs/deep/x.md"), "x").expect("write");
        std::fs::write(root.join("other.md"), "o").expect("write");
        let claude = root.join("CLAUDE.md");
        let text: Arc<str> =
            "Read @docs/guide.md and @./other.md, [x](docs/deep/x.md) and #file:docs/guide.md\n".into();
        let edits = rename_edits(
            &[(claude.clone(), text.clone())],
            &[(root.join("docs/guide.md"), root.join("guides/main.md"))],
        );
        let applied = |edits: &[(usize, usize, String)]| {
            let mut t = text.to_string();
            let mut sorted = edits.to_vec();
            sorted.sort_by_key(|e| std::cmp::Reverse(e.0));
            for (s, e, w) in sorted {
                t.replace_range(s..e, &w);
            }
            t
        };
        assert_eq!(edits.len(), 1);
        assert_eq!(
            applied(&edits[0].1),
            "Read @guides/main.md and @./other.md, [x](docs/deep/x.md) and #file:guides/main.md\n"
        );
        let edits = rename_edits(&[(claude, text.clone())], &[(root.join("docs"), root.join("pkg/docs"))]);
        assert_eq!(
            applied(&edits[0].1),
            "Read @pkg/docs/guide.md and @./other.md, [x](pkg/docs/deep/x.md) and #file:pkg/docs/guide.md\n"
        );
    }
}
