//! A stand-in model API (`tests/support/fake-anthropic.mjs` or `fake-openai.mjs`) on localhost,
//! with its request log and the target file that scripts its tool calls.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

pub struct FakeApi {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
    pub target: PathBuf,
    _dir: tempfile::TempDir,
}

impl FakeApi {
    /// Starts `tests/support/<script>` and waits for the port it prints.
    pub fn start(script: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let (log, target) = (dir.path().join("requests.jsonl"), dir.path().join("target"));
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support").join(script);
        let mut child = Command::new("node")
            .arg(path)
            .arg(&log)
            .arg(&target)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("node {script}: {e}"));
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        std::io::BufReader::new(stdout).read_line(&mut line).expect("port");
        let port = line.trim().parse().expect("a port");
        Self { child, port, log, target, _dir: dir }
    }

    /// The request bodies logged for `path` (e.g. `/v1/messages`) since the log was last removed.
    pub fn requests(&self, path: &str) -> Vec<Value> {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        log.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|r| r["url"].as_str().is_some_and(|u| u.starts_with(path)))
            .filter_map(|r| serde_json::from_str(r["body"].as_str().unwrap_or("")).ok())
            .collect()
    }

    /// `claude` (Claude Code's binary) talking to this API, offline: no telemetry, no updates.
    pub fn claude(&self, claude: &Path) -> Command {
        let mut c = Command::new(claude);
        c.env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", self.port))
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        c
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
