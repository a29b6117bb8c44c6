//! `@path` import directives (Claude Code, Gemini CLI).
//!
//! Both agents find an import as an `@` at the start of the text or after whitespace, followed
//! by a path running to the next whitespace, and skip imports inside backtick code spans and
//! fences. Gemini (`memoryImportProcessor.js` of gemini-cli-core 0.61.0) replaces each import
//! by the imported text between HTML comments, at most 5 levels deep, and refuses a path whose
//! real location is outside the importing file's project root. Claude Code documents imports
//! relative to the importing file, `@~/` for the home directory, "a maximum depth of 5 hops",
//! and no evaluation in code; observed with Claude Code 2.1.332, imported files are listed after
//! their importer, four hops at most, and a project file's imports outside the working directory
//! are not loaded.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::chain::model::view::{AgentFile, Scope, Status};

/// The depth limit both agents use.
pub const MAX_DEPTH: usize = 5;

/// The most text one file's inline expansion may produce. Gemini inlines a file again wherever
/// it is imported (only the current import chain is checked), so a few small files importing
/// each other many times grow exponentially: five files of sixteen imports each make a million
/// copies. Past this cap the file is reported `runaway` instead of expanded.
pub const EXPANSION_CAP: u64 = 4 * 1024 * 1024;
/// The most imports one file's expansion may follow.
pub const EXPANSION_IMPORTS: usize = 10_000;

/// What one file's expansion has spent so far.
#[derive(Debug, Default)]
pub struct Work {
    pub bytes: u64,
    pub imports: usize,
    /// The mentions that look like files but name none (see [`Missing`]).
    pub missing: Vec<Missing>,
}

/// An `@` mention that looks like a file (it holds a `/` or ends in an extension) but names
/// none: the agent loads nothing for it, silently (Claude Code) or with a note in the text
/// (Gemini CLI). A mention that does not look like one (`@someone,` in prose) is no mistake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    /// The file that holds the mention, the mention as written (without `@`), and the path
    /// the agent looked at.
    pub importer: PathBuf,
    pub mention: String,
    pub looked: PathBuf,
}

/// An `@` import of a file's text that names a file of the project: the bytes of the mention
/// (with its `@`) and the file it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportLink {
    pub start: usize,
    pub end: usize,
    pub target: PathBuf,
}

/// The imports of `text` (the text of the file at `path`) that an author can follow: each `@`
/// mention outside code that names a file of the project, resolved as Claude Code and Gemini
/// CLI resolve it (against the file's folder). A `~/` mention (the user's own files) and one
/// that leads out of the project are left out: nothing outside the project is named.
pub fn import_links(path: &Path, text: &str) -> Vec<ImportLink> {
    let Some(dir) = path.parent() else { return Vec::new() };
    let followable = project_file(dir);
    let regions = code_regions(text);
    directives(text, true)
        .into_iter()
        .filter(|d| !d.path.starts_with("~/") && !in_code(&regions, d.start))
        .filter_map(|d| {
            let target = resolve(dir, &d.path);
            followable(&target).then_some(ImportLink { start: d.start, end: d.end, target })
        })
        .collect()
}

/// Whether a path is one a text in `dir` may be followed to: a file of `dir`'s project (the
/// project of the file that names it, not of the target: a target names its own), its real
/// location inside it.
pub fn project_file(dir: &Path) -> impl Fn(&Path) -> bool {
    let project = crate::chain::confine::project_folder(dir);
    let base = crate::chain::confine::real_location(project).unwrap_or_else(|_| project.to_path_buf());
    move |target| {
        crate::chain::confine::leaves(target, &base).is_none() && fs::metadata(target).is_ok_and(|m| m.is_file())
    }
}

/// Punctuation prose puts after a word, which an agent takes as part of a mention's path.
pub const TRAILING: &[char] = &[',', ';', ':', '.', ')', '!', '?', '\'', '"'];

/// Whether an `@` mention looks like a file: it holds a `/`, or ends in an extension with a
/// letter (`.md`, `.mdc`), not in punctuation.
fn looks_like_file(mention: &str) -> bool {
    // (Prose puts punctuation after a name: `@a.md,` is a file name with a comma.)
    let mention = mention.trim_end_matches(TRAILING);
    let ext = mention.rsplit_once('.');
    mention.contains('/')
        || ext.is_some_and(|(stem, e)| {
            !stem.is_empty()
                && !e.is_empty()
                && e.len() <= 10
                && e.bytes().all(|b| b.is_ascii_alphanumeric())
                && e.bytes().any(|b| b.is_ascii_alphabetic())
        })
}

impl Work {
    /// Charges one more import of `bytes`; false once past a cap.
    fn charge(&mut self, bytes: u64) -> bool {
        self.imports += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        self.imports <= EXPANSION_IMPORTS && self.bytes <= EXPANSION_CAP
    }
}

/// One `@path` directive: its byte range in the text and the path after `@`.
#[derive(Debug, PartialEq, Eq)]
pub struct Directive {
    pub start: usize,
    pub end: usize,
    pub path: String,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The byte ranges of backtick code: a run of N backticks up to the next run of exactly the
/// same N backticks (gemini's `` /(`+)([\s\S]*?)\1/g ``, which also covers fences).
pub fn code_regions(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut regions = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // (Found with `find`, which skips ahead many bytes at a time: most of a text is prose.)
        let Some(at) = text[i..].find('`') else { break };
        i += at;
        let mut run = i;
        while run < b.len() && b[run] == b'`' {
            run += 1;
        }
        // The regex is greedy on the opening run but backtracks: try the longest run first,
        // then shorter ones, each needing a later occurrence of the same number of backticks.
        let mut matched = None;
        for n in (1..=run - i).rev() {
            let needle = "`".repeat(n);
            if let Some(pos) = text[i + n..].find(&needle) {
                matched = Some(i + n + pos + n);
                break;
            }
        }
        match matched {
            Some(end) => {
                regions.push((i, end));
                i = end;
            }
            None => i += 1,
        }
    }
    regions
}

/// Whether byte `at` lies in one of `regions` (made by [`code_regions`]).
fn in_code(regions: &[(usize, usize)], at: usize) -> bool {
    regions.iter().any(|&(s, e)| at >= s && at < e)
}

/// The import directives of `text`, those inside code included (see [`code_regions`]).
/// `allow_home` accepts `@~/…` (Claude Code); Gemini accepts only `.`, `/` or an ASCII letter
/// as the first character of the path.
pub fn directives(text: &str, allow_home: bool) -> Vec<Directive> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let Some(at) = text[i..].find('@').map(|p| p + i) else { break };
        if at > 0 && !is_space(b[at - 1]) {
            i = at + 1;
            continue;
        }
        let mut j = at + 1;
        while j < b.len() && !is_space(b[j]) {
            j += 1;
        }
        let path = &text[at + 1..j];
        let first = path.as_bytes().first().copied();
        let ok = match first {
            Some(c) => c == b'.' || c == b'/' || c.is_ascii_alphabetic() || (allow_home && path.starts_with("~/")),
            None => false,
        };
        if ok {
            out.push(Directive { start: at, end: j, path: path.to_string() });
        }
        i = j + 1;
    }
    out
}

/// Lexical `path.resolve(base, rel)`: `..` and `.` folded without touching the disk.
pub fn resolve(base: &Path, rel: &str) -> PathBuf {
    let joined = if rel.starts_with('/') { PathBuf::from(rel) } else { base.join(rel) };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// The real path of `p`, resolving the deepest existing ancestor and keeping the rest.
fn real_path(p: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut cur = p.to_path_buf();
    loop {
        if let Ok(real) = crate::chain::repo::memo::real_path(&cur) {
            let mut out = real;
            for m in missing.iter().rev() {
                out.push(m);
            }
            return out;
        }
        match (cur.file_name().map(|n| n.to_os_string()), cur.parent().map(Path::to_path_buf)) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                cur = parent;
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// The nearest ancestor of `dir` (itself included) holding `.git`, else `dir`.
fn git_root_or(dir: &Path) -> PathBuf {
    // Every import of every view asks: once per directory and scope.
    crate::chain::repo::memo::remembered("git root", dir, || git_root_or_now(dir))
}

fn git_root_or_now(dir: &Path) -> PathBuf {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        // `lstat` finds whatever `stat` finds (and a dangling link too).
        if crate::chain::repo::memo::lstat_exists(&crate::paths::join(d, ".git")) {
            return d.to_path_buf();
        }
        cur = d.parent();
    }
    dir.to_path_buf()
}

/// Node's message for a failed `access` + `readFile` of an import.
fn node_error(path: &Path, e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => format!("ENOENT: no such file or directory, access '{}'", path.display()),
        io::ErrorKind::PermissionDenied => format!("EACCES: permission denied, open '{}'", path.display()),
        io::ErrorKind::IsADirectory => "EISDIR: illegal operation on a directory, read".to_string(),
        _ => e.to_string(),
    }
}

/// Whether `path` names nothing on disk (nor a link that leads somewhere): an `@` mention of it
/// is prose, not an import.
fn names_no_file(path: &Path) -> bool {
    matches!(fs::metadata(path), Err(e) if e.kind() == io::ErrorKind::NotFound)
}

fn read_text(path: &Path) -> io::Result<String> {
    let meta = fs::metadata(path)?;
    if meta.is_dir() {
        return Err(io::Error::from(io::ErrorKind::IsADirectory));
    }
    crate::chain::text::read::read_capped(path, crate::chain::text::read::READ_CAP)
        .map(|(data, _)| crate::chain::text::read::lossy(data))
}

/// Gemini's tree import: `content` of a file in `base` with every import replaced by the
/// imported text. `chain` holds the files imported on the way here (not the top file, as in
/// gemini, so a file can import its importer once before the cycle is cut). Imported files
/// are appended to `files` with scope `import`. `None` when the expansion runs past
/// [`EXPANSION_CAP`] or [`EXPANSION_IMPORTS`] (see there).
pub fn gemini_expand(
    content: &str,
    base: &Path,
    importer: &Path,
    chain: &[PathBuf],
    depth: usize,
    files: &mut Vec<AgentFile>,
    work: &mut Work,
) -> Option<String> {
    if depth >= MAX_DEPTH {
        return Some(content.to_string());
    }
    let root = real_path(&git_root_or(base));
    let regions = code_regions(content);
    let mut out = String::with_capacity(content.len());
    let mut last = 0;
    for d in directives(content, false) {
        out.push_str(&content[last..d.start]);
        last = d.end;
        if in_code(&regions, d.start) {
            out.push('@');
            out.push_str(&d.path);
            continue;
        }
        let url = d.path.starts_with("file://") || d.path.starts_with("http://") || d.path.starts_with("https://");
        let full = resolve(base, &d.path);
        if url || !real_path(&full).starts_with(&root) {
            out.push_str(&format!("<!-- Import failed: {} - Path traversal attempt -->", d.path));
            files.push(AgentFile::new(full, Scope::Import, Status::Outside).by(importer));
            continue;
        }
        if chain.contains(&full) {
            out.push_str(&format!("<!-- File already processed: {} -->", d.path));
            files.push(AgentFile::new(full, Scope::Import, Status::Cycle).by(importer));
            continue;
        }
        match read_text(&full) {
            Ok(text) => {
                let bytes = text.len() as u64;
                // The comments around the imported text count too.
                if !work.charge(bytes + 2 * d.path.len() as u64 + 64) {
                    return None;
                }
                files.push(AgentFile::new(full.clone(), Scope::Import, Status::Loaded).by(importer).size(bytes, bytes));
                let mut next = chain.to_vec();
                next.push(full.clone());
                let dir = full.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
                let inner = gemini_expand(&text, &dir, &full, &next, depth + 1, files, work)?;
                out.push_str(&format!(
                    "<!-- Imported from: {p} -->\n{inner}\n<!-- End of import from: {p} -->",
                    p = d.path
                ));
            }
            Err(e) => {
                out.push_str(&format!("<!-- Import failed: {} - {} -->", d.path, node_error(&full, &e)));
                // Gemini writes the failure into the text, but a mention that names no file
                // loads none: no file of the view (a mistake, when it looks like a file).
                if e.kind() != io::ErrorKind::NotFound {
                    files.push(AgentFile::new(full, Scope::Import, Status::Unreadable).by(importer));
                } else if looks_like_file(&d.path) {
                    let missing = Missing { importer: importer.to_path_buf(), mention: d.path.clone(), looked: full };
                    work.missing.push(missing);
                }
            }
        }
    }
    out.push_str(&content[last..]);
    Some(out)
}

/// How Claude Code resolves imports: `@~/` against `home`; a path outside `boundary` (the
/// working directory, for project files) is external and not loaded; at most
/// [`CLAUDE_MAX_HOPS`] hops; each file once; imported files take their importer's `label`, and
/// lose their front matter as it does.
pub struct ClaudeImports<'a> {
    pub home: Option<&'a Path>,
    pub boundary: Option<&'a Path>,
    pub label: Option<&'static str>,
    /// The importer's role: a fallback file's imports fall back with it.
    pub role: crate::chain::model::view::Role,
    /// How many directives were looked at, across the recursion (see [`EXPANSION_IMPORTS`]).
    pub steps: std::cell::Cell<usize>,
    /// The mentions that look like files but name none, across the recursion.
    pub missing: std::cell::RefCell<Vec<Missing>>,
}

/// Observed with Claude Code 2.1.332: a chain CLAUDE.md → a1 → a2 → a3 → a4 loads, a5 does not
/// (its documentation says "a maximum depth of 5 hops").
pub const CLAUDE_MAX_HOPS: usize = 4;

impl ClaudeImports<'_> {
    /// The imports of `content` (a file in `base`), depth first, with their texts.
    pub fn resolve(
        &self,
        content: &str,
        base: &Path,
        importer: &Path,
        depth: usize,
        seen: &mut Vec<PathBuf>,
    ) -> Vec<(AgentFile, String)> {
        let mut out = Vec::new();
        let regions = code_regions(content);
        let imported = |path: PathBuf, status| {
            let mut f = AgentFile::new(path, Scope::Import, status).by(importer);
            f.label = self.label;
            f.role = self.role;
            f
        };
        for d in directives(content, true) {
            if in_code(&regions, d.start) {
                continue;
            }
            // Each file is read once, but a file may name any number of imports: bounded.
            self.steps.set(self.steps.get() + 1);
            if self.steps.get() > EXPANSION_IMPORTS {
                break;
            }
            let full = match (d.path.strip_prefix("~/"), self.home) {
                (Some(rest), Some(h)) => resolve(h, rest),
                (Some(_), None) => continue,
                (None, _) => resolve(base, &d.path),
            };
            // A mention that names no file (a handle such as `@someone,` in prose) is no
            // import: the agent loads nothing for it, so it is no file of the view.
            if names_no_file(&full) {
                if looks_like_file(&d.path) {
                    let missing = Missing { importer: importer.to_path_buf(), mention: d.path.clone(), looked: full };
                    self.missing.borrow_mut().push(missing);
                }
                continue;
            }
            if seen.contains(&full) {
                out.push((imported(full, Status::Cycle), String::new()));
                continue;
            }
            if depth >= CLAUDE_MAX_HOPS {
                out.push((imported(full, Status::TooDeep), String::new()));
                continue;
            }
            if self.boundary.is_some_and(|b| !real_path(&full).starts_with(real_path(b))) {
                out.push((imported(full, Status::Outside), String::new()));
                continue;
            }
            seen.push(full.clone());
            // An imported file is shown as its importer is: front matter cut (with the white
            // space after it), block-level comments hidden.
            let read = read_text(&full);
            let bytes = read.as_ref().map_or(0, |t| t.len() as u64);
            let shown = |t: &str| {
                let body = crate::chain::text::front_matter::without_front_matter(
                    t,
                    crate::chain::model::profile::FrontMatter::StripWithSpace,
                );
                crate::chain::text::comments::hide_block_comments(body).into_owned()
            };
            match read.as_deref().map(shown) {
                Ok(text) if !crate::chain::text::read::js_trim(&text).is_empty() => {
                    let dir = full.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
                    let inner = self.resolve(&text, &dir, &full, depth + 1, seen);
                    out.push((imported(full, Status::Loaded).size(bytes, bytes), text));
                    out.extend(inner);
                }
                Ok(_) => out.push((imported(full, Status::Empty), String::new())),
                // A missing import is skipped without a word.
                Err(_) => out.push((imported(full, Status::Unreadable), String::new())),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_need_whitespace_before_and_a_path_start() {
        let found: Vec<String> =
            directives("@a.md x@b.md @./c.md @~/d.md @ @1.md\n@/e.md", true).into_iter().map(|d| d.path).collect();
        assert_eq!(found, ["a.md", "./c.md", "~/d.md", "/e.md"]);
        let gemini: Vec<String> = directives("@~/d.md @a", false).into_iter().map(|d| d.path).collect();
        assert_eq!(gemini, ["a"]);
    }

    #[test]
    fn code_regions_cover_spans_and_fences() {
        let text = "a `@x` b\n```\n@y\n```\n@z";
        let regions = code_regions(text);
        let inside = |needle: &str| {
            let at = text.find(needle).expect("needle");
            in_code(&regions, at)
        };
        assert!(inside("@x"));
        assert!(inside("@y"));
        assert!(!inside("@z"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Directives and code regions of any text are in bounds, on character boundaries, and
        /// a directive's path is exactly the text after its `@`.
        #[test]
        fn directives_and_code_regions_stay_inside_the_text(
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["@", "a.md", " ", "\n", "`", "```", "é", "~/", "./", "@@", "日本"]),
                0..40,
            ),
        ) {
            let text = parts.concat();
            for d in directives(&text, true) {
                proptest::prop_assert!(d.start < d.end && d.end <= text.len());
                proptest::prop_assert!(text.is_char_boundary(d.start) && text.is_char_boundary(d.end));
                proptest::prop_assert_eq!(&text[d.start + 1..d.end], d.path.as_str());
            }
            for (s, e) in code_regions(&text) {
                proptest::prop_assert!(s < e && e <= text.len() && text.is_char_boundary(s) && text.is_char_boundary(e));
            }
        }
    }

    #[test]
    fn resolve_folds_dots_lexically() {
        assert_eq!(resolve(Path::new("/a/b"), "../c/./d.md"), PathBuf::from("/a/c/d.md"));
        assert_eq!(resolve(Path::new("/a"), "/x/../y"), PathBuf::from("/y"));
    }

    #[test]
    fn a_mention_that_names_no_file_is_no_file_of_either_agents_view() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        fs::create_dir_all(root.join(".git")).expect("git");
        fs::write(root.join("a.md"), "A").expect("write");
        let top = root.join("CLAUDE.md");
        let text = "Thanks to @neongreen, see @a.md and @missing.md";
        let claude = ClaudeImports {
            home: None,
            boundary: Some(&root),
            label: None,
            role: crate::chain::model::view::Role::default(),
            steps: std::cell::Cell::new(0),
            missing: Default::default(),
        };
        let found = claude.resolve(text, &root, &top, 0, &mut Vec::new());
        let files: Vec<(PathBuf, Status)> = found.iter().map(|(f, _)| (f.path.clone(), f.status)).collect();
        assert_eq!(files, [(root.join("a.md"), Status::Loaded)]);
        // The mention that looks like a file is a mistake to say; the handle is not.
        let missing = Missing { importer: top.clone(), mention: "missing.md".into(), looked: root.join("missing.md") };
        assert_eq!(claude.missing.take(), std::slice::from_ref(&missing));
        // Started below the file's folder, the one import that names a file is outside.
        fs::create_dir_all(root.join("pkg")).expect("pkg");
        let below = ClaudeImports { boundary: Some(&root.join("pkg")), missing: Default::default(), ..claude };
        let found = below.resolve(text, &root, &top, 0, &mut Vec::new());
        let files: Vec<(PathBuf, Status)> = found.iter().map(|(f, _)| (f.path.clone(), f.status)).collect();
        assert_eq!(files, [(root.join("a.md"), Status::Outside)]);
        // Gemini writes each failure into the text, and lists only the file it loads.
        let mut files = Vec::new();
        let mut work = Work::default();
        let out = gemini_expand(text, &root, &root.join("GEMINI.md"), &[], 0, &mut files, &mut work);
        assert!(out.as_deref().unwrap_or_default().contains("<!-- Import failed: neongreen, - ENOENT"), "{out:?}");
        let files: Vec<(PathBuf, Status)> = files.iter().map(|f| (f.path.clone(), f.status)).collect();
        assert_eq!(files, [(root.join("a.md"), Status::Loaded)]);
        assert_eq!(work.missing, [Missing { importer: root.join("GEMINI.md"), ..missing }]);
        for (mention, file) in
            [("docs/x", true), ("a.MDC", true), ("a.md,", true), ("neongreen,", false), ("v1.2", false), (".md", false)]
        {
            assert_eq!(looks_like_file(mention), file, "{mention}");
        }
    }

    #[test]
    fn gemini_cuts_cycles_and_refuses_paths_outside_the_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        fs::create_dir_all(root.join(".git")).expect("git");
        fs::write(root.join("a.md"), "A @./b.md").expect("write");
        fs::write(root.join("b.md"), "B @./a.md").expect("write");
        fs::write(dir.path().join("secret.md"), "S").expect("write");
        let top = root.join("GEMINI.md");
        let mut files = Vec::new();
        let text = gemini_expand("@./a.md @../secret.md", &root, &top, &[], 0, &mut files, &mut Work::default());
        assert_eq!(
            text.as_deref().unwrap_or_default(),
            "<!-- Imported from: ./a.md -->\nA <!-- Imported from: ./b.md -->\nB <!-- File already processed: ./a.md -->\n<!-- End of import from: ./b.md -->\n<!-- End of import from: ./a.md --> <!-- Import failed: ../secret.md - Path traversal attempt -->"
        );
        let statuses: Vec<Status> = files.iter().map(|f| f.status).collect();
        assert_eq!(statuses, [Status::Loaded, Status::Loaded, Status::Cycle, Status::Outside]);
    }
}
