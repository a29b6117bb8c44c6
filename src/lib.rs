//! instructions-lsp: computes, checks and serves the instruction files coding agents read.
//!
//! Data flows one way: disk or buffer -> [`chain`] (pure engine) -> [`session`] (state over
//! time) -> [`lsp`] / [`cli`] (presentation).

pub mod chain;
pub mod cli;
pub mod hook;
pub mod jsonrpc;
pub mod lsp;
pub mod mcp;
pub mod paths;
pub mod session;
pub mod watch;

/// The layering, held by a test: the engine knows no session and no protocol, the session no
/// edge, and no edge another (`main.rs` hands each command to its edge). See
/// `docs/architecture.md`.
#[cfg(test)]
mod layering {
    use std::path::Path;

    /// Every `crate::<module>` path a folder's sources name.
    fn imports(folder: &str) -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(folder);
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(p) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&p) else {
                if let Ok(text) = std::fs::read_to_string(&p) {
                    for (i, line) in text.lines().enumerate() {
                        for protocol in ["tower_lsp", "lsp_types", "rmcp"] {
                            if line.contains(protocol) {
                                out.push((format!("{}:{}", p.display(), i + 1), protocol.to_string()));
                            }
                        }
                        for part in line.split("crate::").skip(1) {
                            let module: String =
                                part.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                            out.push((format!("{}:{}", p.display(), i + 1), module));
                        }
                    }
                }
                continue;
            };
            stack.extend(entries.flatten().map(|e| e.path()));
        }
        out
    }

    /// Every source file of `src/`, with its text.
    fn sources() -> Vec<(std::path::PathBuf, String)> {
        let mut out = Vec::new();
        let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
        while let Some(p) = stack.pop() {
            match std::fs::read_dir(&p) {
                Ok(entries) => stack.extend(entries.flatten().map(|e| e.path())),
                Err(_) => out.extend(std::fs::read_to_string(&p).ok().map(|t| (p, t))),
            }
        }
        out
    }

    /// Files past [`LINES_MAX`] lines, each with the count it may not grow past: what is left to
    /// split (a file leaves this list once split, and may not come back).
    const LONG: &[(&str, usize)] = &[
        ("src/chain/agents/repo.rs", 893),
        ("src/session/diff.rs", 824),
        ("src/lsp/shared.rs", 787),
        ("src/session/mod.rs", 736),
    ];

    /// The most lines a source file holds: past it, a file does more than one thing.
    const LINES_MAX: usize = 700;

    #[test]
    fn no_source_file_grows_past_700_lines() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut long = Vec::new();
        for (p, text) in sources() {
            let rel = p.strip_prefix(root).unwrap_or(&p).to_string_lossy().replace('\\', "/");
            let lines = text.lines().count();
            let allowed = LONG.iter().find(|(f, _)| *f == rel).map_or(LINES_MAX, |(_, n)| *n);
            if lines > allowed {
                long.push(format!("{rel}: {lines} lines (at most {allowed})"));
            }
        }
        assert!(long.is_empty(), "split these by concern: {long:?}");
        for (f, n) in LONG {
            let lines = std::fs::read_to_string(root.join(f)).map_or(0, |t| t.lines().count());
            assert!(lines > LINES_MAX, "{f} has {lines} lines now: take it off LONG");
            assert!(lines >= *n, "{f} shrank to {lines} lines: lower its bound in LONG from {n}");
        }
    }

    /// The module a file of `src/` is (`src/chain/agents/read.rs`: `chain::agents::read`; a
    /// `mod.rs` is its folder's).
    fn module_of(rel: &Path) -> Vec<String> {
        let mut parts: Vec<String> =
            rel.iter().map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
        if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
            parts.pop();
        }
        parts
    }

    /// The modules a file's code names (`use` and paths in the code, its tests left out): each
    /// `crate::…`, `super::…` or `self::…` path resolved to the longest module it names.
    fn modules_named(
        module: &[String],
        text: &str,
        known: &std::collections::BTreeSet<Vec<String>>,
    ) -> Vec<Vec<String>> {
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
        // Comments name paths for the reader (doc links), not for the code.
        let code: String = code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        let code = code.as_str();
        let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
        let mut out = Vec::new();
        let bytes = code.as_bytes();
        for (at, _) in code.match_indices("::") {
            // The start of a path: `crate`, `super` or `self` right before, not part of a longer one.
            let head_start = code[..at].rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            let head = &code[head_start..at];
            if head_start >= 2 && &bytes[head_start - 2..head_start] == b"::" {
                continue;
            }
            let mut base: Vec<String> = match head {
                "crate" => Vec::new(),
                "self" => module.to_vec(),
                "super" => module[..module.len().saturating_sub(1)].to_vec(),
                _ => continue,
            };
            let mut rest = &code[at + 2..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            // A path, or a group of paths (`{a, b::c}`): the first segments of each.
            let items: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or("").split(',').map(str::trim).collect(),
                None => vec![rest],
            };
            for item in items {
                let mut m = base.clone();
                for seg in item.split("::") {
                    let seg = ident(seg.trim_start_matches('{'));
                    let mut next = m.clone();
                    next.push(seg);
                    if !known.contains(&next) {
                        break;
                    }
                    m = next;
                }
                out.push(m);
            }
        }
        out
    }

    /// Files that import each other in a loop: what is left to untangle in the agents' shared
    /// files (a circle may only shrink).
    const CIRCLE_LEFT: &[&str] = &["listing", "read", "repo", "walk"];

    /// No two files of `src/` import each other, directly or through others (read from their
    /// imports, as a reader follows them), but for what [`CIRCLE_LEFT`] names.
    #[test]
    fn no_files_import_each_other_in_a_circle() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let files: Vec<(Vec<String>, String)> = sources()
            .into_iter()
            .filter(|(p, _)| !p.ends_with("main.rs"))
            .map(|(p, text)| (module_of(p.strip_prefix(root.join("src")).unwrap_or(&p)), text))
            .collect();
        let known: std::collections::BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
        let index = |m: &Vec<String>| files.iter().position(|(f, _)| f == m);
        let edges: Vec<std::collections::BTreeSet<usize>> = files
            .iter()
            .map(|(m, text)| {
                modules_named(m, text, &known).iter().filter(|t| *t != m && !t.is_empty()).filter_map(index).collect()
            })
            .collect();
        assert!(edges.iter().map(|e| e.len()).sum::<usize>() > 300, "no imports were read");
        // Each file's reach; two files in one circle reach each other.
        let reach = |from: usize| {
            let mut seen = std::collections::BTreeSet::new();
            let mut stack = vec![from];
            while let Some(f) = stack.pop() {
                for &t in &edges[f] {
                    if seen.insert(t) {
                        stack.push(t);
                    }
                }
            }
            seen
        };
        let reaches: Vec<_> = (0..files.len()).map(reach).collect();
        let mut circles = Vec::new();
        for (a, out) in edges.iter().enumerate() {
            for &b in out {
                if reaches[b].contains(&a) {
                    let name = |i: usize| files[i].0.join("::");
                    let left = |i: usize| {
                        files[i].0.len() == 3
                            && files[i].0[..2] == ["chain", "agents"]
                            && CIRCLE_LEFT.contains(&files[i].0[2].as_str())
                    };
                    if !(left(a) && left(b)) {
                        circles.push(format!("{} imports {}, which leads back to it", name(a), name(b)));
                    }
                }
            }
        }
        assert!(circles.is_empty(), "{}", circles.join("\n"));
    }

    #[test]
    fn no_layer_imports_one_above_it_and_no_edge_another() {
        let rules: &[(&str, &[&str])] = &[
            ("chain", &["session", "lsp", "cli", "mcp", "hook", "watch", "tower_lsp", "lsp_types", "rmcp"]),
            ("session", &["lsp", "cli", "mcp", "hook", "tower_lsp", "lsp_types", "rmcp"]),
            ("cli", &["lsp", "mcp", "hook"]),
            ("lsp", &["cli", "mcp", "hook"]),
            ("mcp", &["cli", "lsp", "hook"]),
            ("hook", &["cli", "lsp", "mcp"]),
        ];
        let mut broken = Vec::new();
        for (folder, forbidden) in rules {
            let found = imports(folder);
            assert!(!found.is_empty() || *folder == "hook", "no source read in src/{folder}");
            for (place, module) in found {
                if forbidden.contains(&module.as_str()) {
                    broken.push(format!("{place}: src/{folder} imports crate::{module}"));
                }
            }
        }
        assert!(broken.is_empty(), "{}", broken.join("\n"));
    }

    /// The sibling modules a file of `src/chain/agents/` names (`super::walk`, `super::{a, b}`,
    /// `crate::chain::agents::load`), with the line of each.
    fn sibling_imports(text: &str) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for prefix in ["super::", "chain::agents::"] {
            for (at, _) in text.match_indices(prefix) {
                let line = text[..at].matches('\n').count() + 1;
                let rest = &text[at + prefix.len()..];
                let ident =
                    |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
                match rest.strip_prefix('{') {
                    // A group: the first name of each item, up to the closing brace (groups may
                    // nest and span lines).
                    Some(group) => {
                        let mut depth = 0;
                        let end = group
                            .char_indices()
                            .find(|&(_, c)| {
                                depth += match c {
                                    '{' => 1,
                                    '}' => -1,
                                    _ => 0,
                                };
                                depth < 0
                            })
                            .map_or(group.len(), |(i, _)| i);
                        let mut depth = 0;
                        let mut item_start = true;
                        for (i, c) in group[..end].char_indices() {
                            match c {
                                '{' => depth += 1,
                                '}' => depth -= 1,
                                ',' if depth == 0 => item_start = true,
                                c if item_start && !c.is_whitespace() => {
                                    item_start = false;
                                    out.push((line, ident(&group[i..])));
                                }
                                _ => {}
                            }
                        }
                    }
                    None => out.push((line, ident(rest))),
                }
            }
        }
        out
    }

    /// The agents' folder has no circle: the registry (`mod.rs`) knows every agent; an agent's
    /// file (one with its `fn profile(`, with helpers named `<agent>_…` such as
    /// `codex_config.rs`) imports no other agent's, and a shared file imports none. What an
    /// agent does its own way reaches the shared files as a function value of its profile.
    #[test]
    fn no_shared_agents_file_imports_an_agent_and_no_agent_another() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/chain/agents");
        let mut files: Vec<(String, String)> = std::fs::read_dir(&folder)
            .expect("src/chain/agents")
            .flatten()
            .filter_map(|e| {
                let stem = e.path().file_stem()?.to_str()?.to_string();
                Some((stem, std::fs::read_to_string(e.path()).ok()?))
            })
            .filter(|(stem, _)| stem != "mod")
            .collect();
        files.sort();
        let agents: Vec<&str> =
            files.iter().filter(|(_, text)| text.contains("fn profile(")).map(|(stem, _)| stem.as_str()).collect();
        assert!(agents.len() >= 7, "the agents' files were not found: {agents:?}");
        let owner = |module: &str| {
            agents.iter().copied().find(|a| module == *a || module.strip_prefix(a).is_some_and(|r| r.starts_with('_')))
        };
        let mut broken = Vec::new();
        let mut seen = 0;
        for (stem, text) in &files {
            let me = owner(stem);
            for (line, module) in sibling_imports(text) {
                seen += 1;
                match (me, owner(&module)) {
                    (None, Some(agent)) => {
                        broken.push(format!("src/chain/agents/{stem}.rs:{line}: a shared file imports {agent}"))
                    }
                    (Some(me), Some(agent)) if me != agent => {
                        broken.push(format!("src/chain/agents/{stem}.rs:{line}: agent {me} imports agent {agent}"))
                    }
                    _ => {}
                }
            }
        }
        assert!(seen > 50, "no imports read in src/chain/agents");
        assert!(broken.is_empty(), "{}", broken.join("\n"));
    }
}
