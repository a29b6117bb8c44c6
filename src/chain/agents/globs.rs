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
    /// The patterns in lower case, case-sensitive, in sets of at most [`SET_GLOBS`], and the
    /// index of each among all.
    lower: Vec<globset::GlobSet>,
    lower_ids: Vec<usize>,
    /// The other patterns, ignoring case, and their indexes.
    rest: Vec<globset::GlobSet>,
    rest_ids: Vec<usize>,
}

/// The indexes, in the order of `sets` and of each set's globs, of the globs of `sets` (made by
/// [`chunked_sets`]) that match `path`, into `found`; `scratch` is room for one set's hits.
fn chunked_matches(sets: &[globset::GlobSet], path: &str, found: &mut Vec<usize>, scratch: &mut Vec<usize>) {
    // (The usual case, one set: its hits straight into `found`, nothing allocated per path.)
    if let [set] = sets {
        set.matches_into(path, found);
        return;
    }
    found.clear();
    for (n, set) in sets.iter().enumerate() {
        set.matches_into(path, scratch);
        found.extend(scratch.iter().map(|&h| n * SET_GLOBS + h));
    }
}

/// The most globs one automaton holds. `globset` joins every glob of one shape (those ending in
/// `*.rs`, say) into one regular expression; a thousand rules of 100 such globs made one of
/// 100,000 alternatives, whose automaton took 37 s and 3.5 GB to build. Sets of this size keep
/// each automaton small, and a repository's usual few hundred globs in one.
const SET_GLOBS: usize = 1_000;

/// `globs` as sets of at most [`SET_GLOBS`]; `None` when one cannot be built.
fn chunked_sets(globs: Vec<globset::Glob>) -> Option<Vec<globset::GlobSet>> {
    if globs.is_empty() {
        return Some(vec![globset::GlobSet::empty()]);
    }
    globs
        .chunks(SET_GLOBS)
        .map(|chunk| {
            let mut b = globset::GlobSetBuilder::new();
            for g in chunk {
                b.add(g.clone());
            }
            b.build().ok()
        })
        .collect()
}

thread_local! {
    /// A path in ASCII lower case, and the hits of one set: [`RuleSet::matches_into`]'s own,
    /// per thread, so that sets shared by the threads of a check allocate nothing per path.
    static SCRATCH: RefCell<(String, Vec<usize>)> = const { RefCell::new((String::new(), Vec::new())) };
}

impl FoldedSet {
    /// `globs` ignore case; `exact` builds a pattern's glob that does not. `None` when a set
    /// cannot be built.
    pub fn new(globs: &[globset::Glob], exact: impl Fn(&str) -> Result<globset::Glob, globset::Error>) -> Option<Self> {
        let (mut lower, mut rest) = (Vec::new(), Vec::new());
        let (mut lower_ids, mut rest_ids) = (Vec::new(), Vec::new());
        for (i, glob) in globs.iter().enumerate() {
            let pattern = glob.glob();
            let folded =
                (!pattern.contains('[')).then(|| exact(&one_automaton(&pattern.to_ascii_lowercase())).ok()).flatten();
            match folded {
                Some(g) => {
                    lower.push(g);
                    lower_ids.push(i);
                }
                None => {
                    rest.push(glob.clone());
                    rest_ids.push(i);
                }
            }
        }
        Some(Self { lower: chunked_sets(lower)?, lower_ids, rest: chunked_sets(rest)?, rest_ids })
    }

    /// The indexes of the globs that match `path` (`lowered` in ASCII lower case), in
    /// ascending order, into `hits`; `found` is room for one set's hits.
    fn matches_into(&self, path: &str, lowered: &str, hits: &mut Vec<usize>, found: &mut Vec<usize>) {
        hits.clear();
        let mut scratch = Vec::new();
        chunked_matches(&self.lower, lowered, found, &mut scratch);
        hits.extend(found.iter().map(|&h| self.lower_ids[h]));
        if !self.rest_ids.is_empty() {
            chunked_matches(&self.rest, path, found, &mut scratch);
            hits.extend(found.iter().map(|&h| self.rest_ids[h]));
            hits.sort_unstable();
        }
    }
}

/// Globs matched as one [`FoldedSet`] matches them, but those of the shape `**/name/rest` (a
/// literal folder name) matched by their `rest` alone against what follows each folder of that
/// name in the path. One automaton for hundreds of such patterns (a Cursor rule of 100 globs in
/// the shapes people write; three such rules) tracked every folder name it had met on the way,
/// and building its states was the larger part of a `check --profile cursor`; the `rest`s
/// (`*.go`, `**/*.json`) are few shapes, cheap to match. A path's folder names are looked up
/// instead, and the `rest`s matched after those that name a pattern's folder.
pub(super) struct RuleSet {
    /// The other globs, and the index of each among all.
    rest: FoldedSet,
    rest_ids: Vec<usize>,
    /// The `rest` of each glob of the shape, in lower case, matched as written.
    after: Vec<globset::GlobSet>,
    /// For each of them, its folder (an index into `folders`) and its index among all.
    after_owners: Vec<(usize, usize)>,
    /// The folder names, in ASCII lower case, and their index.
    folders: std::collections::HashMap<String, usize, foldhash::fast::RandomState>,
}

/// The folder a glob needs, and what must follow it: `name` and `rest` of `**/name/rest`, the
/// name a literal (letters, digits, `-`, `_`, `.`, not only dots), both in ASCII lower case as
/// [`FoldedSet`] matches; `None` when `rest` holds a `[class]` (which lower case changes).
fn folder_and_rest(pattern: &str) -> Option<(String, String)> {
    let (name, after) = pattern.strip_prefix("**/")?.split_once('/')?;
    let literal = name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    (literal && !after.is_empty() && !after.contains('[') && name.bytes().any(|b| b != b'.'))
        .then(|| (name.to_ascii_lowercase(), after.to_ascii_lowercase()))
}

impl RuleSet {
    /// As [`FoldedSet::new`]; a glob whose folder is one of `common` (in ASCII lower case: the
    /// repository's top folders, which most paths have) stays with the others, where it costs
    /// nothing more than before.
    pub fn new(
        globs: &[globset::Glob],
        exact: impl Fn(&str) -> Result<globset::Glob, globset::Error>,
        common: &std::collections::HashSet<String>,
    ) -> Option<Self> {
        let (mut rest, mut rest_ids) = (Vec::new(), Vec::new());
        let mut after = Vec::new();
        let mut after_owners = Vec::new();
        let mut folders: std::collections::HashMap<String, usize, foldhash::fast::RandomState> =
            std::collections::HashMap::default();
        for (i, glob) in globs.iter().enumerate() {
            let split = folder_and_rest(glob.glob()).filter(|(name, _)| !common.contains(name));
            if let Some((name, tail)) = split
                && let Ok(tail) = exact(&one_automaton(&tail))
            {
                let next = folders.len();
                let folder = *folders.entry(name).or_insert(next);
                after.push(tail);
                after_owners.push((folder, i));
                continue;
            }
            rest.push(glob.clone());
            rest_ids.push(i);
        }
        Some(Self {
            rest: FoldedSet::new(&rest, &exact)?,
            rest_ids,
            after: chunked_sets(after)?,
            after_owners,
            folders,
        })
    }

    /// The indexes of the globs that match `path`, in ascending order, into `hits`.
    pub fn matches_into(&self, path: &str, hits: &mut Vec<usize>) {
        SCRATCH.with_borrow_mut(|(lower, found)| {
            lower.clear();
            lower.push_str(path);
            lower.make_ascii_lowercase();
            self.matches_lowered(path, lower, hits, found);
        });
    }

    fn matches_lowered(&self, path: &str, lower: &str, hits: &mut Vec<usize>, found: &mut Vec<usize>) {
        self.rest.matches_into(path, lower, hits, found);
        for h in hits.iter_mut() {
            *h = self.rest_ids[*h];
        }
        if self.folders.is_empty() {
            return;
        }
        let before = hits.len();
        let mut scratch = Vec::new();
        // Each folder of the path (a name followed by a `/`), and what follows it.
        let mut start = 0;
        for end in memchr::memchr_iter(b'/', lower.as_bytes()) {
            if let Some(&folder) = self.folders.get(&lower[start..end]) {
                chunked_matches(&self.after, &lower[end + 1..], found, &mut scratch);
                hits.extend(found.iter().map(|&h| self.after_owners[h]).filter(|(f, _)| *f == folder).map(|(_, i)| i));
            }
            start = end + 1;
        }
        if hits.len() != before {
            hits.sort_unstable();
            hits.dedup();
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

    /// The rule set answers, for every path, what one set of the same globs ignoring case
    /// answers: patterns with a wildcard before their extension, classes, escapes, braces,
    /// letters that are not ASCII (which `globset` matches as written, a Kelvin sign `K` too),
    /// and patterns that need a folder of some name (matched by what follows it), with that
    /// name among the common ones or not.
    #[test]
    fn a_rule_set_matches_what_the_globs_ignoring_case_match() {
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
            "**/Src/*.rs",
            "**/src/**/*.{Ts,go}",
            "**/lib/**",
            "**/k/[x]y",
            "**/deep/a/*.md",
            "**/../x",
            "**/a b/*.md",
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
            "src/main.rs",
            "x/SRC/main.RS",
            "src/src/y/z.go",
            "a/src",
            "src",
            "lib",
            "LIB/x",
            "\u{212A}/xy",
            "k/XY",
            "/abs/deep/a/b.md",
            "deep/a/deep/a/c.MD",
            "deep/A/x/c.md",
            "q/a b/n.md",
        ];
        let sets = [super::super::walk::vscode_glob, |g: &str, fold: bool| Line::glob(g, fold)];
        for build in sets {
            let globs: Vec<globset::Glob> = patterns.iter().map(|p| build(p, true).expect("glob")).collect();
            let mut plain = globset::GlobSetBuilder::new();
            for g in &globs {
                plain.add(g.clone());
            }
            let plain = plain.build().expect("set");
            let common: [std::collections::HashSet<String>; 2] = [Default::default(), ["src".to_string()].into()];
            for common in &common {
                let set = RuleSet::new(&globs, |g| build(g, false), common).expect("set");
                let (mut want, mut got) = (Vec::new(), Vec::new());
                for path in paths {
                    plain.matches_into(path, &mut want);
                    set.matches_into(path, &mut got);
                    assert_eq!(got, want, "{path:?} (common: {common:?})");
                }
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
