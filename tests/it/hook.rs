//! `instructions-lsp hook <agent>`: the binary over stdin and stdout on real trees,
//! its answers checked against the hook schemas Codex ships, and the real agents (Claude Code
//! against `tests/support/fake-anthropic.mjs`, Codex against `tests/support/fake-openai.mjs`)
//! with the hook configured as a user would.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::fake_api::FakeApi;
use crate::common::tree::Tree;
use serde_json::{Value, json};

/// Runs `instructions-lsp hook AGENT` with `event` on stdin (as bytes) and `HOME` in the tree;
/// returns stdout and stderr. The hook must exit 0 whatever it is given.
fn hook_raw(agent: &str, t: &Tree, input: &[u8]) -> (String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(["hook", agent])
        .env("HOME", t.home())
        .env("CODEX_HOME", t.path("home/.codex"))
        .env_remove("XDG_STATE_HOME")
        .env_remove("DSH_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the hook");
    child.stdin.take().expect("stdin").write_all(input).expect("write the event");
    let out = child.wait_with_output().expect("hook output");
    assert!(out.status.success(), "the hook never fails the turn: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8(out.stdout).expect("utf-8"), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The context the hook adds for `event`, or `None` when it answers nothing.
fn hook(agent: &str, t: &Tree, event: &Value) -> Option<String> {
    let (out, err) = hook_raw(agent, t, event.to_string().as_bytes());
    if out.is_empty() {
        return None;
    }
    let answer: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}; {err}"));
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], event["hook_event_name"]);
    Some(answer["hookSpecificOutput"]["additionalContext"].as_str().expect("additionalContext").to_string())
}

fn start(t: &Tree, session: &str) -> Value {
    json!({"session_id": session, "transcript_path": "/dev/null", "cwd": t.root(), "hook_event_name": "SessionStart",
        "source": "startup"})
}

fn read(t: &Tree, session: &str, file: &str) -> Value {
    json!({"session_id": session, "transcript_path": "/dev/null", "cwd": t.root(), "hook_event_name": "PostToolUse",
        "tool_name": "Read", "tool_input": {"file_path": t.root().join(file)},
        "tool_response": {"type": "text", "file": {"filePath": t.root().join(file), "content": "x"}},
        "tool_use_id": "toolu_1"})
}

/// A tree where Claude Code reads `CLAUDE.md` at the root (and `a/CLAUDE.md` once a read reaches
/// it) and never an `AGENTS.md`.
fn claude_tree() -> Tree {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root agents rules\n");
    t.write("r/CLAUDE.md", "root claude rules\n");
    t.write("r/a/CLAUDE.md", "a claude rules\n");
    t.write("r/a/b/AGENTS.md", "deep rules v1\n");
    t.write("r/a/b/f.rs", "code\n");
    t.write("r/a/c/AGENTS.md", "sibling rules\n");
    t
}

#[test]
fn each_scope_is_given_once_per_agent_session_and_sessions_are_isolated() {
    let t = claude_tree();
    let baseline = hook("claude", &t, &start(&t, "s1")).expect("a baseline");
    assert!(baseline.contains("root agents rules"), "{baseline}");
    assert!(!baseline.contains("root claude rules"), "Claude Code loads CLAUDE.md itself: {baseline}");

    let deep = hook("claude", &t, &read(&t, "s1", "a/b/f.rs")).expect("the nested block");
    assert!(deep.contains("## a/b/AGENTS.md") && deep.contains("deep rules v1"), "{deep}");
    assert!(!deep.contains("root agents rules"), "only what is new: {deep}");
    assert!(!deep.contains("a claude rules"), "Claude Code loads a/CLAUDE.md itself on the read: {deep}");
    assert_eq!(hook("claude", &t, &read(&t, "s1", "a/b/g.rs")), None, "the same directory again adds nothing");
    assert_eq!(hook("claude", &t, &read(&t, "s1", "f.rs")), None, "the root reaches nothing new");
    // The agent moved into a/ (a `cd`): still the same session, nothing given again.
    let mut moved = read(&t, "s1", "a/b/f.rs");
    moved["cwd"] = json!(t.path("r/a"));
    moved["tool_input"]["file_path"] = json!("b/f.rs");
    assert_eq!(hook("claude", &t, &moved), None, "one session whatever its cwd");

    // Another agent session has been given nothing yet (no start either: the first touch brings
    // the baseline too).
    let other = hook("claude", &t, &read(&t, "s2", "a/b/f.rs")).expect("s2 gets its own");
    assert!(other.contains("root agents rules") && other.contains("deep rules v1"), "{other}");
    assert_eq!(hook("claude", &t, &read(&t, "s1", "a/b/h.rs")), None, "s1 is not disturbed by s2");
    // A subagent of s1 has a context of its own.
    let mut sub = read(&t, "s1", "a/b/f.rs");
    sub["agent_id"] = json!("agent-1");
    let sub = hook("claude", &t, &sub).expect("the subagent's own");
    assert!(sub.contains("deep rules v1"), "{sub}");
    // Codex sessions live apart from Claude Code's, even with the same id; Codex loads the root
    // AGENTS.md itself, so its start adds nothing.
    assert_eq!(hook("codex", &t, &start(&t, "s1")), None);
    let patch = "*** Begin Patch\n*** Update File: a/b/f.rs\n@@\n-code\n+edited\n*** End Patch\n";
    let edit = json!({"session_id": "s1", "cwd": t.root(), "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_response": "Exit code: 0\nOutput:\nSuccess."});
    let codex = hook("codex", &t, &edit).expect("Codex's s1 has not had a/b");
    assert!(codex.contains("deep rules v1") && !codex.contains("root agents rules"), "{codex}");
}

/// (action, path) of the last batch of a Claude Code session's ledger, in the state directory
/// where the language server keeps its own.
fn last_changes(t: &Tree, session: &str) -> Vec<(String, String)> {
    use sha2::Digest;
    let id: String = sha2::Sha256::digest(session.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    let dir = t.path("home/.local/state/instructions-lsp/hooks/claude").join(id);
    let ledger = std::fs::read_dir(&dir)
        .expect("the session's directory")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json") && !p.ends_with("hook.json"))
        .expect("a ledger");
    let ledger: Value = serde_json::from_slice(&std::fs::read(ledger).expect("read")).expect("JSON");
    assert_eq!(ledger["version"], 1);
    crate::common::changes(ledger["batches"].as_array().and_then(|b| b.last()).expect("a batch"))
}

#[test]
fn parallel_tool_calls_of_one_session_give_a_block_once() {
    let t = claude_tree();
    hook("claude", &t, &start(&t, "p")).expect("a baseline");
    let answers: Vec<Option<String>> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..8)
            .map(|i| {
                let (t, event) = (&t, read(&t, "p", &format!("a/b/file{i}.rs")));
                s.spawn(move || hook("claude", t, &event))
            })
            .collect();
        calls.into_iter().map(|c| c.join().expect("a hook")).collect()
    });
    let given: Vec<&String> = answers.iter().flatten().collect();
    assert_eq!(given.len(), 1, "one of eight reads of a/b gives its block: {given:?}");
    assert!(given[0].contains("deep rules v1"));
}

#[test]
fn a_changed_file_is_replaced_and_a_removed_one_removed() {
    let t = claude_tree();
    hook("claude", &t, &start(&t, "s")).expect("a baseline");
    hook("claude", &t, &read(&t, "s", "a/b/f.rs")).expect("the nested block");

    t.write("r/a/b/AGENTS.md", "deep rules v2\n");
    let changed = hook("claude", &t, &read(&t, "s", "a/x.rs")).expect("the replacement");
    assert!(changed.contains("deep rules v2") && !changed.contains("deep rules v1"), "{changed}");
    assert_eq!(last_changes(&t, "s"), [("replace".to_string(), "a/b/AGENTS.md".to_string())]);
    assert!(!changed.contains("root agents rules"), "unchanged files stay out: {changed}");
    assert_eq!(hook("claude", &t, &read(&t, "s", "a/x.rs")), None, "given once");

    std::fs::remove_file(t.path("r/a/b/AGENTS.md")).expect("remove");
    let removed = hook("claude", &t, &read(&t, "s", "a/x.rs")).expect("the removal");
    assert!(removed.contains("Instructions removed: a/b/AGENTS.md"), "{removed}");
    assert_eq!(last_changes(&t, "s"), [("remove".to_string(), "a/b/AGENTS.md".to_string())]);
    // A file the agent loads itself is its own business: no removal from us.
    std::fs::remove_file(t.path("r/CLAUDE.md")).expect("remove");
    std::fs::write(t.path("r/AGENTS.md"), "root agents rules, new\n").expect("write");
    let root = hook("claude", &t, &read(&t, "s", "a/x.rs"));
    assert!(root.as_deref().is_none_or(|r| !r.contains("CLAUDE.md")), "{root:?}");
}

#[test]
fn failures_and_bad_input_answer_nothing_and_exit_0() {
    let t = claude_tree();
    hook("claude", &t, &start(&t, "s")).expect("a baseline");
    let mut failed = read(&t, "s", "a/c/x.rs");
    failed["hook_event_name"] = json!("PostToolUseFailure");
    failed["error"] = json!("File does not exist.");
    assert_eq!(hook("claude", &t, &failed), None);
    let mut error = read(&t, "s", "a/c/x.rs");
    error["tool_response"] = json!({"is_error": true});
    assert_eq!(hook("claude", &t, &error), None);
    let patch = "*** Begin Patch\n*** Update File: a/c/x.rs\n@@\n-a\n+b\n*** End Patch\n";
    let codex_failed = json!({"session_id": "s", "cwd": t.root(), "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_response": "Exit code: 1\nOutput:\nerror"});
    assert_eq!(hook("codex", &t, &codex_failed), None);
    let shell = json!({"session_id": "s", "cwd": t.root(), "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cat a/c/AGENTS.md"}, "tool_response": {"stdout": "sibling rules"}});
    assert_eq!(hook("claude", &t, &shell), None, "shell commands are never parsed");
    // None of these reached a/c: a successful read does now.
    let sibling = hook("claude", &t, &read(&t, "s", "a/c/x.rs")).expect("the sibling block");
    assert!(sibling.contains("sibling rules"), "{sibling}");

    for (agent, input) in
        [("claude", &b"{not json"[..]), ("claude", b"[]"), ("claude", b"{\"hook_event_name\": \"SessionStart\"}")]
    {
        let (out, err) = hook_raw(agent, &t, input);
        assert_eq!(out, "", "nothing on stdout for {agent} {:?}", String::from_utf8_lossy(input));
        assert!(err.contains("instructions-lsp hook:"), "the problem is said: {err}");
    }
    // Set up without its agent, or with another's: said, exit 1 (never 2, which Claude Code takes
    // as blocking the tool call).
    for (agent, said) in [
        ("gemini", "unknown agent `gemini`; expected one of claude, codex"),
        ("", "name the agent whose event comes on stdin: `instructions-lsp hook claude` or"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
            .args(["hook", agent].iter().filter(|a| !a.is_empty()))
            .env("HOME", t.home())
            .env_remove("XDG_STATE_HOME")
            .stdin(Stdio::null())
            .output()
            .expect("hook");
        assert_eq!(out.status.code(), Some(1), "{agent}");
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains(said), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let log = std::fs::read_to_string(t.path("home/.local/state/instructions-lsp/hooks/hook.log")).expect("hook.log");
    assert!(log.contains("not JSON") && log.contains("unknown agent `gemini`"), "{log}");

    // A state directory that cannot hold the session: logged, nothing given, exit 0.
    std::fs::remove_dir_all(t.path("home/.local/state/instructions-lsp/hooks/claude")).expect("clean");
    std::fs::write(t.path("home/.local/state/instructions-lsp/hooks/claude"), "not a directory").expect("block");
    let (out, err) = hook_raw("claude", &t, start(&t, "s").to_string().as_bytes());
    assert_eq!(out, "");
    assert!(err.contains("cannot create"), "{err}");
}

/// Codex's binary in `modules` (its platform package holds it under `vendor/<target>/bin`).
fn codex_binary(modules: &Path) -> PathBuf {
    let scope = modules.join("@openai");
    for entry in std::fs::read_dir(&scope).expect("@openai").flatten() {
        let vendor = entry.path().join("vendor");
        for target in std::fs::read_dir(&vendor).into_iter().flatten().flatten() {
            let bin = target.path().join("bin/codex");
            if bin.is_file() {
                return bin;
            }
        }
    }
    panic!("no Codex binary under {}", scope.display());
}

/// The JSON schema titled `title` that Codex's binary carries (it ships the schemas of its hook
/// input and output, generated from its own types).
fn codex_schema(binary: &[u8], title: &str) -> Value {
    let needle = format!("\"title\": \"{title}\"");
    let at = binary.windows(needle.len()).position(|w| w == needle.as_bytes()).expect("the schema's title");
    let open = b"{\n  \"$schema\"";
    let start = binary[..at].windows(open.len()).rposition(|w| w == open).expect("the schema's start");
    let mut values = serde_json::Deserializer::from_slice(&binary[start..]).into_iter::<Value>();
    let schema = values.next().expect("a schema").expect("valid JSON");
    assert_eq!(schema["title"], title);
    schema
}

/// Checks `value` against `schema` (the draft-07 keywords Codex's hook schemas use: type, const,
/// enum, properties, required, additionalProperties, definitions through $ref, allOf); returns
/// every violation with its path.
fn violations(root: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    if schema == &Value::Bool(true) {
        return;
    }
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.strip_prefix("#/definitions/").expect("a local definition");
        return violations(root, &root["definitions"][name], value, at, out);
    }
    for sub in schema["allOf"].as_array().into_iter().flatten() {
        violations(root, sub, value, at, out);
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(s) => vec![s],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if !types.is_empty() && !types.contains(&kind) {
        out.push(format!("{at}: {kind}, not {types:?}"));
    }
    if let Some(c) = schema.get("const").filter(|c| *c != value) {
        out.push(format!("{at}: {value}, not the constant {c}"));
    }
    if let Some(e) = schema["enum"].as_array().filter(|e| !e.contains(value)) {
        out.push(format!("{at}: {value} is not one of {e:?}"));
    }
    let Some(obj) = value.as_object() else { return };
    for r in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if !obj.contains_key(r) {
            out.push(format!("{at}: `{r}` is required"));
        }
    }
    for (k, v) in obj {
        match schema["properties"].get(k) {
            Some(p) => violations(root, p, v, &format!("{at}/{k}"), out),
            None if schema["additionalProperties"] == Value::Bool(false) => {
                out.push(format!("{at}: `{k}` is not a property of the schema"))
            }
            None => {}
        }
    }
}

fn check(schema: &Value, value: &Value) {
    let mut out = Vec::new();
    violations(schema, schema, value, "", &mut out);
    assert!(out.is_empty(), "{} against {}: {out:?}", value, schema["title"]);
}

/// An input of a Codex hook schema: every required property, each from what the schema says of
/// it (its constant, its first enum value, null where it may be null), with `values` for the
/// strings and free-form ones.
fn input_from_schema(schema: &Value, values: &Value) -> Value {
    let mut input = serde_json::Map::new();
    for key in schema["required"].as_array().expect("required").iter().filter_map(Value::as_str) {
        let p = &schema["properties"][key];
        let p = match p["$ref"].as_str() {
            Some(r) => &schema["definitions"][r.trim_start_matches("#/definitions/")],
            None => p,
        };
        let v = if let Some(c) = p.get("const") {
            c.clone()
        } else if let Some(e) = p["enum"].as_array() {
            e[0].clone()
        } else if let Some(v) = values.get(key) {
            v.clone()
        } else if p["type"].as_array().is_some_and(|t| t.contains(&json!("null"))) {
            Value::Null
        } else {
            panic!("no value for `{key}` ({p})");
        };
        input.insert(key.to_string(), v);
    }
    Value::Object(input)
}

#[test]
fn the_hook_reads_and_answers_the_hook_schemas_codex_ships() {
    let Some(modules) = crate::common::agents_modules() else { return };
    let binary = std::fs::read(codex_binary(&modules)).expect("read Codex");
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules\n");
    t.write("r/a/CLAUDE.md", "a claude rules\n");
    t.write("r/a/b/AGENTS.md", "deep rules\n");
    t.write("r/a/b/f.rs", "code\n");
    let values = json!({"session_id": "schema-session", "cwd": t.path("r/a"), "model": "gpt-5.5", "turn_id": "turn-1",
        "tool_name": "apply_patch", "tool_use_id": "call_1",
        "tool_input": {"command": "*** Begin Patch\n*** Update File: b/f.rs\n@@\n-code\n+edited\n*** End Patch\n"},
        "tool_response": "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nM b/f.rs\n"});
    for (event, wanted, unwanted) in
        [("session-start", "a claude rules", "root rules"), ("post-tool-use", "deep rules", "a claude rules")]
    {
        let input_schema = codex_schema(&binary, &format!("{event}.command.input"));
        let output_schema = codex_schema(&binary, &format!("{event}.command.output"));
        let input = input_from_schema(&input_schema, &values);
        check(&input_schema, &input);
        let (out, err) = hook_raw("codex", &t, input.to_string().as_bytes());
        let answer: Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{event}: not JSON ({e}): {out} {err}"));
        check(&output_schema, &answer);
        // Field by field, what Codex reads of it.
        let specific = &answer["hookSpecificOutput"];
        assert_eq!(answer.as_object().map(|o| o.len()), Some(1), "{answer}");
        assert_eq!(specific["hookEventName"], input["hook_event_name"]);
        let context = specific["additionalContext"].as_str().expect("additionalContext is a string");
        assert!(context.contains(wanted), "{event}: {context}");
        assert!(!context.contains(unwanted), "{event}: Codex loads the root-to-cwd chain itself: {context}");
    }
}

/// Every text of a Messages request's conversation.
fn message_texts(request: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in request["messages"].as_array().into_iter().flatten() {
        match &m["content"] {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => out.extend(a.iter().filter_map(|c| c["text"].as_str().map(str::to_string))),
            _ => {}
        }
    }
    out
}

fn count(texts: &[String], needle: &str) -> usize {
    texts.iter().map(|t| t.matches(needle).count()).sum()
}

/// The settings `hook --help` tells users to paste for `agent` (the JSON after its label), with
/// the command pointing at the binary under test.
fn snippet(label: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_instructions-lsp")).args(["hook", "--help"]).output().expect("help");
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).expect("utf-8");
    let at = help.find(label).unwrap_or_else(|| panic!("`{label}` in the help: {help}"));
    let open = at + help[at..].find('{').expect("a JSON snippet");
    let mut values = serde_json::Deserializer::from_str(&help[open..]).into_iter::<Value>();
    let snippet = values.next().expect("a snippet").expect("the snippet is JSON");
    let bin = format!("'{}' hook", env!("CARGO_BIN_EXE_instructions-lsp"));
    serde_json::from_str(&snippet.to_string().replace("instructions-lsp hook", &bin)).expect("JSON")
}

#[test]
fn claude_code_gets_the_nested_agents_md_once_through_the_hook() {
    let Some(modules) = crate::common::agents_modules() else { return };
    let t = claude_tree();
    t.write("r/a/b/g.rs", "more code\n");
    // The settings exactly as `hook --help` prints them.
    t.write("r/.claude/settings.json", snippet("Claude Code:").to_string());
    let api = FakeApi::start("fake-anthropic.mjs");
    // Two reads in one session: a deep file, then its neighbour.
    let reads = format!("{}\n{}\n", t.path("r/a/b/f.rs").display(), t.path("r/a/b/g.rs").display());
    std::fs::write(&api.target, reads).expect("target");
    let out = api
        .claude(&modules.join(".bin/claude"))
        .args(["-p", "hi", "--allowedTools", "Read,Write,Edit"])
        .current_dir(t.root())
        .env("HOME", t.home())
        .env_remove("XDG_STATE_HOME")
        .env_remove("DSH_HOME")
        .output()
        .expect("run claude");
    assert!(out.status.success(), "claude failed: {}", String::from_utf8_lossy(&out.stderr));
    let requests: Vec<Value> =
        api.requests("/v1/messages").into_iter().filter(|r| r["stream"] == json!(true)).collect();
    assert_eq!(requests.len(), 3, "start, after the first read, after the second");

    let first = message_texts(&requests[0]);
    assert_eq!(count(&first, "SessionStart hook additional context:"), 1, "{first:#?}");
    assert_eq!(count(&first, "root agents rules"), 1, "the AGENTS.md Claude Code skips: {first:#?}");
    assert_eq!(count(&first, "root claude rules"), 1, "CLAUDE.md once, from Claude Code itself");
    assert_eq!(count(&first, "deep rules v1"), 0);

    let second = message_texts(&requests[1]);
    assert_eq!(count(&second, "deep rules v1"), 1, "the nested block, once: {second:#?}");
    assert_eq!(count(&second, "a claude rules"), 1, "a/CLAUDE.md once, from Claude Code itself");
    assert_eq!(count(&second, "PostToolUse:Read hook additional context:"), 1);
    assert_eq!(count(&second, "root agents rules"), 1, "nothing given twice");

    let third = message_texts(&requests[2]);
    assert_eq!(count(&third, "deep rules v1"), 1, "the second read adds nothing: {third:#?}");
    assert_eq!(count(&third, "PostToolUse:Read hook additional context:"), 1);
    assert_eq!(count(&third, "root claude rules"), 1);
    assert_eq!(count(&third, "a claude rules"), 1);
}

#[test]
fn codex_gets_the_nested_agents_md_once_through_the_hook() {
    let Some(modules) = crate::common::agents_modules() else { return };
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules\n");
    t.write("r/a/b/AGENTS.md", "deep rules\n");
    t.write("r/a/b/f.rs", "code\n");
    // The dsh profile's user-global file, which Codex does not read.
    t.write("home/.dsh/AGENTS.md", "global dsh rules\n");
    let api = FakeApi::start("fake-openai.mjs");
    t.write(
        "home/.codex/config.toml",
        format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"stand-in\"\n\n[model_providers.stand-in]\nname = \"stand-in\"\nbase_url = \"http://127.0.0.1:{}/v1\"\nwire_api = \"responses\"\nenv_key = \"STAND_IN_KEY\"\n",
            api.port
        ),
    );
    t.write("home/.codex/hooks.json", snippet("Codex:").to_string());
    std::fs::write(&api.target, "*** Begin Patch\n*** Update File: a/b/f.rs\n@@\n-code\n+edited\n*** End Patch\n")
        .expect("target");
    let out = Command::new(modules.join(".bin/codex"))
        .args(["exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", "--sandbox", "workspace-write"])
        .arg("hi")
        .current_dir(t.root())
        .env("HOME", t.home())
        .env("CODEX_HOME", t.path("home/.codex"))
        .env("STAND_IN_KEY", "sk-test")
        .env_remove("XDG_STATE_HOME")
        .env_remove("DSH_HOME")
        .stdin(Stdio::null())
        .output()
        .expect("run codex");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "codex failed: {stderr}");
    assert_eq!(std::fs::read_to_string(t.path("r/a/b/f.rs")).ok().as_deref(), Some("edited\n"), "{stderr}");
    let requests = api.requests("/v1/responses");
    assert_eq!(requests.len(), 2, "start, then after the patch: {stderr}");
    let texts = |r: &Value| -> Vec<String> {
        r["input"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|i| i["content"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c["text"].as_str().map(str::to_string))
            .collect()
    };
    let first = texts(&requests[0]);
    assert_eq!(count(&first, "global dsh rules"), 1, "the session start's block: {first:#?}");
    assert_eq!(count(&first, "root rules"), 1, "Codex's own AGENTS.md, once");
    let second = texts(&requests[1]);
    assert_eq!(count(&second, "deep rules"), 1, "the patch reached a/b: {second:#?}");
    assert_eq!(count(&second, "root rules"), 1);
    assert_eq!(count(&second, "global dsh rules"), 1);
}

/// The agent's own files follow the repository's instructions-lsp.toml, as its views do
/// everywhere: Codex told to read CLAUDE.md (its `project_doc_fallback_filenames`) loads it itself,
/// so the hook does not give it again.
#[test]
fn the_agents_own_files_follow_the_repositorys_configuration() {
    let t = Tree::new();
    t.write("r/CLAUDE.md", "claude rules\n");
    let given = hook("codex", &t, &start(&t, "plain")).expect("Codex does not read CLAUDE.md by default");
    assert!(given.contains("claude rules"), "{given}");
    t.write("r/instructions-lsp.toml", "[codex]\nfile-names = [\"CLAUDE.md\"]\n");
    assert_eq!(hook("codex", &t, &start(&t, "configured")), None, "Codex loads CLAUDE.md itself now");
}

/// The stand-in APIs read a request body as one UTF-8 stream: an em dash split between two TCP
/// writes arrives whole (it once became U+FFFD, depending on where the bytes happened to split).
#[test]
fn the_stand_in_apis_keep_a_character_split_between_chunks() {
    use std::io::{Read, Write as _};
    for script in ["fake-anthropic.mjs", "fake-openai.mjs"] {
        let api = FakeApi::start(script);
        let body = "{\"text\":\"a — b\"}".as_bytes().to_vec();
        let split = body.iter().position(|&b| b == 0xE2).expect("the dash") + 1;
        let mut s = std::net::TcpStream::connect(("127.0.0.1", api.port)).expect("connect");
        write!(s, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).expect("head");
        s.write_all(&body[..split]).expect("first part");
        s.flush().expect("flush");
        std::thread::sleep(std::time::Duration::from_millis(100));
        s.write_all(&body[split..]).expect("rest");
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        let log = std::fs::read_to_string(&api.log).expect("the request log");
        assert!(log.contains("a — b"), "{script}: {log}");
    }
}
