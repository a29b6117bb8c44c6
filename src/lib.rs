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
}
