//! Rule patterns matched against many paths at once: a gitignore line as the `ignore` package
//! reads it, and a set of globs that ignore letter case matched in one pass.

use std::cell::RefCell;

/// A gitignore line as the `ignore` package reads it (see gitignore(5)): `#` opens a comment, `!`
/// un-matches, a leading `/` anchors it to the rule's directory, a trailing `/` matches
/// directories only, a pattern without an inner `/` matches at any depth, a trailing `/**`
/// matches what is inside a directory, not the directory; letter case ignored.
#[derive(Clone)]
pub(super) struct Line {
    pub glob: globset::Glob,
    pub dir_only: bool,
    pub whitelist: bool,
}

impl Line {
    pub fn parse(line: &str) -> Option<Self> {
        if line.starts_with('#') {
            return None;
        }
        let mut g = trim_unescaped_end(line);
        if g.is_empty() {
            return None;
        }
        let whitelist = g.starts_with('!');
        // `!` un-matches; a backslash keeps a leading `!` or `#` literal.
        if whitelist || g.starts_with("\\!") || g.starts_with("\\#") {
            g = &g[1..];
        }
        let anchored = g.starts_with('/');
        if anchored {
            g = &g[1..];
        }
        let dir_only = g.ends_with('/');
        if dir_only {
            g = &g[..g.len() - 1];
        }
        if g.is_empty() {
            return None;
        }
        let mut pattern = String::new();
        if !anchored && !g.contains('/') && !g.starts_with("**") {
            pattern.push_str("**/");
        }
        pattern.push_str(g);
        if pattern.ends_with("/**") {
            pattern.push_str("/*");
        }
        let glob = Self::glob(&pattern, true).ok()?;
        Some(Self { glob, dir_only, whitelist })
    }

    /// The glob of a line's pattern (`**/` and `/*` added), letter case ignored or not.
    pub fn glob(pattern: &str, fold: bool) -> Result<globset::Glob, globset::Error> {
        globset::GlobBuilder::new(pattern).literal_separator(true).case_insensitive(fold).backslash_escape(true).build()
    }
}

/// `pattern` (in lower case, without a `[class]`) so that `globset` matches it with the set's
/// one automaton when it would else run the pattern's own expression on every file of its
/// extension (a pattern such as `src/**/*.ts`, with a wildcard before a literal `.ts` ending; a
/// rule of 100 such patterns ran dozens of expressions per file): the last letter as a class of
/// itself, `src/**/*.t[s]`, which matches the same paths. Patterns `globset` matches by a
/// literal, a prefix or an extension alone are kept.
fn one_automaton(pattern: &str) -> String {
    let bytes = pattern.as_bytes();
    let wild = |b: &u8| matches!(b, b'*' | b'?' | b'{' | b'\\');
    let ext_only = |p: &str| {
        p.strip_prefix("**/").unwrap_or(p).strip_prefix("*.").is_some_and(|e| !e.bytes().any(|b| wild(&b) || b == b'/'))
    };
    let basename = pattern.strip_prefix("**/").is_some_and(|b| !b.bytes().any(|c| wild(&c) || c == b'/'));
    match bytes {
        [.., before, last]
            if last.is_ascii_alphanumeric()
                && *before != b'\\'
                && bytes.iter().any(wild)
                && !ext_only(pattern)
                && !basename =>
        {
            format!("{}[{}]", &pattern[..pattern.len() - 1], *last as char)
        }
        _ => pattern.to_string(),
    }
}

/// Globs matched without regard to letter case, as one set, quickly. `globset` matches a glob
/// that ignores case with its regular expression only, never by its literal, extension or
/// prefix: 300 rule patterns made one automaton whose states were a fifth of a `check`. Its case
/// is ASCII's (a `K` or an `Ü` in a path is matched as written), so a pattern without a
/// `[class]` is matched in lower case against the path in ASCII lower case, which is the same
/// answer (`*`, `?`, `**` and `{a,b}` do not care about case, and `/` has none). Patterns with
/// a class (`[A-z]` is not `[a-z]` in lower case) are matched as before.
pub(super) struct FoldedSet {
    /// The patterns in lower case, case-sensitive, and the index of each among all.
    lower: globset::GlobSet,
    lower_ids: Vec<usize>,
    /// The other patterns, ignoring case, and their indexes.
    rest: globset::GlobSet,
    rest_ids: Vec<usize>,
    /// The path in lower case, and the hits of one of the sets.
    scratch: RefCell<(String, Vec<usize>)>,
}

impl FoldedSet {
    /// `globs` ignore case; `exact` builds a pattern's glob that does not. `None` when a set
    /// cannot be built.
    pub fn new(globs: &[globset::Glob], exact: impl Fn(&str) -> Result<globset::Glob, globset::Error>) -> Option<Self> {
        let (mut lower, mut rest) = (globset::GlobSetBuilder::new(), globset::GlobSetBuilder::new());
        let (mut lower_ids, mut rest_ids) = (Vec::new(), Vec::new());
        for (i, glob) in globs.iter().enumerate() {
            let pattern = glob.glob();
            let folded =
                (!pattern.contains('[')).then(|| exact(&one_automaton(&pattern.to_ascii_lowercase())).ok()).flatten();
            match folded {
                Some(g) => {
                    lower.add(g);
                    lower_ids.push(i);
                }
                None => {
                    rest.add(glob.clone());
                    rest_ids.push(i);
                }
            }
        }
        Some(Self {
            lower: lower.build().ok()?,
            lower_ids,
            rest: rest.build().ok()?,
            rest_ids,
            scratch: RefCell::new((String::new(), Vec::new())),
        })
    }

    /// The indexes of the globs that match `path`, in ascending order, into `hits`.
    pub fn matches_into(&self, path: &str, hits: &mut Vec<usize>) {
        hits.clear();
        let mut scratch = self.scratch.borrow_mut();
        let (lowered, found) = &mut *scratch;
        lowered.clear();
        lowered.push_str(path);
        lowered.make_ascii_lowercase();
        self.lower.matches_into(lowered.as_str(), found);
        hits.extend(found.iter().map(|&h| self.lower_ids[h]));
        if !self.rest_ids.is_empty() {
            self.rest.matches_into(path, found);
            hits.extend(found.iter().map(|&h| self.rest_ids[h]));
            hits.sort_unstable();
        }
    }
}

/// `line` without its trailing spaces, but for one escaped with a backslash.
fn trim_unescaped_end(line: &str) -> &str {
    let trimmed = line.trim_end();
    if trimmed.ends_with('\\') && trimmed.len() < line.len() { &line[..trimmed.len() + 1] } else { trimmed }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The folded set answers, for every path, what one set of the same globs ignoring case
    /// answers: patterns with a wildcard before their extension, classes, escapes, braces, and
    /// letters that are not ASCII (which `globset` matches as written, a Kelvin sign `K` too).
    #[test]
    fn a_folded_set_matches_what_the_globs_ignoring_case_match() {
        let patterns = [
            "src/**/*.TS",
            "**/*.Md",
            "Docs/**",
            "**/READ?E.md",
            "[a-c]/build",
            "foo\\a",
            "**/*.{Rs,go}",
            "**/ÜNÏ/**",
            "**/k*",
            "**/Makefile",
            "lib/*.Py",
            "**/x.json",
        ];
        let paths = [
            "SRC/x/y.ts",
            "src/y.Ts",
            "docs/a.md",
            "DOCS/deep/b.txt",
            "README.md",
            "b/build",
            "B/BUILD",
            "fooa",
            "FOOA",
            "foo\\a",
            "m.rS",
            "Go/x.GO",
            "a/ünï/x",
            "a/ÜNÏ/x",
            "\u{212A}ey",
            "Key",
            "sub/makefile",
            "lib/a.py",
            "lib/sub/a.py",
            "a/X.JSON",
        ];
        let sets = [super::super::walk::vscode_glob, |g: &str, fold: bool| Line::glob(g, fold)];
        for build in sets {
            let globs: Vec<globset::Glob> = patterns.iter().map(|p| build(p, true).expect("glob")).collect();
            let mut plain = globset::GlobSetBuilder::new();
            for g in &globs {
                plain.add(g.clone());
            }
            let plain = plain.build().expect("set");
            let folded = FoldedSet::new(&globs, |g| build(g, false)).expect("set");
            let (mut want, mut got) = (Vec::new(), Vec::new());
            for path in paths {
                plain.matches_into(path, &mut want);
                folded.matches_into(path, &mut got);
                assert_eq!(got, want, "{path:?}");
            }
        }
        // What the set rests on: without the folding, `globset` matches these by their regular
        // expressions, and `src/**/*.t[s]` is the same pattern as `src/**/*.ts`.
        assert_eq!(one_automaton("src/**/*.ts"), "src/**/*.t[s]");
        assert_eq!(one_automaton("**/*.md"), "**/*.md");
        assert_eq!(one_automaton("**/makefile"), "**/makefile");
        assert_eq!(one_automaton("foo\\a"), "foo\\a");
    }
}
