//! The built binary over stdio, as an editor starts it: a client that answers server requests
//! and keeps what it reads for later waits.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::lsp::uri;
use super::tree::Tree;

pub const WAIT: Duration = Duration::from_secs(20);

pub struct Proc {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub messages: mpsc::Receiver<Value>,
    /// Messages read while waiting for another one, kept for later waits.
    pub backlog: Vec<Value>,
}

impl Proc {
    pub fn start(t: &Tree, args: &[&str]) -> Self {
        Self::spawn(t, Command::new(env!("CARGO_BIN_EXE_instructions-lsp")), args)
    }

    pub fn spawn(t: &Tree, mut command: Command, args: &[&str]) -> Self {
        let mut child = command
            .args(args)
            .env("HOME", t.home())
            .env_remove("DSH_HOME")
            .env_remove("XDG_STATE_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the server");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        length = v.parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                if let Ok(v) = serde_json::from_slice(&body)
                    && tx.send(v).is_err()
                {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Self { child, stdin, messages, backlog: Vec::new() }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).and_then(|()| stdin.flush()).expect("write");
    }

    pub fn send(&mut self, msg: Value) {
        self.send_raw(&frame(&msg));
    }

    /// The first message matching `pred` (earlier ones are kept), answering server requests.
    pub fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(i);
        }
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let msg = self.messages.recv_timeout(left).unwrap_or_else(|_| panic!("timed out waiting for {what}"));
            if pred(&msg) {
                return msg;
            }
            if msg.get("id").is_some() && msg.get("method").is_some() {
                self.send(json!({"jsonrpc": "2.0", "id": msg["id"], "result": [null]}));
            }
            self.backlog.push(msg);
        }
    }

    pub fn response(&mut self, id: u64) -> Value {
        self.until(&format!("response {id}"), |m| m["id"] == id && m.get("method").is_none())
    }

    /// Waits for the process to end and returns its exit code.
    pub fn exit_code(&mut self) -> Option<i32> {
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            assert!(std::time::Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn initialize(&mut self, folder: &std::path::Path) {
        self.initialize_with(folder, json!({}));
    }

    pub fn initialize_with(&mut self, folder: &std::path::Path, options: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": null, "rootUri": null, "capabilities": {}, "initializationOptions": options,
            "workspaceFolders": [{"uri": uri(folder), "name": "r"}]}}));
        let init = self.response(1);
        assert_eq!(init["result"]["serverInfo"]["name"], "instructions-lsp");
        self.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The binary under an address-space limit, so that a memory blowup ends the server (and fails
/// the test) instead of exhausting the machine.
pub fn limited(bytes: u64) -> Command {
    let mut c = Command::new("prlimit");
    c.arg(format!("--as={bytes}")).arg("--").arg(env!("CARGO_BIN_EXE_instructions-lsp"));
    c
}

/// One framed message, as a client writes it.
pub fn frame(msg: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(msg).expect("json");
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend(body);
    bytes
}
