//! A fake LSP client driving the real server in process over in-memory pipes. It answers
//! `workspace/configuration` per folder, keeps the latest diagnostics per URI, queues every other
//! message, and fails a test that leaves a notification unconsumed.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use instructions_lsp::chain::settings::Env;
use instructions_lsp::paths::path_to_uri;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc, oneshot};

/// How long a request or an awaited notification may take before the test fails: a guard against
/// hangs, not a measure (a debug server answering after ten thousand edits on a busy 2-core machine
/// takes several seconds).
const WAIT: Duration = Duration::from_secs(30);

#[derive(Default)]
struct Shared {
    /// Settings answered to `workspace/configuration`, by folder URI (`*` for any).
    config: HashMap<String, Value>,
    diagnostics: HashMap<String, Vec<Value>>,
    /// Notifications and requests from the server other than diagnostics and configuration.
    messages: VecDeque<Value>,
    pending: HashMap<u64, oneshot::Sender<Value>>,
    /// How many `workspace/configuration` requests were answered (or ignored).
    config_requests: usize,
    /// Leave `workspace/configuration` unanswered, as a broken client does.
    ignore_config: bool,
    /// Every `instructions/didChange` received, in order: (folder URI, seq).
    did_change: Vec<(String, u64)>,
}

pub struct Client {
    out: mpsc::UnboundedSender<Value>,
    shared: Arc<Mutex<Shared>>,
    changed: Arc<Notify>,
    next_id: u64,
    /// Told when the server has exited.
    server: tokio::sync::oneshot::Receiver<()>,
    finished: bool,
}

pub fn uri(path: &Path) -> String {
    path_to_uri(path)
}

pub fn env(home: &Path) -> Env {
    Env { home: Some(home.to_path_buf()), dsh_home: None, xdg_state_home: None }
}

async fn read_message<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).await.ok()?;
    serde_json::from_slice(&body).ok()
}

pub async fn write_message<W: AsyncWrite + Unpin>(writer: &mut W, msg: &Value) -> std::io::Result<()> {
    let body = serde_json::to_vec(msg)?;
    writer.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes()).await?;
    writer.write_all(&body).await?;
    writer.flush().await
}

impl Client {
    /// Starts the server in process and sends `initialize` with `folders` (none: no folders),
    /// `initializationOptions` and client capabilities, then `initialized`.
    pub async fn start(home: &Path, folders: &[&Path], init_options: Value) -> Self {
        Self::start_with(home, folders, init_options, json!({})).await
    }

    pub async fn start_with(home: &Path, folders: &[&Path], init_options: Value, extra_caps: Value) -> Self {
        let mut client = Self::spawn(home).await;
        client.initialize(folders, init_options, extra_caps).await;
        client
    }

    /// The server, not yet initialized (to set configuration answers first).
    pub async fn spawn_only(home: &Path) -> Self {
        Self::spawn(home).await
    }

    /// `initialize` from a client that answers `workspace/configuration`, then `initialized`.
    pub async fn initialize(&mut self, folders: &[&Path], init_options: Value, extra_caps: Value) -> Value {
        let caps = json!({
            "workspace": {"configuration": true, "workspaceFolders": true, "didChangeWatchedFiles": {"dynamicRegistration": true}},
            "textDocument": {"publishDiagnostics": {"relatedInformation": true}},
        });
        self.initialize_caps(folders, init_options, caps, extra_caps).await
    }

    /// `initialize` from a client without `workspace/configuration`.
    pub async fn initialize_raw(&mut self, folders: &[&Path], init_options: Value, extra_caps: Value) -> Value {
        self.initialize_caps(folders, init_options, json!({}), extra_caps).await
    }

    async fn initialize_caps(
        &mut self,
        folders: &[&Path],
        init_options: Value,
        mut caps: Value,
        extra_caps: Value,
    ) -> Value {
        if let (Some(c), Some(extra)) = (caps.as_object_mut(), extra_caps.as_object()) {
            for (k, v) in extra {
                c.insert(k.clone(), v.clone());
            }
        }
        let folders_json: Vec<Value> = folders
            .iter()
            .map(|f| json!({"uri": uri(f), "name": f.file_name().map(|n| n.to_string_lossy().into_owned())}))
            .collect();
        let result = self
            .request(
                "initialize",
                json!({
                    "processId": null,
                    "rootUri": null,
                    "capabilities": caps,
                    "workspaceFolders": if folders.is_empty() { Value::Null } else { Value::Array(folders_json) },
                    "initializationOptions": init_options,
                }),
            )
            .await
            .expect("initialize");
        assert!(result["capabilities"].is_object());
        self.notify("initialized", json!({})).await;
        result
    }

    async fn spawn(home: &Path) -> Self {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_io);
        let env = env(home);
        // The server runs on a thread and runtime of its own, as it would in its own process: a
        // handler that blocks (a lock taken twice, say) stops the server, never the test, whose
        // waits then run out and say what did not happen.
        let (done, server) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("lsp-server".into())
            .spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
                rt.block_on(async move {
                    let (service, socket) = instructions_lsp::lsp::service(env);
                    instructions_lsp::lsp::transport::serve(server_read, server_write, service, socket).await;
                });
                let _ = done.send(());
                rt.shutdown_background();
            })
            .expect("the server's thread");
        let (client_read, mut client_write) = tokio::io::split(client_io);
        let (out, mut out_rx) = mpsc::unbounded_channel::<Value>();
        tokio::spawn(async move {
            while let Some(msg) = out_rx.recv().await {
                if write_message(&mut client_write, &msg).await.is_err() {
                    break;
                }
            }
        });
        let shared = Arc::new(Mutex::new(Shared::default()));
        let changed = Arc::new(Notify::new());
        let (s, c, o) = (shared.clone(), changed.clone(), out.clone());
        tokio::spawn(async move {
            let mut reader = BufReader::new(client_read);
            while let Some(msg) = read_message(&mut reader).await {
                Self::dispatch(&s, &o, msg);
                c.notify_waiters();
            }
        });
        Self { out, shared, changed, next_id: 1, server, finished: false }
    }

    fn dispatch(shared: &Arc<Mutex<Shared>>, out: &mpsc::UnboundedSender<Value>, msg: Value) {
        let mut sh = shared.lock().expect("lock");
        let method = msg["method"].as_str().map(str::to_string);
        match (method.as_deref(), msg.get("id")) {
            (Some("workspace/configuration"), Some(_)) if sh.ignore_config => sh.config_requests += 1,
            (Some("workspace/configuration"), Some(id)) => {
                let items = msg["params"]["items"].as_array().cloned().unwrap_or_default();
                let answers: Vec<Value> = items
                    .iter()
                    .map(|item| {
                        let scope = item["scopeUri"].as_str().unwrap_or("");
                        sh.config.get(scope).or_else(|| sh.config.get("*")).cloned().unwrap_or(Value::Null)
                    })
                    .collect();
                sh.config_requests += 1;
                let _ = out.send(json!({"jsonrpc": "2.0", "id": id, "result": answers}));
            }
            (Some(_), Some(id)) => {
                let result = if method.as_deref() == Some("window/showDocument") {
                    json!({"success": true})
                } else {
                    Value::Null
                };
                let _ = out.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
                sh.messages.push_back(msg);
            }
            (Some("textDocument/publishDiagnostics"), None) => {
                let uri = msg["params"]["uri"].as_str().unwrap_or("").to_string();
                let diags = msg["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
                sh.diagnostics.insert(uri, diags);
            }
            (Some("window/logMessage"), None) => {}
            (Some("instructions/didChange"), None) => {
                let folder = msg["params"]["folder"].as_str().unwrap_or("").to_string();
                let seq = msg["params"]["seq"].as_u64().unwrap_or(0);
                sh.did_change.push((folder, seq));
            }
            (Some(_), None) => sh.messages.push_back(msg),
            (None, Some(id)) => {
                if let Some(tx) = id.as_u64().and_then(|id| sh.pending.remove(&id)) {
                    let _ = tx.send(msg);
                }
            }
            (None, None) => panic!("a message that is neither request, response nor notification: {msg}"),
        }
    }

    /// Settings for `workspace/configuration` answers; `folder` None answers every folder.
    pub fn set_config(&self, folder: Option<&Path>, value: Value) {
        let key = folder.map_or_else(|| "*".to_string(), uri);
        self.shared.lock().expect("lock").config.insert(key, value);
    }

    /// From now on, `workspace/configuration` requests are never answered.
    pub fn ignore_config(&self) {
        self.shared.lock().expect("lock").ignore_config = true;
    }

    pub fn config_requests(&self) -> usize {
        self.shared.lock().expect("lock").config_requests
    }

    /// Sends a request; `Ok(result)` or `Err(error object)`.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        let (tx, rx) = oneshot::channel();
        self.shared.lock().expect("lock").pending.insert(id, tx);
        let _ = self.out.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = tokio::time::timeout(WAIT, rx).await.expect("response in time").expect("response");
        match reply.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(reply["result"].clone()),
        }
    }

    /// Sends a request and returns its id and its reply, to await later.
    pub fn request_later(
        &mut self,
        method: &str,
        params: Value,
    ) -> (u64, impl std::future::Future<Output = Result<Value, Value>> + use<>) {
        let id = self.next_id;
        self.next_id += 1;
        let (tx, rx) = oneshot::channel();
        self.shared.lock().expect("lock").pending.insert(id, tx);
        let _ = self.out.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = async move {
            let reply = tokio::time::timeout(WAIT, rx).await.expect("response in time").expect("response");
            match reply.get("error") {
                Some(e) => Err(e.clone()),
                None => Ok(reply["result"].clone()),
            }
        };
        (id, reply)
    }

    /// Sends every request at once, then waits for all the answers (in the order sent).
    pub async fn requests(&mut self, method: &str, all: Vec<Value>) -> Vec<Result<Value, Value>> {
        let mut waiting = Vec::new();
        for params in all {
            let id = self.next_id;
            self.next_id += 1;
            let (tx, rx) = oneshot::channel();
            self.shared.lock().expect("lock").pending.insert(id, tx);
            let _ = self.out.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
            waiting.push(rx);
        }
        let mut out = Vec::new();
        for rx in waiting {
            let reply = tokio::time::timeout(WAIT * 3, rx).await.expect("response in time").expect("response");
            out.push(match reply.get("error") {
                Some(e) => Err(e.clone()),
                None => Ok(reply["result"].clone()),
            });
        }
        out
    }

    pub async fn notify(&self, method: &str, params: Value) {
        let _ = self.out.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub async fn open(&self, path: &Path, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(path), "languageId": "markdown", "version": 1, "text": text}}),
        )
        .await;
    }

    pub async fn change(&self, path: &Path, version: i32, range: Option<((u32, u32), (u32, u32))>, text: &str) {
        let change = match range {
            Some(((sl, sc), (el, ec))) => {
                json!({"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}, "text": text})
            }
            None => json!({"text": text}),
        };
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(path), "version": version}, "contentChanges": [change]}),
        )
        .await;
    }

    pub async fn effective(&mut self, params: Value) -> Value {
        self.request("instructions/effective", params).await.expect("effective")
    }

    /// Waits until the diagnostics of `path` satisfy `pred`; returns them.
    pub async fn diagnostics_until(&self, path: &Path, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let key = uri(path);
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let notified = self.changed.notified();
            {
                let sh = self.shared.lock().expect("lock");
                let current = sh.diagnostics.get(&key).cloned().unwrap_or_default();
                if pred(&current) {
                    return current;
                }
                if tokio::time::Instant::now() >= deadline {
                    panic!("diagnostics of {key}: {what} did not happen; last: {current:#?}");
                }
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }

    /// Waits until every file's latest diagnostics (by URI) satisfy `pred`; returns them.
    pub async fn all_diagnostics_until(
        &self,
        what: &str,
        pred: impl Fn(&HashMap<String, Vec<Value>>) -> bool,
    ) -> HashMap<String, Vec<Value>> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let notified = self.changed.notified();
            {
                let sh = self.shared.lock().expect("lock");
                if pred(&sh.diagnostics) {
                    return sh.diagnostics.clone();
                }
                if tokio::time::Instant::now() >= deadline {
                    panic!("diagnostics: {what} did not happen; last: {:#?}", sh.diagnostics);
                }
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }

    /// Waits for diagnostics with `code` on `path` and returns the first.
    pub async fn diagnostic(&self, path: &Path, code: &str) -> Value {
        let diags = self
            .diagnostics_until(path, &format!("a `{code}` diagnostic"), |d| d.iter().any(|d| d["code"] == code))
            .await;
        diags.into_iter().find(|d| d["code"] == code).unwrap_or(Value::Null)
    }

    /// Every `instructions/didChange` of `folder` so far (their seq numbers).
    pub fn did_changes(&self, folder: &Path) -> Vec<u64> {
        let key = uri(folder);
        self.shared.lock().expect("lock").did_change.iter().filter(|(f, _)| *f == key).map(|(_, s)| *s).collect()
    }

    /// Waits until `instructions/didChange` announced `seq` (or later) for `folder`.
    pub async fn wait_seq(&self, folder: &Path, seq: u64) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let notified = self.changed.notified();
            let seen = self.did_changes(folder);
            if seen.iter().any(|&s| s >= seq) {
                return;
            }
            if tokio::time::Instant::now() >= deadline {
                panic!("no instructions/didChange with seq {seq} for {}; seen {seen:?}", uri(folder));
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }

    /// Waits for the next queued message with `method` and consumes it.
    pub async fn expect_message(&self, method: &str) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let notified = self.changed.notified();
            {
                let mut sh = self.shared.lock().expect("lock");
                if let Some(i) = sh.messages.iter().position(|m| m["method"] == method) {
                    return sh.messages.remove(i).unwrap_or(Value::Null);
                }
                if tokio::time::Instant::now() >= deadline {
                    panic!("no `{method}` arrived; queued: {:#?}", sh.messages);
                }
            }
            let _ = tokio::time::timeout_at(deadline, notified).await;
        }
    }

    /// Lets the server settle (answers every request sent before).
    pub async fn sync(&mut self) {
        let _ = self.request("instructions/effective", json!({"sync": true})).await;
    }

    /// Shuts down, exits, and fails if a message was left unconsumed.
    pub async fn finish(mut self) {
        self.finished = true;
        let _ = self.request("shutdown", Value::Null).await;
        self.notify("exit", Value::Null).await;
        let _ = tokio::time::timeout(WAIT, &mut self.server).await;
        let left: Vec<Value> = self.shared.lock().expect("lock").messages.drain(..).collect();
        assert!(left.is_empty(), "messages left unconsumed: {left:#?}");
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if !self.finished && !std::thread::panicking() {
            panic!("a test must end with `client.finish().await` so unconsumed messages fail it");
        }
    }
}
