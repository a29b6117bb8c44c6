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

    #[test]
    fn no_source_file_grows_past_900_lines() {
        let long: Vec<String> = sources()
            .into_iter()
            .filter(|(_, text)| text.lines().count() > 900)
            .map(|(p, text)| format!("{}: {} lines", p.display(), text.lines().count()))
            .collect();
        assert!(long.is_empty(), "split these by concern: {long:?}");
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
