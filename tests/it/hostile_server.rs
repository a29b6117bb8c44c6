//! Hostile repositories, faults and load, against the real server in process. After
//! each, the server answers the next request correctly and has written nothing in the workspace.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::common::lsp::{Client, uri};
use crate::common::tree::Tree;
use serde_json::{Value, json};

/// Every path below `dir` with its size and modification time: what "nothing written" means.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, Option<SystemTime>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
            if meta.is_dir() {
                stack.push(p.clone());
            }
            out.insert(p, (meta.len(), meta.modified().ok()));
        }
    }
    out
}

fn paths(block: &Value) -> Vec<String> {
    block["files"]
        .as_array()
        .map_or_else(Vec::new, |f| f.iter().map(|f| f["path"].as_str().unwrap_or("").to_string()).collect())
}

fn skipped(e: &Value) -> Vec<(String, String)> {
    e["skipped"]
        .as_array()
        .map(|s| {
            s.iter()
                .map(|s| (s["path"].as_str().unwrap_or("").to_string(), s["reason"].as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Starts a server on `folder`, runs `check`, asserts the workspace is untouched and the server
/// still answers a good request about a sane sibling folder.
async fn survive(t: &Tree, folder: &Path, options: Value, check: impl AsyncFnOnce(&mut Client)) {
    let sane = t.path("sane");
    std::fs::create_dir_all(&sane).expect("sane");
    std::fs::write(sane.join("AGENTS.md"), "sane rules").expect("sane file");
    let before = listing(&t.root());
    let mut c = Client::start(&t.home(), &[folder, &sane], options).await;
    check(&mut c).await;
    let e = c.effective(json!({"uri": uri(&sane)})).await;
    assert_eq!(paths(&e["baseline"]), ["AGENTS.md"], "the server still answers correctly");
    c.finish().await;
    assert_eq!(listing(&t.root()), before, "nothing was written in the workspace");
}

#[cfg(unix)]
#[tokio::test]
async fn symlink_loops_and_links_out_of_the_root() {
    let t = Tree::new();
    let root = t.root();
    t.symlink("AGENTS.md", "r/AGENTS.md"); // a link to itself
    t.write("outside.md", "OUTSIDE SECRET");
    t.symlink(t.path("outside.md"), "r/CLAUDE.md");
    t.mkdir("r/loop");
    t.symlink("..", "r/loop/up");
    for policy in ["skip", "withinRoot", "follow"] {
        survive(&t, &root, json!({"stateDir": null, "symlinks": policy}), async |c: &mut Client| {
            c.open(&t.path("r/loop/up/up/up/x.rs"), "").await;
            let e = c.effective(json!({"uri": uri(&root)})).await;
            let rendered = e["baseline"]["rendered"].as_str().unwrap_or("");
            let reasons = skipped(&e);
            match policy {
                // The touch went through `loop/up` (a link to the root): the same names are on its
                // way again, each examined once; the walk is bounded by the touched path.
                "skip" => {
                    assert_eq!(
                        reasons[..2],
                        [("AGENTS.md".into(), "symlink".into()), ("CLAUDE.md".into(), "symlink".into())]
                    );
                    assert!(reasons.len() <= 8, "{reasons:?}");
                }
                "withinRoot" => {
                    assert_eq!(
                        reasons[0],
                        ("AGENTS.md".to_string(), "unreadable".to_string()),
                        "a loop cannot be resolved"
                    );
                    assert_eq!(reasons[1], ("CLAUDE.md".to_string(), "outsideRoot".to_string()));
                    assert!(!rendered.contains("OUTSIDE SECRET"));
                }
                _ => assert!(rendered.contains("OUTSIDE SECRET"), "follow loads what the link points at"),
            }
        })
        .await;
    }
}

#[tokio::test]
async fn a_sparse_10_gb_agents_md_is_never_read() {
    let t = Tree::new();
    let root = t.root();
    let f = std::fs::File::create(t.path("r/AGENTS.md")).expect("create");
    f.set_len(10 * 1024 * 1024 * 1024).expect("a sparse 10 GB file");
    t.write("r/CLAUDE.md", "claude rules");
    survive(&t, &root, json!({"stateDir": null, "profile": "dsh"}), async |c: &mut Client| {
        let e = c.effective(json!({"uri": uri(&root)})).await;
        assert_eq!(paths(&e["baseline"]), ["CLAUDE.md"]);
        assert_eq!(skipped(&e)[0], ("AGENTS.md".to_string(), "tooLarge".to_string()));
        let d = c.diagnostic(&t.path("r/AGENTS.md"), "tooLarge").await;
        assert!(d["message"].as_str().is_some_and(|m| m.contains("10,737,418,240 bytes")), "{d}");
    })
    .await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_fifo_or_a_directory_named_agents_md_never_blocks_and_never_loads() {
    let t = Tree::new();
    let root = t.root();
    let fifo = t.path("r/AGENTS.md");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
    assert!(made, "mkfifo");
    let gemini_fifo = t.path("r/GEMINI.md");
    assert!(std::process::Command::new("mkfifo").arg(&gemini_fifo).status().is_ok_and(|s| s.success()), "mkfifo");
    t.write("r/CLAUDE.md", "claude rules");
    t.mkdir("r/sub/AGENTS.md");
    t.write("r/sub/CLAUDE.md", "sub rules");
    survive(&t, &t.path("r/sub"), json!({"stateDir": null}), async |c: &mut Client| {
        let e = c.effective(json!({"uri": uri(&t.path("r/sub"))})).await;
        assert_eq!(paths(&e["baseline"]), ["CLAUDE.md", "sub/CLAUDE.md"]);
        assert_eq!(skipped(&e), [("AGENTS.md".into(), "notAFile".into()), ("sub/AGENTS.md".into(), "notAFile".into())]);
        // Every agent profile answers too: a FIFO that some agent would open is never read.
        let all = c.effective(json!({"uri": uri(&t.path("r/sub")), "profile": "all"})).await;
        let opencode = &all["profiles"][5];
        assert_eq!(opencode["profile"], "opencode");
        let fifo_status = opencode["files"].as_array().and_then(|f| f.iter().find(|f| f["uri"] == uri(&fifo)));
        assert_eq!(fifo_status.map(|f| f["status"].clone()), Some(json!("unreadable")), "{opencode}");
        let gemini = c.effective(json!({"uri": uri(&t.path("r/sub")), "profile": "gemini"})).await;
        let files = gemini["files"].as_array().cloned().unwrap_or_default();
        let statuses: Vec<(Value, Value)> = files.iter().map(|f| (f["uri"].clone(), f["status"].clone())).collect();
        assert_eq!(statuses, [(json!(uri(&gemini_fifo)), json!("unreadable"))], "probed, never opened");
    })
    .await;
    let _ = root;
}

#[cfg(unix)]
#[tokio::test]
async fn names_that_are_not_utf8_are_reached_by_touches() {
    use std::os::unix::ffi::OsStrExt;
    let t = Tree::new();
    let root = t.root();
    let odd = root.join(std::ffi::OsStr::from_bytes(b"caf\xe9-latin1"));
    std::fs::create_dir_all(&odd).expect("mkdir");
    std::fs::write(odd.join("AGENTS.md"), "odd rules").expect("write");
    survive(&t, &root, json!({"stateDir": null}), async |c: &mut Client| {
        c.notify("instructions/touch", json!({"uri": uri(&odd.join("x.rs")), "kind": "read"})).await;
        let e = c.effective(json!({"uri": uri(&root)})).await;
        assert_eq!(e["nested"][0]["files"][0]["uri"], uri(&odd.join("AGENTS.md")));
        assert!(e["nested"][0]["rendered"].as_str().is_some_and(|r| r.contains("odd rules")));
    })
    .await;
}

#[tokio::test]
async fn depth_200_and_paths_of_4000_bytes() {
    let t = Tree::new();
    let root = t.root();
    let mut deep = root.clone();
    for i in 0..200 {
        deep.push(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).expect("depth 200");
    std::fs::write(deep.join("AGENTS.md"), "deepest").expect("write");
    let mut long = root.clone();
    while long.as_os_str().len() < 3800 {
        long.push("l".repeat(200));
    }
    std::fs::create_dir_all(&long).expect("a 4000-byte path");
    std::fs::write(long.join("AGENTS.md"), "long").expect("write");
    survive(&t, &root, json!({"stateDir": null}), async |c: &mut Client| {
        c.open(&deep.join("file.rs"), "").await;
        c.open(&long.join("file.rs"), "").await;
        let e = c.effective(json!({"uri": uri(&root)})).await;
        let nested: Vec<String> = e["nested"].as_array().expect("nested").iter().flat_map(paths).collect();
        assert_eq!(nested.len(), 2, "{nested:?}");
        assert!(nested[0].ends_with("d199/AGENTS.md"));
        let e = c.effective(json!({"uri": uri(&deep)})).await;
        assert!(e["preview"]["files"].as_array().is_some_and(Vec::is_empty));
    })
    .await;
}

#[tokio::test]
async fn one_hundred_thousand_siblings() {
    let t = Tree::new();
    let root = t.root();
    let crowd = t.mkdir("r/crowd");
    for i in 0..100_000 {
        std::fs::File::create(crowd.join(format!("f{i}.txt"))).expect("sibling");
    }
    std::fs::write(crowd.join("AGENTS.md"), "crowd rules").expect("write");
    survive(&t, &root, json!({"stateDir": null}), async |c: &mut Client| {
        c.open(&crowd.join("f99999.txt"), "").await;
        let e = c.effective(json!({"uri": uri(&root)})).await;
        assert_eq!(paths(&e["nested"][0]), ["crowd/AGENTS.md"]);
    })
    .await;
}

#[tokio::test]
async fn case_variants_are_other_names_on_a_case_sensitive_file_system() {
    let t = Tree::new();
    let root = t.root();
    t.write("r/agents.md", "lowercase");
    t.write("r/Claude.MD", "mixed case");
    survive(&t, &root, json!({"stateDir": null}), async |c: &mut Client| {
        let e = c.effective(json!({"uri": uri(&root)})).await;
        let case_insensitive = std::fs::symlink_metadata(t.path("r/AGENTS.md")).is_ok();
        if case_insensitive {
            assert_eq!(paths(&e["baseline"]), ["AGENTS.md"]);
        } else {
            assert_eq!(e["baseline"]["files"], json!([]), "agents.md is not AGENTS.md here");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_that_vanish_or_change_mode_during_requests_are_never_errors() {
    let t = Tree::new();
    let root = t.root();
    t.write("r/CLAUDE.md", "stable");
    let flicker = t.path("r/AGENTS.md");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let racer = {
        let (flicker, stop) = (flicker.clone(), stop.clone());
        std::thread::spawn(move || {
            use std::os::unix::fs::PermissionsExt;
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::write(&flicker, format!("version {n}"));
                let _ = std::fs::set_permissions(
                    &flicker,
                    std::fs::Permissions::from_mode(if n.is_multiple_of(2) { 0o000 } else { 0o644 }),
                );
                let _ = std::fs::remove_file(&flicker);
                n += 1;
            }
        })
    };
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    for _ in 0..300 {
        let e = c.effective(json!({"uri": uri(&root)})).await;
        let files = paths(&e["baseline"]);
        assert!(files == ["CLAUDE.md"] || files == ["AGENTS.md"], "{files:?}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    racer.join().expect("racer");
    let _ = std::fs::remove_file(&flicker);
    t.write("r/AGENTS.md", "settled");
    c.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": uri(&flicker), "type": 1}]})).await;
    let e = c.effective(json!({"uri": uri(&root)})).await;
    assert!(e["baseline"]["rendered"].as_str().is_some_and(|r| r.contains("settled")));
    c.finish().await;
}

#[tokio::test]
async fn a_thousand_concurrent_requests_are_all_answered() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root");
    t.write("r/a/AGENTS.md", "a");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let params: Vec<Value> = (0..1000)
        .map(|i| match i % 3 {
            0 => json!({}),
            1 => json!({"uri": uri(&t.path(&format!("r/a/f{i}.rs")))}),
            _ => json!({"uri": 42}),
        })
        .collect();
    let answers = c.requests("instructions/effective", params).await;
    for (i, a) in answers.iter().enumerate() {
        match i % 3 {
            0 => assert_eq!(a.as_ref().map(|e| paths(&e["baseline"])), Ok(vec!["AGENTS.md".to_string()])),
            1 => assert_eq!(a.as_ref().map(|e| paths(&e["preview"])), Ok(vec!["a/AGENTS.md".to_string()])),
            _ => assert_eq!(a.as_ref().err().map(|e| e["code"].clone()), Some(json!(-32602))),
        }
    }
    c.finish().await;
}

#[tokio::test]
async fn ten_thousand_rapid_edits_and_edits_out_of_range() {
    let t = Tree::new();
    let file = t.write("r/AGENTS.md", "");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    c.open(&file, "").await;
    for i in 0..10_000u32 {
        c.change(&file, i as i32 + 2, Some(((0, i), (0, i))), "x").await;
    }
    // Out of range: clamped to the end, never a crash.
    c.change(&file, 10_002, Some(((900, 5), (1000, 0))), "!").await;
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri(&t.path("r/never-opened.md")), "version": 1}, "contentChanges": [{"text": "?"}]})).await;
    let e = c.effective(json!({"unsaved": true})).await;
    let expected = format!("## AGENTS.md\n\n{}!\n\n", "x".repeat(10_000));
    assert!(e["baseline"]["rendered"].as_str().is_some_and(|r| r.contains(&expected)));
    c.finish().await;
}
