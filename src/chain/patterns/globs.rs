//! Rule patterns matched against many paths at once: a gitignore line as the `ignore` package
//! reads it, and a set of globs that ignore letter case matched in one pass.

use std::cell::RefCell;

/// A gitignore line as the `ignore` package reads it (see gitignore(5)): `#` opens a comment, `!`
/// un-matches, a leading `/` anchors it to the rule's directory, a trailing `/` matches
/// directories only, a pattern without an inner `/` matches at any depth, a trailing `/**`
/// matches what is inside a directory, not the directory; letter case ignored.
#[derive(Clone)]
pub(crate) struct Line {
    /// The line's pattern as a glob (`**/` and `/*` added), which the `ignore` package parses:
    /// kept as text, built into a set's automaton once ([`RuleSet::new`]).
    pub pattern: String,
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
        // A line the package refuses is no line.
        Self::glob(&pattern, true).ok()?;
        Some(Self { pattern, dir_only, whitelist })
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
    // (`*.ts` alone, where `*` does not match `/`, is no extension to `globset`: it would run
    // an expression of its own on every `.ts` file.)
    let ext_only = |p: &str| {
        p.strip_prefix("**/")
            .and_then(|p| p.strip_prefix("*."))
            .is_some_and(|e| !e.bytes().any(|b| wild(&b) || b == b'/'))
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
pub(crate) struct FoldedSet {
    /// The patterns in lower case, case-sensitive, in sets of at most [`SET_GLOBS`], and the
    /// index of each among all.
    lower: Vec<globset::GlobSet>,
    lower_ids: Vec<Vec<usize>>,
    /// The other patterns, ignoring case, and their indexes.
    rest: Vec<globset::GlobSet>,
    rest_ids: Vec<Vec<usize>>,
}

/// The indexes, in the order of `sets` and of each set's globs, of the globs of `sets` (made by
/// [`Chunks`]) that match `path`, into `found`; `scratch` is room for one set's hits.
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

/// Sets of at most [`SET_GLOBS`] globs, each built as soon as it is full: no more than one
/// set's globs are held at a time (a thousand rules of 100 globs held 100,000 of them, a
/// kilobyte of tokens each, twice over).
struct Chunks {
    sets: Vec<globset::GlobSet>,
    builder: globset::GlobSetBuilder,
    pending: usize,
    failed: bool,
}

impl Chunks {
    fn new() -> Self {
        Self { sets: Vec::new(), builder: globset::GlobSetBuilder::new(), pending: 0, failed: false }
    }

    fn add(&mut self, glob: globset::Glob) {
        self.builder.add(glob);
        self.pending += 1;
        if self.pending == SET_GLOBS {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let full = std::mem::replace(&mut self.builder, globset::GlobSetBuilder::new());
        self.pending = 0;
        match full.build() {
            Ok(set) => self.sets.push(set),
            Err(_) => self.failed = true,
        }
    }

    /// The sets (one empty set for no glob); `None` when one could not be built.
    fn finish(mut self) -> Option<Vec<globset::GlobSet>> {
        if self.pending > 0 || self.sets.is_empty() {
            self.flush();
        }
        (!self.failed).then_some(self.sets)
    }
}

/// Globs in [`Chunks`], each pattern once, with the owners that share it: rules repeat the same
/// few shapes (`**/*.ts`, `*.go`), and a thousand copies of one pattern made a thousand
/// alternatives of one automaton, or a thousand automata.
struct Deduped<O> {
    chunks: Chunks,
    index: std::collections::HashMap<String, usize, foldhash::fast::RandomState>,
    owners: Vec<Vec<O>>,
}

impl<O> Deduped<O> {
    fn new() -> Self {
        Self { chunks: Chunks::new(), index: Default::default(), owners: Vec::new() }
    }

    /// Adds `owner` to `pattern`, built by `build` the first time; whether it could be built.
    fn add(&mut self, pattern: String, owner: O, build: impl FnOnce(&str) -> Option<globset::Glob>) -> bool {
        if let Some(&at) = self.index.get(&pattern) {
            self.owners[at].push(owner);
            return true;
        }
        let Some(glob) = build(&pattern) else { return false };
        self.chunks.add(glob);
        self.index.insert(pattern, self.owners.len());
        self.owners.push(vec![owner]);
        true
    }

    /// The sets and, for each of their globs, its owners.
    fn finish(self) -> Option<(Vec<globset::GlobSet>, Vec<Vec<O>>)> {
        Some((self.chunks.finish()?, self.owners))
    }
}

thread_local! {
    /// A path in ASCII lower case, and the hits of one set: [`RuleSet::matches_into`]'s own,
    /// per thread, so that sets shared by the threads of a check allocate nothing per path.
    static SCRATCH: RefCell<(String, Vec<usize>)> = const { RefCell::new((String::new(), Vec::new())) };
}

/// Builds a pattern's glob, ignoring letter case (`true`) or not.
pub(crate) type Build<'a> = &'a dyn Fn(&str, bool) -> Result<globset::Glob, globset::Error>;

impl FoldedSet {
    /// The `patterns` (each with its index among all), ignoring case, as `build` builds them.
    /// `None` when a set cannot be built; a pattern that does not build matches nothing.
    fn new<'p>(patterns: impl Iterator<Item = (usize, &'p str)>, build: Build) -> Option<Self> {
        let (mut lower, mut rest) = (Deduped::new(), Deduped::new());
        for (i, pattern) in patterns {
            let folded = !pattern.contains('[')
                && lower.add(one_automaton(&pattern.to_ascii_lowercase()), i, |p| build(p, false).ok());
            if !folded {
                rest.add(pattern.to_string(), i, |p| build(p, true).ok());
            }
        }
        let ((lower, lower_ids), (rest, rest_ids)) = (lower.finish()?, rest.finish()?);
        Some(Self { lower, lower_ids, rest, rest_ids })
    }

    /// The indexes of the globs that match `path` (`lowered` in ASCII lower case), in
    /// ascending order, into `hits`; `found` is room for one set's hits.
    fn matches_into(&self, path: &str, lowered: &str, hits: &mut Vec<usize>, found: &mut Vec<usize>) {
        hits.clear();
        let mut scratch = Vec::new();
        chunked_matches(&self.lower, lowered, found, &mut scratch);
        hits.extend(found.iter().flat_map(|&h| self.lower_ids[h].iter().copied()));
        if !self.rest_ids.is_empty() {
            chunked_matches(&self.rest, path, found, &mut scratch);
            hits.extend(found.iter().flat_map(|&h| self.rest_ids[h].iter().copied()));
        }
        hits.sort_unstable();
    }
}

/// Globs matched as one [`FoldedSet`] matches them, but those that begin with literal folder
/// names (a *lead*: `src/api/**/*.ts` from the path's start, `**/node/lib/*.js` at any folder)
/// matched by their `rest` alone against what follows the lead in the path. One automaton for
/// hundreds of such patterns (a Cursor rule of 100 globs in the shapes people write) tracked
/// every folder name it had met on the way, and a thousand rules of 100 distinct `src/…/**/*.rs`
/// globs made automata of 300 MB; the `rest`s (`*.go`, `**/*.json`) are few shapes, cheap to
/// match, and each is built once. A path's folders are looked up instead, and the `rest`s
/// matched after those that are a pattern's lead.
pub(crate) struct RuleSet {
    /// The other globs, and the index of each among all.
    rest: FoldedSet,
    rest_ids: Vec<usize>,
    /// The `rest` of each glob with a lead, in lower case, matched as written.
    after: Vec<globset::GlobSet>,
    /// For each of them, the globs it is the `rest` of: each one's lead (an index into the
    /// leads) and its index among all.
    after_owners: Vec<Vec<(usize, usize)>>,
    /// The leads found from the path's start, and those found at any folder.
    anchored: Leads,
    anywhere: Leads,
}

type Map<V> = std::collections::HashMap<String, V, foldhash::fast::RandomState>;

/// Leads in ASCII lower case (folder names joined by `/`), each with its index; and every
/// shorter lead on the way to one (`src`, `src/api` of `src/api/v1`), where a search goes on.
#[derive(Default)]
struct Leads {
    ids: Map<usize>,
    on_the_way: Map<()>,
}

impl Leads {
    fn insert(&mut self, lead: &str, id: usize) -> usize {
        for (end, _) in lead.match_indices('/') {
            self.on_the_way.insert(lead[..end].to_string(), ());
        }
        *self.ids.entry(lead.to_string()).or_insert(id)
    }

    fn get(&self, lead: &str) -> Option<usize> {
        self.ids.get(lead).copied()
    }

    /// Each lead that `lower` holds from byte `start` on (followed by a `/`): its index and
    /// where its `/` is, to `each`.
    fn each_from(&self, lower: &str, start: usize, mut each: impl FnMut(usize, usize)) {
        for end in memchr::memchr_iter(b'/', &lower.as_bytes()[start..]).map(|e| start + e) {
            let key = &lower[start..end];
            if let Some(id) = self.get(key) {
                each(id, end);
            }
            if !self.on_the_way.contains_key(key) {
                break;
            }
        }
    }
}

/// The lead a glob needs and what must follow it (see [`RuleSet`]): whether the lead is taken
/// from the path's start (a pattern without `**/` in front) or at any folder (`**/lead/rest`),
/// the lead (literal folder names: letters, digits, `-`, `_`, `.`, not only dots) and the
/// `rest`, both in ASCII lower case as [`FoldedSet`] matches. `None` without a lead, when `rest`
/// holds a `[class]` (which lower case changes), for a pattern from the file system's root, and
/// for a lead of one of the `common` folders (which most paths have: its `rest` would be matched
/// for nearly every path, as the other globs are anyway).
fn lead_and_rest(pattern: &str, common: &std::collections::HashSet<String>) -> Option<(bool, String, String)> {
    let (anchored, body) = match pattern.strip_prefix("**/") {
        Some(body) => (false, body),
        None if !pattern.starts_with('/') => (true, pattern),
        None => return None,
    };
    let literal = |c: &str| {
        c.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')) && c.bytes().any(|b| b != b'.')
    };
    let parts: Vec<&str> = body.split('/').collect();
    let n = parts[..parts.len() - 1].iter().take_while(|c| literal(c)).count();
    let (lead, rest) = (parts[..n].join("/").to_ascii_lowercase(), parts[n..].join("/").to_ascii_lowercase());
    let one_common = n == 1 && common.contains(&lead);
    (n > 0 && !rest.is_empty() && !rest.contains('[') && !one_common).then_some((anchored, lead, rest))
}

impl RuleSet {
    /// The `patterns`, ignoring letter case, as `build` builds them (hits are indexes into
    /// `patterns`; one that does not build matches nothing). `common`: the repository's top
    /// folders, in ASCII lower case (see [`lead_and_rest`]).
    pub fn new<S: AsRef<str>>(
        patterns: &[S],
        build: Build,
        common: &std::collections::HashSet<String>,
    ) -> Option<Self> {
        let mut rest_ids = Vec::new();
        let mut after = Deduped::new();
        let (mut anchored, mut anywhere) = (Leads::default(), Leads::default());
        let mut leads = 0;
        for (i, pattern) in patterns.iter().enumerate() {
            if let Some((from_start, lead, tail)) = lead_and_rest(pattern.as_ref(), common) {
                let leads_of = if from_start { &mut anchored } else { &mut anywhere };
                let id = leads_of.get(&lead).unwrap_or(leads);
                if after.add(one_automaton(&tail), (id, i), |p| build(p, false).ok()) {
                    if leads_of.insert(&lead, id) == leads {
                        leads += 1;
                    }
                    continue;
                }
            }
            rest_ids.push(i);
        }
        let rest = rest_ids.iter().enumerate().map(|(n, &i)| (n, patterns[i].as_ref()));
        let (after, after_owners) = after.finish()?;
        Some(Self { rest: FoldedSet::new(rest, build)?, rest_ids, after, after_owners, anchored, anywhere })
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
        if self.anchored.ids.is_empty() && self.anywhere.ids.is_empty() {
            return;
        }
        let before = hits.len();
        let mut scratch = Vec::new();
        // What follows a lead of the path (`end`: its `/`), matched by the `rest`s.
        let mut after_lead = |lead: usize, end: usize| {
            chunked_matches(&self.after, &lower[end + 1..], found, &mut scratch);
            let owners = found.iter().flat_map(|&h| self.after_owners[h].iter());
            hits.extend(owners.filter(|(l, _)| *l == lead).map(|(_, i)| *i));
        };
        if !self.anchored.ids.is_empty() {
            self.anchored.each_from(lower, 0, &mut after_lead);
        }
        if !self.anywhere.ids.is_empty() {
            // From each folder of the path.
            let starts = std::iter::once(0).chain(memchr::memchr_iter(b'/', lower.as_bytes()).map(|e| e + 1));
            for start in starts {
                self.anywhere.each_from(lower, start, &mut after_lead);
            }
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
            "Src/Api/**/*.Ts",
            "src/api/v1/*.go",
            "**/Node/Lib/*.js",
            "docs/Guide/**/*",
            "a/b",
            "**/x/y/**/z.md",
            "lib/deep/a/*.md",
            "src/api/v1/*.go",
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
            "src/api/x.ts",
            "SRC/API/v1/y.go",
            "src/api/v1/w/y.go",
            "x/src/api/q.ts",
            "a/node/lib/q.js",
            "node/lib/q.JS",
            "node/lib/x/q.js",
            "docs/guide/x/y",
            "docs/guide",
            "a/b",
            "x/a/b",
            "q/x/y/z.md",
            "x/y/z.md",
            "x/y/x/y/w/z.md",
            "lib/deep/a/b.md",
        ];
        let sets = [crate::chain::patterns::rule::vscode_glob, |g: &str, fold: bool| Line::glob(g, fold)];
        for build in sets {
            let globs: Vec<globset::Glob> = patterns.iter().map(|p| build(p, true).expect("glob")).collect();
            let mut plain = globset::GlobSetBuilder::new();
            for g in &globs {
                plain.add(g.clone());
            }
            let plain = plain.build().expect("set");
            let common: [std::collections::HashSet<String>; 2] = [Default::default(), ["src".to_string()].into()];
            for common in &common {
                let set = RuleSet::new(&patterns, &build, common).expect("set");
                // Leads of both kinds, several folders long, are taken apart.
                assert!(set.anchored.get("src/api/v1").is_some() && set.anywhere.get("node/lib").is_some());
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
