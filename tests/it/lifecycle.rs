//! The lifecycle (docs/lifecycle.md) in process: the transition log, watching, persistence and restarts.

use std::path::Path;

use crate::common::lsp::{Client, uri};
use crate::common::tree::Tree;
use crate::common::{changes, pairs};
use serde_json::{Value, json};

async fn transitions(c: &mut Client, folder: &Path, since: u64) -> Value {
    c.request("instructions/transitions", json!({"uri": uri(folder), "since": since})).await.expect("transitions")
}

fn options(t: &Tree) -> Value {
    json!({"stateDir": t.path("state").to_string_lossy(), "profile": "ds4"})
}

#[tokio::test]
async fn an_agents_story_baseline_touch_edit_rewrite_delete_restart_reset() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    t.write("r/app/AGENTS.md", "app rules");
    t.write("r/app/core/AGENTS.md", "core rules");
    let app = t.path("r/app");
    let mut c = Client::start(&t.home(), &[&app], options(&t)).await;

    // 1. Baseline.
    c.wait_seq(&app, 1).await;
    let tr = transitions(&mut c, &app, 0).await;
    assert_eq!(tr["seq"], 1);
    assert_eq!(tr["reset"], false);
    let baseline = &tr["batches"][0];
    assert_eq!(baseline["reason"], "baseline");
    assert_eq!(changes(baseline), pairs(&[("set", "AGENTS.md"), ("set", "app/AGENTS.md")]));
    assert_eq!(baseline["changes"][0]["scope"], "project");
    assert!(
        baseline["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("<system-reminder>") && t.contains("Instructions from: app/AGENTS.md"))
    );

    // 2. A touch two directories deeper: `set` nested, exactly once.
    c.notify("instructions/touch", json!({"uri": uri(&t.path("r/app/core/io/file.rs")), "kind": "read"})).await;
    c.notify("instructions/touch", json!({"uri": uri(&t.path("r/app/core/io/other.rs")), "kind": "edit"})).await;
    c.wait_seq(&app, 2).await;
    let tr = transitions(&mut c, &app, 1).await;
    assert_eq!(tr["seq"], 2, "touched twice, delivered once");
    let touch = &tr["batches"][0];
    assert_eq!(touch["reason"], "touch");
    assert_eq!(changes(touch), pairs(&[("set", "app/core/AGENTS.md")]));
    assert_eq!(touch["changes"][0]["scope"], "nested");
    assert!(
        touch["text"]
            .as_str()
            .is_some_and(|t| t.contains("Additional instructions from: app/core/AGENTS.md\n\ncore rules"))
    );

    // 3. An edit on disk, seen by the watcher: `replace` with the new digest.
    t.write("r/app/AGENTS.md", "app rules, edited");
    c.wait_seq(&app, 3).await;
    let tr = transitions(&mut c, &app, 2).await;
    let edit = &tr["batches"][0];
    assert_eq!(edit["reason"], "change");
    assert_eq!(changes(edit), pairs(&[("replace", "app/AGENTS.md")]));
    assert_eq!(edit["changes"][0]["sha256"], instructions_lsp::chain::source::sha256_hex(b"app rules, edited"));
    assert_eq!(edit["changes"][0]["bytes"], 17);
    assert!(
        edit["text"]
            .as_str()
            .is_some_and(|t| t.contains("Updated instructions from: app/AGENTS.md\n\napp rules, edited"))
    );

    // 4. An unchanged rewrite: nothing (the client reports it too, deterministically).
    t.write("r/app/AGENTS.md", "app rules, edited");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&t.path("r/app/AGENTS.md")), "type": 2}]}),
    )
    .await;
    assert_eq!(transitions(&mut c, &app, 0).await["seq"], 3);

    // 5. A deletion: `remove`, with no digest.
    std::fs::remove_file(t.path("r/app/core/AGENTS.md")).expect("delete");
    c.wait_seq(&app, 4).await;
    let tr = transitions(&mut c, &app, 3).await;
    let removal = &tr["batches"][0];
    assert_eq!(changes(removal), pairs(&[("remove", "app/core/AGENTS.md")]));
    assert_eq!(removal["changes"][0]["sha256"], Value::Null);
    assert_eq!(removal["changes"][0]["bytes"], Value::Null);
    assert!(removal["text"].as_str().is_some_and(|t| t.contains("Instructions removed: app/core/AGENTS.md")));
    c.finish().await;

    // 7. Offline edits, then a restart with the same stateDir: seq continues, and one `restart`
    // batch holds only those edits.
    t.write("r/AGENTS.md", "root rules, edited offline");
    t.write("r/app/core/AGENTS.md", "core is back");
    let mut c = Client::start(&t.home(), &[&app], options(&t)).await;
    c.wait_seq(&app, 5).await;
    let tr = transitions(&mut c, &app, 4).await;
    assert_eq!(tr["seq"], 5);
    assert_eq!(tr["reset"], false);
    let restart = &tr["batches"][0];
    assert_eq!(restart["reason"], "restart");
    assert_eq!(changes(restart), pairs(&[("replace", "AGENTS.md"), ("set", "app/core/AGENTS.md")]));
    let all = transitions(&mut c, &app, 0).await;
    let seqs: Vec<u64> = all["batches"].as_array().expect("batches").iter().filter_map(|b| b["seq"].as_u64()).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5], "the log survives the restart");

    // 8. `since` newer than seq: a reset to one baseline batch of the whole current state.
    let tr = transitions(&mut c, &app, 99).await;
    assert_eq!(tr["reset"], true);
    assert_eq!(tr["batches"][0]["seq"], 5);
    assert_eq!(tr["batches"][0]["reason"], "baseline");
    assert_eq!(
        changes(&tr["batches"][0]),
        pairs(&[("set", "AGENTS.md"), ("set", "app/AGENTS.md"), ("set", "app/core/AGENTS.md")])
    );
    c.finish().await;
}

#[tokio::test]
async fn since_older_than_the_retained_log_resets() {
    let t = Tree::new();
    for i in 0..260 {
        t.write(&format!("r/d{i}/AGENTS.md"), format!("rules {i}"));
    }
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    for i in 0..260 {
        c.notify("instructions/touch", json!({"uri": uri(&t.path(&format!("r/d{i}/x.rs"))), "kind": "read"})).await;
    }
    c.wait_seq(&root, 260).await;
    let tr = transitions(&mut c, &root, 0).await;
    assert_eq!(tr["seq"], 260);
    assert_eq!(tr["reset"], true, "the log keeps 256 batches; seq 1..4 are gone");
    assert_eq!(tr["batches"].as_array().map(Vec::len), Some(1));
    assert_eq!(tr["batches"][0]["changes"].as_array().map(Vec::len), Some(260));
    let tr = transitions(&mut c, &root, 4).await;
    assert_eq!(tr["reset"], false);
    assert_eq!(tr["batches"].as_array().map(Vec::len), Some(256));
    c.finish().await;
}

#[tokio::test]
async fn a_new_winner_is_one_batch_and_a_git_marker_moves_the_root() {
    let t = Tree::new();
    t.write("r/CLAUDE.md", "claude rules");
    t.write("r/sub/AGENTS.md", "sub rules");
    let sub = t.path("r/sub");
    let mut c = Client::start(&t.home(), &[&sub], json!({"stateDir": null})).await;
    c.wait_seq(&sub, 1).await;
    t.write("r/AGENTS.md", "agents rules");
    c.wait_seq(&sub, 2).await;
    let tr = transitions(&mut c, &sub, 1).await;
    assert_eq!(tr["batches"].as_array().map(Vec::len), Some(1), "one batch for the new winner");
    let mut got = changes(&tr["batches"][0]);
    got.sort();
    assert_eq!(got, pairs(&[("remove", "CLAUDE.md"), ("set", "AGENTS.md")]));

    // A `.git` appearing in the folder makes it the root: the files above it leave the chain.
    std::fs::create_dir(t.path("r/sub/.git")).expect("git");
    c.wait_seq(&sub, 3).await;
    let tr = transitions(&mut c, &sub, 2).await;
    assert_eq!(changes(&tr["batches"][0]), pairs(&[("remove", "AGENTS.md")]));
    let e = c.effective(json!({})).await;
    assert_eq!(e["projectRoot"], uri(&sub));
    c.finish().await;
}

#[tokio::test]
async fn two_sessions_keep_independent_logs() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "shared");
    t.write("r/a/deep/AGENTS.md", "a deep");
    t.write("r/b/deep/AGENTS.md", "b deep");
    let (a, b) = (t.path("r/a"), t.path("r/b"));
    let mut c = Client::start(&t.home(), &[&a, &b], json!({"stateDir": null})).await;
    c.wait_seq(&a, 1).await;
    c.wait_seq(&b, 1).await;
    c.open(&t.path("r/a/deep/x.rs"), "").await;
    c.wait_seq(&a, 2).await;
    t.write("r/AGENTS.md", "shared, edited");
    c.wait_seq(&a, 3).await;
    c.wait_seq(&b, 2).await;
    let ta = transitions(&mut c, &a, 0).await;
    let tb = transitions(&mut c, &b, 0).await;
    let reasons = |tr: &Value| -> Vec<String> {
        tr["batches"]
            .as_array()
            .expect("batches")
            .iter()
            .map(|b| b["reason"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(reasons(&ta), ["baseline", "touch", "change"]);
    assert_eq!(reasons(&tb), ["baseline", "change"], "the touch in a is not in b's log");
    assert_eq!(c.did_changes(&b), [1, 2]);
    c.finish().await;
}

#[tokio::test]
async fn a_budget_omitted_file_is_not_delivered_and_a_later_touch_delivers_it() {
    let t = Tree::new();
    t.write("r/big/AGENTS.md", "x".repeat(300));
    t.write("r/big/inner/AGENTS.md", "inner");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null, "baselineMaxBytes": 700})).await;
    c.notify("instructions/touch", json!({"uri": uri(&t.path("r/big/inner/x.rs")), "kind": "read"})).await;
    c.wait_seq(&root, 1).await;
    let tr = transitions(&mut c, &root, 0).await;
    assert_eq!(
        changes(&tr["batches"][0]),
        pairs(&[("set", "big/inner/AGENTS.md")]),
        "big/AGENTS.md was omitted: not delivered"
    );
    c.set_config(None, json!({"stateDir": null, "baselineMaxBytes": 65536}));
    c.notify("workspace/didChangeConfiguration", json!({"settings": null})).await;
    c.wait_seq(&root, 2).await;
    let tr = transitions(&mut c, &root, 1).await;
    assert_eq!(tr["batches"][0]["reason"], "config");
    assert_eq!(changes(&tr["batches"][0]), pairs(&[("set", "big/AGENTS.md")]));
    c.finish().await;
}

#[tokio::test]
async fn without_watching_changes_come_through_registered_did_change_watched_files() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "v1");
    let root = t.root();
    let mut c = Client::spawn_only(&t.home()).await;
    c.set_config(None, json!({"watch": false, "stateDir": null}));
    c.initialize(&[&root], json!({}), json!({})).await;
    let reg = c.expect_message("client/registerCapability").await;
    let registration = &reg["params"]["registrations"][0];
    assert_eq!(registration["method"], "workspace/didChangeWatchedFiles");
    assert!(
        registration["registerOptions"]["watchers"][0]["globPattern"].as_str().is_some_and(|g| g.contains("AGENTS.md"))
    );
    // A package root that appears or goes changes where agents start.
    let glob = registration["registerOptions"]["watchers"][0]["globPattern"].as_str().unwrap_or_default();
    assert!(glob.contains(",Cargo.toml,") && glob.contains(",*.csproj"), "{glob}");
    c.wait_seq(&root, 1).await;
    t.write("r/AGENTS.md", "v2");
    c.sync().await;
    assert_eq!(transitions(&mut c, &root, 0).await["seq"], 1, "not watching: the disk change is not seen yet");
    c.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": uri(&t.path("r/AGENTS.md")), "type": 2}]}))
        .await;
    c.wait_seq(&root, 2).await;
    assert_eq!(changes(&transitions(&mut c, &root, 1).await["batches"][0]), pairs(&[("replace", "AGENTS.md")]));
    c.finish().await;
}

#[tokio::test]
async fn a_corrupt_or_unwritable_state_is_a_fresh_start_and_the_server_keeps_working() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "rules");
    let root = t.root();
    let state = t.path("state");
    std::fs::create_dir_all(&state).expect("state");
    let ledger = instructions_lsp::session::ledger::ledger_path(&state, &root);
    std::fs::write(&ledger, "{ not json").expect("corrupt");
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": state.to_string_lossy()})).await;
    c.wait_seq(&root, 1).await;
    assert_eq!(transitions(&mut c, &root, 0).await["batches"][0]["reason"], "baseline");
    // Ledgers are written in the background; shutdown waits for them.
    c.finish().await;
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&ledger).expect("ledger")).expect("a valid ledger replaced it");
    assert_eq!(saved["version"], 1);
    assert_eq!(saved["seq"], 1);

    // A stateDir that is a file: the ledger cannot be written; the session goes on in memory.
    let t = Tree::new();
    t.write("r/AGENTS.md", "rules");
    let blocker = t.write("not-a-dir", "file");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": blocker.to_string_lossy()})).await;
    c.wait_seq(&root, 1).await;
    t.write("r/AGENTS.md", "rules, edited");
    c.wait_seq(&root, 2).await;
    assert_eq!(transitions(&mut c, &root, 1).await["batches"][0]["reason"], "change");
    c.finish().await;
}

#[tokio::test]
async fn an_empty_chain_adds_no_batch() {
    let t = Tree::new();
    t.mkdir("r/empty");
    let folder = t.path("r/empty");
    let mut c = Client::start(&t.home(), &[&folder], json!({"stateDir": null})).await;
    c.sync().await;
    let tr = transitions(&mut c, &folder, 0).await;
    assert_eq!(tr["seq"], 0);
    assert_eq!(tr["batches"], json!([]));
    assert_eq!(tr["reset"], false);
    c.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_folder_never_leave_a_half_written_ledger() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root");
    for i in 0..30 {
        t.write(&format!("r/d{i}/AGENTS.md"), "x".repeat(2000 + i));
    }
    let root = t.root();
    let state = t.path("state");
    let opts = json!({"stateDir": state.to_string_lossy()});
    let mut one = Client::start(&t.home(), &[&root], opts.clone()).await;
    let mut two = Client::start(&t.home(), &[&root], opts).await;
    one.wait_seq(&root, 1).await;
    let ledger = instructions_lsp::session::ledger::ledger_path(&state, &root);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (ledger, stop) = (ledger.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            // Ledgers are written in the background: on a loaded machine the first one may land
            // after the touches are answered, so the reader goes on until it has read one.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while !stop.load(std::sync::atomic::Ordering::Relaxed)
                || (reads == 0 && std::time::Instant::now() < deadline)
            {
                if let Ok(text) = std::fs::read_to_string(&ledger) {
                    let parsed: Result<Value, _> = serde_json::from_str(&text);
                    assert!(parsed.is_ok(), "a half-written ledger: {} bytes", text.len());
                    reads += 1;
                }
            }
            reads
        })
    };
    for i in 0..30 {
        let file = uri(&t.path(&format!("r/d{i}/x.rs")));
        let client = if i % 2 == 0 { &mut one } else { &mut two };
        client.notify("instructions/touch", json!({"uri": file, "kind": "write"})).await;
        client.sync().await;
    }
    one.wait_seq(&root, 16).await;
    two.wait_seq(&root, 16).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let reads = reader.join().expect("no torn read");
    assert!(reads > 0);
    // Ledgers are written in the background; shutdown waits for them.
    one.finish().await;
    two.finish().await;
    let leftovers: Vec<_> = std::fs::read_dir(&state)
        .expect("state")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[tokio::test]
async fn diagnostics_follow_changes_on_disk() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "rules");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null, "profile": "dsh"})).await;
    c.wait_seq(&root, 1).await;
    let claude = t.write("r/CLAUDE.md", "written by another process");
    c.diagnostic(&claude, "shadowed").await;
    std::fs::remove_file(t.path("r/AGENTS.md")).expect("delete the winner");
    c.diagnostics_until(&claude, "CLAUDE.md wins now: no diagnostic", <[Value]>::is_empty).await;
    c.wait_seq(&root, 2).await;
    let tr = transitions(&mut c, &root, 1).await;
    let mut got = changes(&tr["batches"][0]);
    got.sort();
    assert_eq!(got, pairs(&[("remove", "AGENTS.md"), ("set", "CLAUDE.md")]));
    c.finish().await;
}

#[tokio::test]
async fn a_ledger_of_an_unknown_version_is_replaced() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "rules");
    let root = t.root();
    let state = t.mkdir("state");
    let ledger = instructions_lsp::session::ledger::ledger_path(&state, &root);
    std::fs::write(&ledger, r#"{"version": 99, "seq": 40}"#).expect("write");
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": state.to_string_lossy()})).await;
    c.wait_seq(&root, 1).await;
    let tr = transitions(&mut c, &root, 0).await;
    assert_eq!((tr["seq"].as_u64(), tr["batches"][0]["reason"].as_str()), (Some(1), Some("baseline")));
    c.finish().await;
}

#[tokio::test]
async fn an_unrelated_change_never_hands_over_what_the_budget_kept_out() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "a".repeat(500));
    t.write("r/app/AGENTS.md", "app rules");
    let app = t.path("r/app");
    let mut c = Client::start(&t.home(), &[&app], json!({"stateDir": null, "baselineMaxBytes": 700})).await;
    c.wait_seq(&app, 1).await;
    let tr = transitions(&mut c, &app, 0).await;
    assert_eq!(changes(&tr["batches"][0]), pairs(&[("set", "app/AGENTS.md")]), "the root is omitted by the budget");
    // An edit of another file: only its replace, not the omitted root on the side.
    t.write("r/app/AGENTS.md", "app rules, edited");
    c.wait_seq(&app, 2).await;
    assert_eq!(changes(&transitions(&mut c, &app, 1).await["batches"][0]), pairs(&[("replace", "app/AGENTS.md")]));
    // The omitted file itself changes: it is offered again (and fits alone now).
    t.write("r/AGENTS.md", "root, short now");
    c.wait_seq(&app, 3).await;
    assert_eq!(changes(&transitions(&mut c, &app, 2).await["batches"][0]), pairs(&[("set", "AGENTS.md")]));
    c.finish().await;
}

/// Every directory a touch reaches is watched from then on, one touch after another: a file
/// made there later reaches the agent without the client reporting it.
#[tokio::test]
async fn files_made_later_in_directories_touches_reached_reach_the_agent() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    t.write("r/lib/a/x.rs", "");
    t.write("r/lib/b/y.rs", "");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], options(&t)).await;
    c.wait_seq(&root, 1).await;
    c.notify("instructions/touch", json!({"uri": uri(&t.path("r/lib/a/x.rs")), "kind": "read"})).await;
    c.notify("instructions/touch", json!({"uri": uri(&t.path("r/lib/b/y.rs")), "kind": "read"})).await;
    c.sync().await;
    assert_eq!(transitions(&mut c, &root, 0).await["seq"], 1, "the touches reached no instruction file");
    t.write("r/lib/b/AGENTS.md", "b rules");
    c.wait_seq(&root, 2).await;
    assert_eq!(changes(&transitions(&mut c, &root, 1).await["batches"][0]), pairs(&[("set", "lib/b/AGENTS.md")]));
    t.write("r/lib/a/AGENTS.md", "a rules");
    c.wait_seq(&root, 3).await;
    assert_eq!(changes(&transitions(&mut c, &root, 2).await["batches"][0]), pairs(&[("set", "lib/a/AGENTS.md")]));
    c.finish().await;
}

/// A settings change that moves the global file watches its new directory: the file made there
/// later reaches the agent without the client reporting it.
#[tokio::test]
async fn a_global_file_moved_by_the_settings_is_watched_where_it_now_is() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    std::fs::create_dir_all(t.path("g1")).expect("g1");
    std::fs::create_dir_all(t.path("g2")).expect("g2");
    let root = t.root();
    let global = |dir: &str| t.path(dir).join("RULES.md").to_string_lossy().into_owned();
    let mut c =
        Client::start(&t.home(), &[&root], json!({"stateDir": null, "globalInstructionFile": global("g1")})).await;
    c.wait_seq(&root, 1).await;
    c.set_config(None, json!({"stateDir": null, "globalInstructionFile": global("g2")}));
    c.notify("workspace/didChangeConfiguration", json!({"settings": null})).await;
    c.sync().await;
    assert_eq!(transitions(&mut c, &root, 0).await["seq"], 1, "no global file yet, nothing new");
    t.write("g2/RULES.md", "global rules");
    c.wait_seq(&root, 2).await;
    let tr = transitions(&mut c, &root, 1).await;
    let batch = &tr["batches"][0];
    assert_eq!(batch["changes"][0]["action"], "set", "{batch}");
    assert!(batch["text"].as_str().is_some_and(|t| t.contains("global rules")), "{batch}");
    c.finish().await;
}
