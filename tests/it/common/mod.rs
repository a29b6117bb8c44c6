pub mod fake_api;
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

/// The path an install script printed into `var`, or `None` (outside CI, where the script must
/// have run) when it is unset: the caller skips, and this says so.
pub fn installed(var: &str, script: &str, what: &str) -> Option<std::path::PathBuf> {
    match std::env::var(var).ok().filter(|p| !p.is_empty()) {
        Some(p) => Some(std::path::PathBuf::from(p)),
        None => {
            assert!(std::env::var_os("CI").is_none(), "CI must set {var} ({script})");
            eprintln!("{var} is not set: run {script} to test with {what}");
            None
        }
    }
}

/// The real agents' node_modules (`AGENTS_MODULES`, filled by `scripts/install-agents.sh`).
pub fn agents_modules() -> Option<std::path::PathBuf> {
    installed("AGENTS_MODULES", "scripts/install-agents.sh", "the real agents")
}

/// A process's peak resident memory so far, in KiB (0 when it cannot be read).
pub fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
