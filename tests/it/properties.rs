//! Properties over generated input, a fixed number of cases each: rendering and its
//! budget, settings parsing, the params of every method, position conversion.

use instructions_lsp::chain::render::{Item, Request, SectionStyle, render};
use instructions_lsp::chain::settings::{Env, Frame, Settings};
use instructions_lsp::lsp::convert::{Encoding, apply_change, offset, position};
use instructions_lsp::lsp::ext::{self, EffectiveParams, TouchParams, TransitionsParams};
use proptest::prelude::*;
use serde_json::Value;
use tower_lsp_server::lsp_types::{Position, Range, TextDocumentContentChangeEvent};

const CASES: u32 = 256;

/// Text built from fragments that matter: closing tags, markers, multi-byte characters.
fn text() -> impl Strategy<Value = String> {
    let fragments = prop::sample::select(vec![
        "x",
        "rules ",
        "\n",
        "é",
        "日本",
        "🎉",
        "</workspace-context>",
        "<!-- project-instruction-files:path=",
        "</system-reminder>",
        "<!-- Project instruction budget 9 bytes: -->",
        "-->",
        "\\",
        "%",
    ]);
    prop::collection::vec(fragments, 0..60).prop_map(|parts| parts.concat())
}

fn heading() -> impl Strategy<Value = String> {
    let parts = prop::sample::select(vec!["AGENTS.md", "pkg", "文档", "a b", "x<", "workspace-context>", "CLAUDE.md"]);
    prop::collection::vec(parts, 1..4).prop_map(|p| p.join("/"))
}

fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![Just(Frame::WorkspaceContext), Just(Frame::SystemReminder)]
}

fn style() -> impl Strategy<Value = SectionStyle> {
    prop_oneof![Just(SectionStyle::Initial), Just(SectionStyle::Additional), Just(SectionStyle::Updated)]
}

/// Any JSON value, a few levels deep.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        text().prop_map(Value::String),
        prop::sample::select(vec!["dsh", "ds4", "AGENTS.md", "~", "~/x", "/abs", "", ".", "..", "file:///a", "read"])
            .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        // Every settings key, and the keys of the methods' params.
        let mut names: Vec<&'static str> = instructions_lsp::chain::settings::KEYS.to_vec();
        names.extend(["uri", "unsaved", "since", "kind", "other"]);
        let keys = prop::sample::select(names);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((keys, inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

/// Parses a complete budget marker: `N` and its parts, or `None` when it is not one.
fn parse_marker(frame: Frame, line: &str) -> Option<(i64, Vec<String>)> {
    let body = match frame {
        Frame::WorkspaceContext => line.strip_prefix("<!-- Project instruction budget ")?.strip_suffix(" -->")?,
        Frame::SystemReminder => line.strip_prefix("Workspace instruction budget ")?,
    };
    let (n, parts) = body.split_once(" bytes: ")?;
    Some((n.parse().ok()?, parts.split("; ").map(str::to_string).collect()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn a_block_fits_its_budget_and_content_cannot_close_its_frame(
        items in prop::collection::vec((heading(), text()), 0..5),
        budget in -5i64..2500,
        frame in frame(),
        style in style(),
    ) {
        let items: Vec<Item> = items.iter().map(|(h, c)| Item { heading: h, content: c }).collect();
        let r = render(&Request { frame, budget_bytes: budget, items: &items, style, notices: &[] });
        if budget <= 0 || items.is_empty() {
            prop_assert_eq!(r.text.as_str(), "");
            return Ok(());
        }
        prop_assert!(r.text.len() <= budget as usize, "{} > {}", r.text.len(), budget);
        let (open, close) = match frame {
            Frame::WorkspaceContext => ("<workspace-context source=\"project-instruction-files\">", "</workspace-context>"),
            Frame::SystemReminder => ("<system-reminder>", "</system-reminder>"),
        };
        if r.text.starts_with(open) {
            // The envelope's own closing tag is the only one, at the very end.
            prop_assert_eq!(r.text.matches(close).count(), 1, "{}", r.text);
            prop_assert!(r.text.ends_with(close));
        } else {
            prop_assert_eq!(r.text.matches(close).count(), 0, "{}", r.text);
        }
        // A complete marker (one followed by more of the block; the budget's step 6 (docs/rendering.md) may cut a marker
        // that stands alone) parses, names the budget, and its cut is within the file.
        let segments: Vec<&str> = r.text.split("\n\n").collect();
        let complete = &segments[..segments.len().saturating_sub(1)];
        for line in complete.iter().take(2) {
            if let Some((n, parts)) = parse_marker(frame, line) {
                prop_assert_eq!(n, budget);
                for part in parts {
                    prop_assert!(part.starts_with("omitted ") || part.starts_with("truncated "), "{}", part);
                    if let Some(rest) = part.strip_prefix("truncated ") {
                        let (_, numbers) = rest.rsplit_once(" from ").expect("from");
                        let (x, y) = numbers.strip_suffix(" bytes").and_then(|n| n.split_once(" to ")).expect("to");
                        let (x, y): (usize, usize) = (x.parse().expect("x"), y.parse().expect("y"));
                        prop_assert!(y <= x);
                    }
                }
            }
        }
        if let Some(t) = r.truncated {
            prop_assert!(items[t.index].content.is_char_boundary(t.included_bytes));
        }
    }

    #[test]
    fn settings_parse_anything_without_panicking_into_valid_candidates(value in json()) {
        let env = Env { home: Some("/home/u".into()), dsh_home: None, xdg_state_home: None };
        let (settings, _) = Settings::parse(&value, None, &env);
        let (again, _) = Settings::parse(&value, Some(&settings), &env);
        for c in settings.all_names() {
            prop_assert!(instructions_lsp::chain::settings::is_valid_candidate(c), "{}", c);
        }
        prop_assert_eq!(settings.profile, again.profile);
    }

    #[test]
    fn params_of_every_method_parse_or_say_what_is_accepted(value in json()) {
        let results = [
            ext::parse::<EffectiveParams>(ext::EFFECTIVE, EffectiveParams::SHAPE, value.clone()).err(),
            ext::parse::<TransitionsParams>(ext::TRANSITIONS, TransitionsParams::SHAPE, value.clone()).err(),
            ext::parse::<TouchParams>(ext::TOUCH, TouchParams::SHAPE, value).err(),
        ];
        for err in results.into_iter().flatten() {
            prop_assert_eq!(err.code, tower_lsp_server::jsonrpc::ErrorCode::InvalidParams);
            prop_assert!(err.message.contains("accepted params: {"), "{}", err.message);
        }
    }

    #[test]
    fn positions_and_offsets_stay_inside_the_text(
        t in text(),
        line in 0u32..12,
        character in 0u32..80,
        utf8 in any::<bool>(),
    ) {
        let enc = if utf8 { Encoding::Utf8 } else { Encoding::Utf16 };
        let at = offset(&t, Position::new(line, character), enc);
        prop_assert!(at <= t.len());
        prop_assert!(t.is_char_boundary(at));
        let back = position(t.as_bytes(), at, enc);
        prop_assert!(back.line <= line);
        prop_assert_eq!(offset(&t, back, enc), at, "position and offset round trip");
    }

    #[test]
    fn incremental_edits_never_break_the_text(
        t in text(),
        edits in prop::collection::vec((0u32..10, 0u32..40, 0u32..10, 0u32..40, text()), 0..8),
    ) {
        let mut doc = t;
        for (sl, sc, el, ec, new) in edits {
            let change = TextDocumentContentChangeEvent {
                range: Some(Range::new(Position::new(sl, sc), Position::new(el, ec))),
                range_length: None,
                text: new,
            };
            apply_change(&mut doc, &change, Encoding::Utf16);
            prop_assert!(std::str::from_utf8(doc.as_bytes()).is_ok());
        }
    }
}

/// Arbitrary params sent to the real server: each gets an answer (or is a notification), and a
/// good request is answered correctly after them.
#[tokio::test]
async fn the_server_survives_arbitrary_params_of_every_method() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let t = crate::common::tree::Tree::new();
    t.write("r/AGENTS.md", "root rules");
    let root = t.root();
    let mut c = crate::common::lsp::Client::start(&t.home(), &[&root], serde_json::json!({"stateDir": null})).await;
    let mut runner = TestRunner::deterministic();
    let strategy = json();
    for i in 0..CASES {
        let params = strategy.new_tree(&mut runner).expect("value").current();
        match i % 4 {
            0 => {
                let _ = c.request("instructions/effective", params).await;
            }
            1 => {
                let _ = c.request("instructions/transitions", params).await;
            }
            2 => c.notify("instructions/touch", params).await,
            _ => c.notify("textDocument/didChange", params).await,
        }
    }
    let e = c.effective(serde_json::json!({})).await;
    assert_eq!(e["baseline"]["files"][0]["path"], "AGENTS.md");
    c.finish().await;
}

/// A hostile tree from a few numbers: rule folders with links back up the tree, and files that
/// import each other any number of times.
#[derive(Debug, Clone)]
struct HostileTree {
    /// For each rules sub-folder, the folder a link in it points back to (0: the rules folder).
    links: Vec<usize>,
    /// For each of the import files, the files it imports, with repetitions.
    imports: Vec<Vec<usize>>,
}

fn hostile_tree() -> impl Strategy<Value = HostileTree> {
    let links = prop::collection::vec(0usize..4, 0..6);
    let imports = prop::collection::vec(prop::collection::vec(0usize..6, 0..16), 1..6);
    (links, imports).prop_map(|(links, imports)| HostileTree { links, imports })
}

#[cfg(unix)]
fn build_hostile(root: &std::path::Path, t: &HostileTree) {
    use std::fs;
    fs::create_dir_all(root.join(".git")).expect("git");
    let rules = root.join(".claude/rules");
    let mut folders = vec![rules.clone()];
    for (i, target) in t.links.iter().enumerate() {
        let dir = folders[i % folders.len()].join(format!("d{i}"));
        fs::create_dir_all(&dir).expect("dir");
        fs::write(dir.join(format!("rule{i}.md")), format!("rule {i}")).expect("rule");
        let back = folders[*target % folders.len()].clone();
        std::os::unix::fs::symlink(&back, dir.join(format!("up{i}"))).expect("link");
        folders.push(dir);
    }
    fs::create_dir_all(&rules).expect("rules");
    fs::write(rules.join("top.md"), "top rule").expect("rule");
    let n = t.imports.len();
    for (i, targets) in t.imports.iter().enumerate() {
        let body: String = targets.iter().map(|j| format!("@./f{}.md\n", j % n)).collect();
        let name = if i == 0 { "GEMINI.md".to_string() } else { format!("f{i}.md") };
        fs::write(root.join(&name), format!("file {i}\n{body}")).expect("import file");
        if i == 0 {
            fs::write(root.join("f0.md"), format!("file 0\n{body}")).expect("import file");
            fs::write(root.join("CLAUDE.md"), format!("claude\n{body}")).expect("claude");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Whatever the links and imports, every agent's view is computed, each rule file appears
    /// once, and no text grows past the caps.
    #[cfg(unix)]
    #[test]
    fn hostile_trees_give_bounded_views(t in hostile_tree()) {
        use instructions_lsp::chain::agents::{self, AgentEnv, Overrides};
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("r");
        build_hostile(&root, &t);
        let env = AgentEnv { home: Some(dir.path().join("home")), ..AgentEnv::default() };
        for name in agents::NAMES {
            let profile = agents::profile(name, &env, &Overrides::default()).expect("profile");
            let view = agents::load(&profile, &root, &[root.join(".claude/rules/d0/x.md")]);
            prop_assert!(view.text.len() as u64 <= agents::imports::EXPANSION_CAP + 64 * 1024, "{name}: {}", view.text.len());
            let mut rules: Vec<_> = view.files.iter().filter(|f| f.path.to_string_lossy().contains("/rule")).map(|f| std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone())).collect();
            let all = rules.len();
            rules.sort();
            rules.dedup();
            prop_assert_eq!(all, rules.len(), "{}: a rule file appears twice", name);
        }
    }
}
