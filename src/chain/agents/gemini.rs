//! Gemini CLI: its profile, and its `--- Context from: <path> ---` sections, per category.

use super::env::{AgentEnv, Overrides};
use super::load::Entry;
use super::profile::{AgentProfile, Budget, GlobalRule, Imports, Join, Nested, Order, Pick, Probe, Root};
use super::read::js_trim;
use super::view::Scope;

/// The Gemini CLI profile for `env`; `o.candidates` is its `context.fileName`.
pub(super) fn profile(env: &AgentEnv, o: &Overrides) -> AgentProfile {
    let candidates = o.candidates_or(&["GEMINI.md"]);
    let global = vec![candidates.iter().map(|n| env.home_join(".gemini").join(n)).collect()];
    AgentProfile {
        name: "gemini",
        mirrors: "Gemini CLI core 0.61.0",
        candidates,
        global,
        global_rule: GlobalRule::All(Probe::Readable),
        pick: Pick::All(Probe::Readable),
        root: Root::GitOrCwd { check_fs_root: true },
        order: Order::Sorted,
        nested: Nested::Walk { pick: Pick::All(Probe::Readable), upto_root: true, deepest_first: false },
        imports: Imports::Inline,
        budget: Budget::None,
        join: Join::GeminiContext,
        drop_blank: true,
        ..AgentProfile::base(env.home.clone())
    }
}

/// Gemini's sections: global, project (with imports), then nested files, each trimmed.
pub(super) fn join(entries: &[Entry]) -> Vec<String> {
    // Imports inlined into their importer add no text of their own.
    let live = |s: Scope| {
        entries.iter().filter(move |e| {
            e.file.status.reaches()
                && !e.text.is_empty()
                && (e.file.scope == s || (s == Scope::Project && e.file.scope == Scope::Import))
        })
    };
    let concat = |scope: Scope| {
        live(scope)
            .filter_map(|e| {
                let t = js_trim(&e.text);
                (!t.is_empty()).then(|| {
                    let p = e.file.path.display();
                    format!("--- Context from: {p} ---\n{t}\n--- End of Context from: {p} ---")
                })
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    [concat(Scope::Global), concat(Scope::Project), concat(Scope::Nested)]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect()
}
