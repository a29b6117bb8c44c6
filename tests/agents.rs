//! Agent profiles verified against the real agents (issue 9). `CODEX_BIN` names the Codex CLI
//! that `scripts/install-agents.sh` installs; `.ci/run` always sets it.

mod common;

use std::path::Path;
use std::process::Command;

use common::tree::Tree;
use serde_json::Value;

/// The instruction message of `codex debug prompt-input`, or "" when Codex sends none.
fn codex_says(codex: &str, home: &Path, cwd: &Path, max_bytes: u64, fallbacks: &[&str]) -> String {
    let list = format!(
        "project_doc_fallback_filenames=[{}]",
        fallbacks.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(",")
    );
    let out = Command::new(codex)
        .args(["-c", &list, "-c", &format!("project_doc_max_bytes={max_bytes}"), "debug", "prompt-input", "hi"])
        .current_dir(cwd)
        .env("CODEX_HOME", home)
        .env("HOME", home)
        .output()
        .expect("run codex");
    assert!(out.status.success(), "codex failed: {}", String::from_utf8_lossy(&out.stderr));
    let items: Value = serde_json::from_slice(&out.stdout).expect("codex prints JSON");
    for item in items.as_array().into_iter().flatten() {
        for c in item["content"].as_array().into_iter().flatten() {
            if let Some(text) = c["text"].as_str().filter(|t| t.contains("<INSTRUCTIONS>")) {
                return text.to_string();
            }
        }
    }
    String::new()
}

fn ours(home: &Path, cwd: &Path, max_bytes: u64, fallbacks: &[&str]) -> String {
    let list = serde_json::to_string(fallbacks).expect("json");
    let out = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(["effective", "--profile", "codex", "--set", &format!("baselineMaxBytes={max_bytes}")])
        .args(["--set", &format!("instructionFileCandidates={list}")])
        .current_dir(cwd)
        .env("CODEX_HOME", home)
        .env("HOME", home)
        .output()
        .expect("run instructions-lsp");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8").trim_end_matches('\n').to_string()
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn the_codex_profile_matches_codex_debug_prompt_input() {
    let Some(codex) = std::env::var("CODEX_BIN").ok().filter(|c| !c.is_empty()) else {
        assert!(std::env::var_os("CI").is_none(), "CI must set CODEX_BIN (scripts/install-agents.sh)");
        eprintln!("CODEX_BIN is not set: run scripts/install-agents.sh to compare with the real Codex");
        return;
    };
    let names = ["AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "GUIDE.md"];
    let texts = ["rules\n", "   \n", "", "ünïcödé rules 🎉\n", "a longer set of rules for this directory\n"];
    let mut rng = Rng(0x00C0_DE5E_ED00);
    for case in 0..30 {
        let t = Tree::new();
        let depth = 1 + rng.below(4) as usize;
        let mut dir = t.root();
        let mut dirs = vec![dir.clone()];
        for d in 0..depth {
            dir = dir.join(format!("d{d}"));
            dirs.push(dir.clone());
        }
        std::fs::create_dir_all(&dir).expect("dirs");
        for d in &dirs {
            for name in names {
                if rng.below(3) == 0 {
                    let text = texts[rng.below(texts.len() as u64) as usize].repeat(1 + rng.below(3) as usize);
                    std::fs::write(d.join(name), text).expect("write");
                }
            }
        }
        if rng.below(2) == 0 {
            t.write("home/AGENTS.md", "global rules\n");
        }
        let max_bytes = [0, 7, 40, 95, 32_768][rng.below(5) as usize];
        let fallbacks: &[&str] = if rng.below(2) == 0 { &["CLAUDE.md", "GUIDE.md"] } else { &[] };
        let expected = codex_says(&codex, &t.home(), &dir, max_bytes, fallbacks);
        let got = ours(&t.home(), &dir, max_bytes, fallbacks);
        assert_eq!(got, expected, "case {case}: budget {max_bytes}, fallbacks {fallbacks:?}");
    }
}
