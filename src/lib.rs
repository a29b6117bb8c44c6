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

    /// The most lines a source file holds: past it, a file does more than one thing.
    const LINES_MAX: usize = 700;

    #[test]
    fn no_source_file_grows_past_700_lines() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let files = sources();
        assert!(files.len() > 100, "the sources were not read");
        let long: Vec<String> = files
            .iter()
            .map(|(p, text)| (p.strip_prefix(root).unwrap_or(p).display().to_string(), text.lines().count()))
            .filter(|(_, lines)| *lines > LINES_MAX)
            .map(|(rel, lines)| format!("{rel}: {lines} lines"))
            .collect();
        assert!(long.is_empty(), "split these by concern (at most {LINES_MAX} lines): {long:?}");
    }

    /// The module a file of `src/` is (`src/chain/text/read.rs`: `chain::text::read`; a
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
            let child = [module, &[head.to_string()]].concat();
            let (mut base, mut rest): (Vec<String>, &str) = match head {
                "crate" => (Vec::new(), &code[at + 2..]),
                "self" => (module.to_vec(), &code[at + 2..]),
                "super" => (module[..module.len().saturating_sub(1)].to_vec(), &code[at + 2..]),
                // A module's own child, named without `self::` (`use skeleton::materialize`).
                _ if known.contains(&child) => (module.to_vec(), &code[head_start..]),
                _ => continue,
            };
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

    /// Every file of `src/` as its module, with its text, and the files each imports (by index).
    type Graph = (Vec<(Vec<String>, String)>, Vec<std::collections::BTreeSet<usize>>);

    /// The imports of `src/`, file by file (`main.rs`, which hands each command to its edge, left
    /// out).
    fn import_graph() -> Graph {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let files: Vec<(Vec<String>, String)> = sources()
            .into_iter()
            .filter(|(p, _)| !p.ends_with("main.rs"))
            .map(|(p, text)| (module_of(p.strip_prefix(root.join("src")).unwrap_or(&p)), text))
            .collect();
        let known: std::collections::BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
        let index = |m: &Vec<String>| files.iter().position(|(f, _)| f == m);
        let edges = files
            .iter()
            .map(|(m, text)| {
                modules_named(m, text, &known).iter().filter(|t| *t != m && !t.is_empty()).filter_map(index).collect()
            })
            .collect();
        (files, edges)
    }

    /// No two files of `src/` import each other, directly or through others (read from their
    /// imports, as a reader follows them).
    #[test]
    fn no_files_import_each_other_in_a_circle() {
        let (files, edges) = import_graph();
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
                    circles.push(format!("{} imports {}, which leads back to it", name(a), name(b)));
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

    /// The engine's folders from the bottom up: what a profile is and produces (`model`), how
    /// patterns match (`patterns`), the repository's files (`repo`), reading text (`text`),
    /// loading and explaining a view (`loader`), the agents (`agents`).
    const ENGINE_FOLDERS: &[&str] = &["model", "patterns", "repo", "text", "loader", "agents"];

    /// The folder of [`ENGINE_FOLDERS`] a module is in, by its rank.
    fn engine_rank(module: &[String]) -> Option<usize> {
        (module.len() >= 2 && module[0] == "chain").then(|| ENGINE_FOLDERS.iter().position(|f| *f == module[1]))?
    }

    /// A file of the engine's folders imports from its own folder and those below it, never from
    /// one above, also through the engine's other files (`chain/lint.rs`, …): a change to the
    /// agents cannot break the repository's machinery.
    #[test]
    fn the_engines_folders_import_only_downwards() {
        let (files, edges) = import_graph();
        let (mut broken, mut seen) = (Vec::new(), 0);
        for (a, _) in edges.iter().enumerate() {
            let Some(from) = engine_rank(&files[a].0) else { continue };
            // What `a` reaches directly, or through `chain/`'s files outside the folders.
            let (mut stack, mut met) = (vec![(a, vec![a])], std::collections::BTreeSet::from([a]));
            while let Some((f, way)) = stack.pop() {
                for &b in &edges[f] {
                    if !met.insert(b) {
                        continue;
                    }
                    let way: Vec<usize> = way.iter().copied().chain([b]).collect();
                    match engine_rank(&files[b].0) {
                        Some(to) => {
                            seen += 1;
                            if to > from {
                                let names: Vec<String> = way.iter().map(|&i| files[i].0.join("::")).collect();
                                broken.push(names.join(" imports "));
                            }
                        }
                        None if files[b].0.first().is_some_and(|c| c == "chain") => stack.push((b, way)),
                        None => {}
                    }
                }
            }
        }
        assert!(seen > 100, "no imports between the engine's folders were read");
        assert!(broken.is_empty(), "an import runs up: {}", broken.join("\n"));
    }

    /// One file per agent in `src/chain/agents/` (one with its `fn profile(`, with helpers named
    /// `<agent>_…` such as `codex_config.rs`), and the registry (`mod.rs`) that names them all:
    /// an agent's file imports no other agent's, and no file but the registry imports an agent's.
    /// What an agent does its own way reaches the machinery as a function value of its profile.
    #[test]
    fn no_agent_imports_another_and_only_the_registry_imports_an_agent() {
        let (files, edges) = import_graph();
        let in_agents = |m: &[String]| m.len() == 3 && m[0] == "chain" && m[1] == "agents";
        let agents: Vec<&str> = files
            .iter()
            .filter(|(m, text)| in_agents(m) && text.contains("fn profile("))
            .map(|(m, _)| m[2].as_str())
            .collect();
        assert!(agents.len() >= 7, "the agents' files were not found: {agents:?}");
        let owner = |m: &[String]| {
            in_agents(m).then(|| {
                agents.iter().copied().find(|a| m[2] == *a || m[2].strip_prefix(a).is_some_and(|r| r.starts_with('_')))
            })?
        };
        for (m, _) in files.iter().filter(|(m, _)| in_agents(m)) {
            assert!(owner(m).is_some(), "src/chain/agents/{}.rs is no agent's: shared code lives below it", m[2]);
        }
        let mut broken = Vec::new();
        for (a, out) in edges.iter().enumerate() {
            let registry = files[a].0 == ["chain", "agents"];
            for &b in out {
                match (owner(&files[a].0), owner(&files[b].0)) {
                    (Some(me), Some(agent)) if me != agent => {
                        broken.push(format!("agent {me} imports agent {agent}"));
                    }
                    (None, Some(agent)) if !registry => {
                        broken.push(format!("{} imports agent {agent}", files[a].0.join("::")));
                    }
                    _ => {}
                }
            }
        }
        assert!(broken.is_empty(), "{}", broken.join("\n"));
    }
}
