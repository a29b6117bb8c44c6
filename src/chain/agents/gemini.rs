//! Gemini CLI: its profile, and its `--- Context from: <path> ---` sections, per category.

use crate::chain::model::env::{AgentEnv, Overrides};
use crate::chain::model::profile::{AgentProfile, Budget, GlobalRule, Imports, Join, Nested, Order, Pick, Probe, Root};
use crate::chain::model::view::{Entry, Scope};
use crate::chain::text::read::js_trim;

/// The Gemini CLI profile for `env`; `o.candidates` is its `context.fileName`.
pub(crate) fn profile(env: &AgentEnv, o: &Overrides) -> AgentProfile {
    let candidates = file_names(o.candidates.as_deref().unwrap_or_default());
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
        join: Join::Own(join),
        drop_blank: true,
        // `loadJitSubdirectoryMemory` skips a file whose device and inode it already loaded.
        nested_by_identity: true,
        ..AgentProfile::base(env.home.clone())
    }
}

/// The names Gemini CLI looks for, given its `context.fileName`: `setGeminiMdFilename` adds the
/// configured names (trimmed, blank ones dropped, normalized, each once) in front of the names it
/// already has, `GEMINI.md` at start, so `GEMINI.md` files load whatever is configured.
fn file_names(configured: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in configured.iter().map(|n| normalize(n.trim())).chain(["GEMINI.md".to_string()]) {
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Node's `path.normalize` of a relative file name: `.` segments and repeated slashes dropped,
/// `..` folded into what precedes it.
fn normalize(name: &str) -> String {
    if name.is_empty() {
        return String::new();
    }
    let absolute = name.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in name.split('/') {
        match seg {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => drop(parts.pop()),
            ".." if absolute => {}
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    let trailing = if name.ends_with('/') && !joined.is_empty() { "/" } else { "" };
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}{trailing}"),
        (false, true) => ".".to_string(),
        (false, false) => format!("{joined}{trailing}"),
    }
}

/// Gemini's `--- Context from: <path> ---` sections: global, project (with imports), then
/// nested files, each trimmed.
fn join(_: &AgentProfile, entries: &[Entry]) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names(configured: &[&str]) -> Vec<String> {
        file_names(&configured.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn configured_names_come_first_and_gemini_md_always_stays() {
        assert_eq!(names(&[]), ["GEMINI.md"]);
        assert_eq!(names(&["AGENTS.md"]), ["AGENTS.md", "GEMINI.md"]);
        assert_eq!(names(&["GEMINI.md", "AGENTS.md"]), ["GEMINI.md", "AGENTS.md"]);
        assert_eq!(
            names(&[" CONTEXT.md ", "", "./docs//AI.md", "CONTEXT.md"]),
            ["CONTEXT.md", "docs/AI.md", "GEMINI.md"]
        );
    }
}
