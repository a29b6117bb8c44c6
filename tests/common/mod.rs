#![allow(dead_code)]

pub mod lsp;
pub mod stdio;
pub mod tree;

use serde_json::Value;

/// (action, path) of every change of a transitions batch.
pub fn changes(batch: &Value) -> Vec<(String, String)> {
    batch["changes"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| (c["action"].as_str().unwrap_or("").into(), c["path"].as_str().unwrap_or("").into()))
                .collect()
        })
        .unwrap_or_default()
}

/// Expected (action, path) pairs.
pub fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, p)| (a.to_string(), p.to_string())).collect()
}

/// The real agents' node_modules (`AGENTS_MODULES`, filled by `scripts/install-agents.sh`), or
/// `None` outside CI when they are not installed (the caller skips, and says so).
pub fn agents_modules() -> Option<std::path::PathBuf> {
    match std::env::var("AGENTS_MODULES").ok().filter(|c| !c.is_empty()) {
        Some(m) => Some(std::path::PathBuf::from(m)),
        None => {
            assert!(std::env::var_os("CI").is_none(), "CI must set AGENTS_MODULES (scripts/install-agents.sh)");
            eprintln!("AGENTS_MODULES is not set: run scripts/install-agents.sh to test with the real agents");
            None
        }
    }
}
