//! opencode: its profile (one `AGENTS.md` anywhere hides every `CLAUDE.md`), and its
//! `Instructions from: <path>` entries.

use crate::chain::model::env::AgentEnv;
use crate::chain::model::profile::{AgentProfile, Budget, GlobalRule, Imports, Join, Nested, Order, Pick, Probe, Root};
use crate::chain::model::view::{Entry, Scope};

/// The opencode profile for `env`.
pub(crate) fn profile(env: &AgentEnv) -> AgentProfile {
    let mut candidates = vec!["AGENTS.md".to_string()];
    if !env.opencode_no_claude {
        candidates.push("CLAUDE.md".into());
    }
    candidates.push("CONTEXT.md".into());
    let mut global = Vec::new();
    if let Some(dir) = &env.opencode_config_dir {
        global.push(vec![dir.join("AGENTS.md")]);
    }
    let config = env.xdg_config_home.clone().unwrap_or_else(|| env.home_join(".config"));
    global.push(vec![config.join("opencode/AGENTS.md")]);
    if !env.opencode_no_claude {
        global.push(vec![env.home_join(".claude/CLAUDE.md")]);
    }
    AgentProfile {
        name: "opencode",
        mirrors: "opencode 1.18.33",
        candidates,
        global,
        global_rule: GlobalRule::FirstGroup,
        pick: Pick::FirstNameAnywhere(Probe::Exists),
        root: Root::GitOrFsRoot,
        order: Order::CwdFirst,
        nested: Nested::Walk { pick: Pick::First(Probe::Exists), upto_root: false, deepest_first: true },
        imports: Imports::None,
        budget: Budget::None,
        join: Join::Own(join),
        drop_blank: false,
        ..AgentProfile::base(env.home.clone())
    }
}

/// opencode's `Instructions from: <path>` entries of the system prompt (global first, then the
/// project files nearest first), then a `<system-reminder>` of the files reached by touches.
fn join(_: &AgentProfile, entries: &[Entry]) -> Vec<String> {
    let entry = |e: &Entry| format!("Instructions from: {}\n{}", e.file.path.display(), e.text);
    // Each file is an entry of the system prompt, and they are joined by a newline.
    let system: Vec<String> =
        entries.iter().filter(|e| e.file.scope != Scope::Nested && e.file.status.reaches()).map(entry).collect();
    let mut parts: Vec<String> = (!system.is_empty()).then(|| system.join("\n")).into_iter().collect();
    let nested: Vec<String> =
        entries.iter().filter(|e| e.file.scope == Scope::Nested && e.file.status.reaches()).map(entry).collect();
    if !nested.is_empty() {
        parts.push(format!("<system-reminder>\n{}\n</system-reminder>", nested.join("\n\n")));
    }
    parts
}
