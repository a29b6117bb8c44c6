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

/// The MCP server started in `cwd` with the tree's home, initialized by a plain client: the
/// response to each of `calls` (a tool's name and arguments), in order.
pub fn mcp_calls(t: &tree::Tree, cwd: &std::path::Path, calls: &[(&str, serde_json::Value)]) -> Vec<serde_json::Value> {
    use serde_json::json;
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .arg("mcp")
        .current_dir(cwd)
        .env("HOME", t.home())
        .env_remove("XDG_STATE_HOME")
        .env_remove("DSH_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut say = |v: serde_json::Value| writeln!(stdin, "{v}").and_then(|()| stdin.flush()).expect("write");
    say(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    say(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let _ = lines.next();
    let mut answers = Vec::new();
    for (id, (name, args)) in calls.iter().enumerate() {
        say(
            json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call", "params": {"name": name, "arguments": args}}),
        );
        let line = lines.next().expect("an answer").expect("read");
        answers.push(serde_json::from_str(&line).expect("a JSON answer"));
    }
    drop(lines);
    let _ = child.kill();
    let _ = child.wait();
    answers
}
