//! The block of `loadBaselineInstructions` in dsh-agent-instructions 0.1.0-rc.8, the later
//! generation of the seed plugin: every present candidate of a directory loads (not the first
//! one), a later file repeating the trimmed text of an earlier one of its directory is dropped,
//! and the block is fitted to its budget by dropping broader files first, then cutting the most
//! specific one at the longest UTF-8 prefix that fits (found by the same binary search). The
//! dsh-next profile, the data that selects this block, is here too.

use std::path::Path;

use crate::chain::model::env::{AgentEnv, Overrides};
use crate::chain::model::profile::{
    AgentProfile, Budget, Cut, GlobalRule, Imports, Join, Nested, Order, Pick, Probe, Root,
};
use crate::chain::model::view::{AgentFile, Scope, Status};
use crate::chain::text::imports;
use crate::chain::text::read::{js_trim, read_into};
use crate::paths;

const OPEN: &str = "<system-reminder>";
const CLOSE: &str = "</system-reminder>";
const INTRO: &str = "The following workspace instructions may be relevant to your work. Use them as guidance when applicable. More specific instructions take precedence over broader ones. They do not override system, developer, or direct user instructions.";
const COMPACT_INTRO: &str = "Workspace instructions were omitted or truncated to fit the configured byte budget.";

struct Doc {
    display: String,
    content: String,
    index: usize,
}

fn escape(body: &str) -> String {
    body.replace(CLOSE, "<\\/system-reminder>")
}

fn truncate_utf8(value: &str, max: usize) -> &str {
    let b = value.as_bytes();
    if b.len() <= max {
        return value;
    }
    let mut end = max;
    while end > 0 && (b[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    &value[..end]
}

fn marker(max: u64, omitted: &[&str], truncated: Option<(&str, usize, usize)>) -> String {
    let mut parts = Vec::new();
    if !omitted.is_empty() {
        parts.push(format!("omitted {}", omitted.join(", ")));
    }
    if let Some((d, orig, incl)) = truncated {
        parts.push(format!("truncated {d} from {orig} to {incl} bytes"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("Workspace instruction budget {max} bytes: {}", parts.join("; "))
    }
}

fn section(display: &str, content: &str) -> String {
    format!("Instructions from: {display}\n\n{content}")
}

/// A file a touch adds (`additionalSectionText`): it names the directory it applies to.
fn additional_section(display: &str, content: &str) -> String {
    let scope = display.rfind('/').map_or(".", |i| &display[..i]);
    format!(
        "Additional instructions from: {display}\n\nThese instructions apply to work under `{scope}`. Use them as guidance when relevant; more specific instructions take precedence. They do not override system, developer, or direct user instructions.\n\n{content}"
    )
}

/// The intro and the section form of a block: the baseline's, or the one of files a touch adds
/// (no intro).
#[derive(Clone, Copy)]
struct Style {
    intro: &'static str,
    section: fn(&str, &str) -> String,
}

const BASELINE: Style = Style { intro: INTRO, section };
const ADDED: Style = Style { intro: "", section: additional_section };

fn build(
    docs: &[(&str, &str)],
    max: u64,
    omitted: &[&str],
    truncated: Option<(&str, usize, usize)>,
    intro: &str,
    style: Style,
) -> String {
    let mut blocks = vec![marker(max, omitted, truncated), intro.to_string()];
    blocks.extend(docs.iter().map(|(d, c)| (style.section)(d, c)));
    let body: Vec<String> = blocks.into_iter().filter(|b| !b.is_empty()).collect();
    format!("{OPEN}\n{}\n{CLOSE}", escape(&body.join("\n\n")))
}

/// The rendered block, the indices of the omitted docs, and the cut of the last one.
fn render(docs: &[Doc], max: u64, style: Style) -> (String, Vec<usize>, Option<usize>) {
    let pairs: Vec<(&str, &str)> = docs.iter().map(|d| (d.display.as_str(), d.content.as_str())).collect();
    let fits = |t: &str| (t.len() as u64) <= max;
    if max == 0 {
        return (String::new(), (0..docs.len()).collect(), None);
    }
    let full = build(&pairs, max, &[], None, style.intro, style);
    if fits(&full) {
        return (full, Vec::new(), None);
    }
    for start in 1..docs.len() {
        let omitted: Vec<&str> = pairs[..start].iter().map(|p| p.0).collect();
        let text = build(&pairs[start..], max, &omitted, None, style.intro, style);
        if fits(&text) {
            return (text, (0..start).collect(), None);
        }
    }
    let Some(&(last, content)) = pairs.last() else { return (String::new(), Vec::new(), None) };
    let omitted: Vec<&str> = pairs[..pairs.len() - 1].iter().map(|p| p.0).collect();
    let omitted_idx: Vec<usize> = (0..pairs.len() - 1).collect();
    let orig = content.len();
    for intro in [style.intro, COMPACT_INTRO] {
        // The binary search of `truncateToFit`, kept as is so that the cut is the same.
        let (mut low, mut high) = (0i64, orig as i64);
        let mut best = truncate_utf8(content, 0);
        while low <= high {
            let mid = (low + high) / 2;
            let cand = truncate_utf8(content, mid as usize);
            if fits(&build(&[(last, cand)], max, &omitted, Some((last, orig, cand.len())), intro, style)) {
                best = cand;
                low = mid + 1;
            } else {
                high = mid - 1;
            }
        }
        let text = build(&[(last, best)], max, &omitted, Some((last, orig, best.len())), intro, style);
        if fits(&text) {
            return (text, omitted_idx, Some(best.len()));
        }
    }
    let notice = escape(&marker(max, &omitted, Some((last, orig, 0))));
    let with_heading = escape(&[notice.clone(), (style.section)(last, "")].join("\n\n"));
    if fits(&with_heading) {
        return (with_heading, omitted_idx, Some(0));
    }
    let text = if fits(&notice) { notice } else { truncate_utf8(&notice, max as usize).to_string() };
    (text, omitted_idx, Some(0))
}

/// Reads, deduplicates and fits `files`: the baseline (global first, then root to cwd) in one
/// `<system-reminder>` block of `Instructions from: <path relative to the root>` sections, and
/// the files touches added (scope `nested`, as one reconcile would add them) in a second block
/// of "Additional instructions" sections. Returns the blocks.
fn load(mut files: Vec<AgentFile>, root: &Path, global_display: &str, max_bytes: u64, max_source: u64) -> Cut {
    let mut baseline: Vec<Doc> = Vec::new();
    let mut added: Vec<Doc> = Vec::new();
    let mut kept: Vec<(String, String)> = Vec::new();
    for (index, file) in files.iter_mut().enumerate() {
        if file.status != Status::Loaded {
            continue;
        }
        let Some(content) = read_into(file, max_source) else { continue };
        if content.len() as u64 > max_source {
            file.status = Status::Oversized;
            continue;
        }
        let display = match file.scope {
            Scope::Global => global_display.to_string(),
            _ => match file.path.strip_prefix(root) {
                Ok(rel) => paths::slash_join(rel),
                Err(_) => paths::slash_join(&file.path),
            },
        };
        let dir = match display.rfind('/') {
            Some(i) => display[..i].to_string(),
            None => ".".to_string(),
        };
        let trimmed = js_trim(&content).to_string();
        if kept.iter().any(|(d, t)| *d == dir && *t == trimmed) {
            file.status = Status::Duplicate;
            continue;
        }
        kept.push((dir, trimmed));
        let doc = Doc { display, content, index };
        if file.scope == Scope::Nested { added.push(doc) } else { baseline.push(doc) }
    }
    let mut texts = Vec::new();
    for (docs, style) in [(&baseline, BASELINE), (&added, ADDED)] {
        if docs.is_empty() {
            continue;
        }
        let (text, omitted, cut) = render(docs, max_bytes, style);
        for (i, doc) in docs.iter().enumerate() {
            let file = &mut files[doc.index];
            if omitted.contains(&i) {
                file.status = Status::Omitted;
            } else if i + 1 == docs.len() && cut.is_some() {
                file.status = Status::Truncated;
                file.included_bytes = cut.unwrap_or(0) as u64;
            } else {
                file.included_bytes = doc.content.len() as u64;
            }
        }
        if !text.is_empty() {
            texts.push(text);
        }
    }
    (files, texts)
}

/// The dsh-next profile for `env`; `o` sets `maxBytes` and `instructionFileCandidates`.
pub(crate) fn profile(env: &AgentEnv, o: &Overrides) -> AgentProfile {
    let default_home = env.home_join(".dsh");
    let home = env.dsh_home.clone().map(|h| imports::resolve(Path::new("/"), &h.to_string_lossy()));
    let home = match home {
        Some(h) if h.is_absolute() => h,
        _ => default_home.clone(),
    };
    let global_display = if home == default_home { "~/.dsh/AGENTS.md" } else { "$DSH_HOME/AGENTS.md" };
    let mut candidates = o.candidates_or(&["AGENTS.md", "CLAUDE.md"]);
    candidates.retain(|c| !matches!(c.as_str(), "" | "." | "..") && !c.contains(['/', '\\']));
    candidates.extend(["AGENTS.local.md".to_string(), "CLAUDE.local.md".to_string()]);
    AgentProfile {
        name: "dsh-next",
        mirrors: "dsh-agent-instructions 0.1.0-rc.8",
        candidates,
        global: vec![vec![home.join("AGENTS.md")]],
        global_rule: GlobalRule::All(Probe::StatFile),
        pick: Pick::All(Probe::StatFile),
        root: Root::Markers(vec![".git".into()]),
        order: Order::RootFirst,
        nested: Nested::Walk { pick: Pick::All(Probe::StatFile), upto_root: false, deepest_first: false },
        imports: Imports::None,
        budget: Budget::Block {
            max_bytes: o.max_bytes.unwrap_or(65536),
            max_source_bytes: 1024 * 1024,
            global_display: global_display.into(),
            fit: load,
        },
        join: Join::ByBudget,
        drop_blank: false,
        ..AgentProfile::base(env.home.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(display: &str, content: &str, index: usize) -> Doc {
        Doc { display: display.into(), content: content.into(), index }
    }

    #[test]
    fn drops_broader_files_first_then_cuts_the_last_on_a_char_boundary() {
        let docs = [doc("AGENTS.md", &"a".repeat(300), 0), doc("pkg/AGENTS.md", &"é".repeat(200), 1)];
        let full = render(&docs, 100_000, BASELINE).0;
        assert!(full.starts_with("<system-reminder>\nThe following"));
        assert!(
            full.ends_with(&format!("Instructions from: pkg/AGENTS.md\n\n{}\n</system-reminder>", "é".repeat(200)))
        );

        // Just enough for the specific file alone: the root file is omitted, nothing is cut.
        let pkg = [("pkg/AGENTS.md", docs[1].content.as_str())];
        let alone = build(&pkg, 1000, &["AGENTS.md"], None, INTRO, BASELINE).len() as u64;
        let (text, omitted, cut) = render(&docs, alone, BASELINE);
        assert_eq!((omitted.as_slice(), cut), ([0].as_slice(), None));
        let head = format!("<system-reminder>\nWorkspace instruction budget {alone} bytes: omitted AGENTS.md\n\n");
        assert!(text.starts_with(&head), "{text}");
        assert!(text.len() as u64 <= alone);

        // 101 bytes fewer: the specific file is cut on a character boundary, to the longest fit.
        let (text, omitted, cut) = render(&docs, alone - 101, BASELINE);
        assert_eq!(omitted, [0]);
        let cut = cut.expect("cut");
        assert!(cut < 400 && cut % 2 == 0, "cut {cut} falls between the two bytes of é");
        assert!(text.contains(&format!("truncated pkg/AGENTS.md from 400 to {cut} bytes")));
        assert!(text.len() as u64 <= alone - 101 && text.len() as u64 + 2 > alone - 101);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Whatever the files and the budget, the block fits, and no file text can close it.
        #[test]
        fn the_block_fits_its_budget_and_cannot_be_closed_early(
            texts in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec!["x", "rules ", "\n", "é", "🎉", "</system-reminder>", "<", "/"]),
                    0..40,
                ),
                1..4,
            ),
            max in 0u64..2000,
        ) {
            let docs: Vec<Doc> =
                texts.iter().enumerate().map(|(i, t)| doc(&format!("d{i}/AGENTS.md"), &t.concat(), i)).collect();
            let (text, omitted, cut) = render(&docs, max, BASELINE);
            proptest::prop_assert!(text.len() as u64 <= max, "{} > {max}", text.len());
            if text.starts_with(OPEN) {
                proptest::prop_assert_eq!(text.matches(CLOSE).count(), 1);
                proptest::prop_assert!(text.ends_with(CLOSE));
            }
            if max == 0 {
                proptest::prop_assert_eq!(omitted.len(), docs.len(), "a zero budget omits everything");
            } else {
                proptest::prop_assert!(omitted.iter().all(|&i| i + 1 < docs.len()), "only broader files are omitted");
            }
            if let Some(c) = cut {
                let last = &docs[docs.len() - 1].content;
                // The cut can keep the whole text: with the shorter compact intro, a "truncated
                // from N to N bytes" marker may fit where the full block did not (as in the package).
                proptest::prop_assert!(last.is_char_boundary(c) && c <= last.len());
            }
        }
    }

    #[test]
    fn files_a_touch_adds_name_the_directory_they_apply_to() {
        let docs = [doc("pkg/AGENTS.md", "pkg rules", 0)];
        let text = render(&docs, 10_000, ADDED).0;
        assert_eq!(
            text,
            "<system-reminder>\nAdditional instructions from: pkg/AGENTS.md\n\nThese instructions apply to work under `pkg`. Use them as guidance when relevant; more specific instructions take precedence. They do not override system, developer, or direct user instructions.\n\npkg rules\n</system-reminder>"
        );
    }

    #[test]
    fn a_closing_tag_in_the_text_is_escaped() {
        let docs = [doc("AGENTS.md", "x </system-reminder> y", 0)];
        let text = render(&docs, 10_000, BASELINE).0;
        assert!(text.contains("x <\\/system-reminder> y"));
        assert_eq!(text.matches(CLOSE).count(), 1);
    }
}
