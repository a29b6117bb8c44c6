// The tree model and the status text, from results recorded from the real server.
import { strict as assert } from "assert";
import { readFileSync } from "fs";
import { join } from "path";
import { test } from "node:test";

import {
  AllProfiles,
  agentsContextText,
  agentsFolderNode,
  agentsNode,
  agentsStatusText,
  agentsStatusTooltip,
  Effective,
  folderNode,
  formatBytes,
  statusText,
  isCut,
  contextText,
  reasonText,
  diffMarks,
  DiffResult,
  hasMarks,
  markFolder,
  startsNode,
} from "../../src/model";

const load = (name: string): Effective => JSON.parse(readFileSync(join(__dirname, "../../test/unit/fixtures", name), "utf8"));

test("the four groups hold the files in order with their statuses", () => {
  const node = folderNode("rec", load("effective-cut.json"));
  const groups = node.children!.map((g) => g.label);
  assert.deepEqual(groups, ["Baseline", "Reached", "For this file", "Not loaded"]);
  const [baseline, reached, forFile, skipped] = node.children!;
  assert.deepEqual(baseline.children!.map((f) => [f.label, f.icon]), [["AGENTS.md", "omitted"], ["pkg/AGENTS.md", "loaded"]]);
  assert.equal(baseline.children![0].description, "omitted · 900 B");
  assert.deepEqual(reached.children!.map((f) => f.label), ["pkg/deep/AGENTS.md"]);
  assert.equal(forFile.children![0].icon, "info", "no active file: a hint instead of a preview");
  assert.deepEqual(skipped.children!.map((s) => [s.label, s.description]), [["CLAUDE.md", "shadowed by AGENTS.md"]]);
  assert.ok(baseline.children![1].tooltip!.includes("scope: project · kind: main"));
  assert.ok(baseline.children![1].tooltip!.includes("sha256: "));
});

test("a truncated file shows what reaches the agent and where it is cut", () => {
  const e = load("effective-truncated.json");
  const file = folderNode("rec", e).children![0].children![0];
  assert.equal(file.icon, "truncated");
  assert.equal(file.description, "truncated · 68 B of 900 B");
  assert.equal(file.cutBytes, 68);
  assert.ok(file.uri!.endsWith("/rec/AGENTS.md"));
});

test("the preview group lists what a touch of the active file would add", () => {
  const e = load("effective-preview.json");
  const forFile = folderNode("rec", e, "file:///tmp/rec/pkg/deep/main.rs").children![2];
  assert.deepEqual(forFile.children!.map((f) => f.label), ["pkg/AGENTS.md", "pkg/deep/AGENTS.md"]);
  const none = folderNode("rec", { ...e, preview: { ...e.preview!, files: [] } }, "file:///x").children![2];
  assert.match(none.children![0].label, /Nothing new/);
});

test("the status text shows bytes over the budget and a warning when anything is cut", () => {
  const cut = load("effective-cut.json");
  const text = statusText(cut);
  assert.equal(text, "$(book) 1.2/0.7 KiB $(warning)", "budget 700 a block: 637 + 575 bytes");
  assert.equal(isCut(cut), true);
  const whole = load("effective-preview.json");
  assert.equal(statusText(whole), `$(book) ${(whole.baseline.bytes / 1024).toFixed(1)}/64 KiB`);
  assert.equal(isCut(whole), false);
  assert.equal(statusText({ ...whole, budgetBytes: 0 }).includes("/off KiB"), true);
});

test("bytes and reasons read well", () => {
  assert.equal(formatBytes(600), "600 B");
  assert.equal(formatBytes(65536), "64 KiB");
  assert.equal(formatBytes(12595), "12.3 KiB");
  assert.equal(reasonText({ uri: "file:///r/a", path: "a", reason: "tooLarge" }, "file:///r"), "too large");
  assert.equal(reasonText({ uri: "file:///r/b", path: "b", reason: "duplicate", shadowedBy: "file:///r/sub%20dir/A.md" }, "file:///r"), "same content as sub dir/A.md");
});

test("the effective context is every block, as agents get them", () => {
  const e = load("effective-cut.json");
  assert.equal(contextText(e), `${e.baseline.rendered}\n\n${e.nested[0].rendered}`);
});

test("the Agents group has a row per profile with what each agent gets and cuts", () => {
  // Recorded from the server with `profile: "all"` (texts shortened).
  const all: AllProfiles = JSON.parse(readFileSync(join(__dirname, "../../test/unit/fixtures/profiles-all.json"), "utf8"));
  const group = agentsNode(all.folder, all);
  assert.equal(group.label, "Agents");
  assert.deepEqual(group.children!.map((r) => r.label), ["dsh", "ds4", "codex", "claude", "gemini", "opencode", "dsh-next"]);
  const codex = group.children![2];
  assert.match(codex.description!, /^1 file · 32.1 KiB · cuts AGENTS.md$/);
  assert.equal(codex.icon, "truncated");
  assert.equal(codex.children![0].cutBytes, 32768);
  assert.match(codex.tooltip!, /Codex CLI 0.171.0/);
  const opencode = group.children![5];
  assert.deepEqual(opencode.children!.map((f) => [f.label, f.icon]), [["AGENTS.md", "loaded"], ["CLAUDE.md", "skipped"]]);
  assert.match(opencode.children![1].description!, /^shadowed \(AGENTS.md\)/);
  const dshNext = group.children![6];
  assert.equal(dshNext.description, "2 files · 32.5 KiB", "dsh-next loads both files of the directory");
  const gemini = group.children![4];
  assert.equal(gemini.description, "1 file · 101 B");
});

test("the Agents group says which agents it shows, and why", () => {
  const all: AllProfiles = JSON.parse(readFileSync(join(__dirname, "../../test/unit/fixtures/profiles-all.json"), "utf8"));
  const because = "showing for Codex, Claude Code, opencode: detected from AGENTS.md, CLAUDE.md; set them in instructions-lsp.toml";
  const targets: AllProfiles = {
    ...all,
    profiles: all.profiles.filter((p) => ["codex", "claude", "opencode"].includes(p.profile)),
    selectedBecause: because,
  };
  const group = agentsNode(targets.folder, targets);
  assert.deepEqual(group.children!.map((r) => r.label), ["codex", "claude", "opencode"]);
  assert.equal(group.description, "3");
  assert.equal(group.tooltip, because);
});

// Recorded from the server with `profile: "targets"` on a repository holding AGENTS.md, a CLAUDE.md
// that imports it, and a `.claude/rules` file with `paths:`.
const targets = (): AllProfiles =>
  JSON.parse(readFileSync(join(__dirname, "../../test/unit/fixtures/profiles-targets.json"), "utf8"));

test("by default a folder shows a group per targeted agent, the served blocks collapsed below", () => {
  const all = targets();
  assert.equal(all.view, "agents");
  const node = agentsFolderNode("acme", load("effective-cut.json"), all);
  assert.equal(node.description, "for Codex, Claude Code, opencode");
  assert.match(node.tooltip!, /^showing for Codex, Claude Code, opencode: detected from/);
  assert.deepEqual(node.children!.map((g) => g.label), ["Codex", "Claude Code", "opencode", "Served blocks"]);
  const [, claude, , served] = node.children!;
  assert.equal(claude.collapsed, false, "the agents are the view: expanded");
  assert.deepEqual(claude.children!.map((f) => [f.label, f.icon]), [
    ["CLAUDE.md", "loaded"],
    ["AGENTS.md", "loaded"],
    [".claude/rules/api.md", "skipped"],
  ]);
  assert.match(claude.children![1].description!, /^loaded \(CLAUDE.md\) · 28 B · import$/);
  assert.equal(
    claude.children![2].description,
    "waiting · 67 B · project · loads when a file matching src/api/** is read",
    "a rule with paths: says what loads it",
  );
  assert.equal(served.collapsed, true);
  assert.deepEqual(served.children!.map((g) => g.label), ["Baseline", "Reached", "For this file", "Not loaded"]);
});

test("the status bar names each targeted agent and what reaches it", () => {
  const all = targets();
  assert.equal(agentsStatusText(all), "$(book) Codex 103 B · Claude Code 476 B · opencode 71 B");
  const tooltip = agentsStatusTooltip(all).split("\n");
  assert.match(tooltip[0], /^Agent instructions \(showing for Codex, Claude Code, opencode/);
  assert.equal(tooltip[2], "Claude Code: 2 file(s), 476 bytes");
  // A cut anywhere shows the warning; more than three agents are counted, with those that cut.
  const cut: AllProfiles = { ...all, profiles: [...all.profiles, ...all.profiles] };
  assert.equal(agentsStatusText(cut), "$(book) 6 agents · none cut");
  cut.profiles[0] = { ...cut.profiles[0], files: [{ ...cut.profiles[0].files[0], status: "truncated" }] };
  assert.equal(agentsStatusText(cut), "$(book) 6 agents · Codex cut $(warning)");
});

test("Show Effective Context gives each agent's text, then the served blocks", () => {
  const all = targets();
  const e = load("effective-cut.json");
  const text = agentsContextText(all, e);
  assert.ok(text.startsWith(`<!-- Codex CLI 0.171.0 (codex): 103 bytes -->\n\n${all.profiles[0].text}\n\n<!-- Claude Code 2.1.332 (claude)`), text);
  assert.ok(text.endsWith(contextText(e)));
  // An agent that loads nothing says why, in the server's words, instead of an empty text.
  const why = "none of GEMINI.md is on its way here, nor a global file of its own";
  const empty: AllProfiles = {
    ...all,
    profiles: [{ ...all.profiles[0], profile: "gemini", headline: "Gemini CLI core 0.61.0 (gemini)", text: "", parts: [], bytes: 0, files: [], nothing: why }],
  };
  assert.ok(agentsContextText(empty, e).startsWith(`<!-- Gemini CLI core 0.61.0 (gemini): loads nothing here: ${why} -->\n\n`));
  const node = agentsNode(empty.folder, empty).children?.[0];
  assert.equal(node?.children?.[0].label, `Loads nothing here: ${why}`);
});

// Recorded from `instructions-lsp diff HEAD --json` in a repository whose root AGENTS.md grew past
// Codex's 1200-byte budget (instructions-lsp.toml), with pkg/AGENTS.md and app/CLAUDE.md below.
const diffHead = (): DiffResult => JSON.parse(readFileSync(join(__dirname, "../../test/unit/fixtures", "diff-head.json"), "utf8"));

test("the diff's groups and new findings mark the agents whose view changed", () => {
  const m = diffMarks(diffHead());
  assert.equal(m.base, "HEAD");
  assert.deepEqual([...m.agents.keys()], ["codex", "claude", "opencode"]);
  assert.deepEqual(m.agents.get("codex"), [
    "in ., app: AGENTS.md is cut now: truncated at 1200 of 1869 bytes (1200-byte shared budget) (before: loaded, 21 bytes)",
    "in pkg: pkg/AGENTS.md leaves: omitted (1200-byte shared budget) (before: loaded); AGENTS.md is cut now: truncated at 1200 of 1869 bytes (1200-byte shared budget) (before: loaded, 21 bytes)",
    "new finding: AGENTS.md:41: warning[agentCut]: Codex cuts this file at line 41, after 1200 of 1869 bytes (1200-byte shared budget) (also in 2 other directories)",
    "new finding: pkg/AGENTS.md:1: warning[agentCut]: Codex leaves this file out (1200-byte shared budget spent by AGENTS.md (1200 bytes))",
  ]);
  assert.deepEqual(m.agents.get("opencode"), ["in ., app, pkg: AGENTS.md: loaded, 1869 bytes (before: loaded, 21 bytes)"]);
  assert.equal(m.folder.length, 2, "the folder's row lists the new findings");
  assert.ok(hasMarks(m));
});

test("a folder below the repository's root is marked for its own directories only", () => {
  const app = diffMarks(diffHead(), "app/");
  // Claude Code starts in `.` and `pkg` only; the findings are in files outside app/.
  assert.deepEqual([...app.agents.keys()], ["codex", "opencode"]);
  assert.deepEqual(app.agents.get("opencode"), ["in app: AGENTS.md: loaded, 1869 bytes (before: loaded, 21 bytes)"]);
  assert.deepEqual(app.folder, []);
  const pkg = diffMarks(diffHead(), "pkg/");
  assert.equal(pkg.agents.get("codex")!.length, 2, "pkg's own lines and the finding in pkg/AGENTS.md");
  assert.ok(pkg.agents.get("codex")![1].startsWith("new finding: pkg/AGENTS.md:1:"));
  const none = diffMarks(diffHead(), "docs/");
  assert.ok(!hasMarks(none), "nothing changed in docs/");
  assert.equal(diffMarks({ ...diffHead(), groups: [], newFindings: [] }).agents.size, 0);
});

test("the rows of changed agents say so, with the changes in their tooltip", () => {
  const all = targets();
  const e = load("effective-cut.json");
  const marks = diffMarks({ ...diffHead(), groups: diffHead().groups.filter((g) => g.agent !== "claude") });
  const node = agentsFolderNode("acme", e, all, undefined, marks);
  assert.equal(node.description, "for Codex, Claude Code, opencode · changed since HEAD");
  assert.match(node.tooltip!, /Changed since HEAD \(Agent Instructions: Show Changes Since HEAD\):\n- the view of codex, opencode changes\n- new finding: AGENTS.md:41:/);
  const [codex, claude, opencode] = node.children!;
  assert.match(codex.description!, / · changed since HEAD$/);
  assert.equal(codex.icon, "changed");
  assert.ok(codex.tooltip!.includes("\n- in pkg: pkg/AGENTS.md leaves: omitted"), codex.tooltip);
  assert.ok(opencode.description!.endsWith("changed since HEAD"));
  assert.ok(!claude.description!.includes("changed"), "Claude Code's view did not change");
  assert.notEqual(claude.icon, "changed");
  // Without marks (no git, no diff yet), the rows are as before.
  assert.deepEqual(agentsFolderNode("acme", e, all), agentsFolderNode("acme", e, all, undefined, diffMarks(diffHead(), "docs/")));
  // The engine's view (the `profile` setting): the Agents group's rows and the folder are marked too.
  const agents = agentsNode(e.folder, all, marks);
  assert.ok(agents.children![0].description!.endsWith("changed since HEAD"));
  assert.ok(markFolder(folderNode("acme", e), marks).description!.endsWith(" · changed since HEAD"));
});

// Recorded from the server with `profile: "targets"` at the root and in `crates/api` of a
// repository whose CLAUDE.md is `@AGENTS.md`, with three crates.
const starts = (): { root: AllProfiles; crate: AllProfiles } =>
  JSON.parse(readFileSync(join(__dirname, "../../test/unit/fixtures/profiles-starts.json"), "utf8"));

test("the folder shows where agents start and what a class of folders misses, in check's words", () => {
  const { root, crate } = starts();
  const node = agentsFolderNode("acme", load("effective-cut.json"), root);
  const where = node.children!.find((c) => c.label === "Where agents start")!;
  assert.equal(where.description, "this folder · 3 package roots");
  assert.equal(where.collapsed, false, "a class that misses files is shown open");
  const [claude] = where.children!;
  assert.equal(claude.label, "Claude Code");
  assert.equal(claude.description, "misses AGENTS.md in any folder below . without its own CLAUDE.md (such as crates/api and 2 other package roots)");
  const [file] = claude.children!;
  assert.equal(file.uri, "file:///home/dev/acme/AGENTS.md");
  assert.equal(file.tooltip, root.starts!.classes[0].misses[0].message);
  assert.match(file.tooltip!, /^Claude Code, started in any folder below `\.` .* does not load this file, which CLAUDE\.md imports/);
  // In the crate, Claude Code's row says why AGENTS.md is outside.
  const inCrate = agentsFolderNode("api", load("effective-cut.json"), crate);
  const claudeRow = inCrate.children!.find((c) => c.label === "Claude Code")!;
  const agentsMd = claudeRow.children!.find((f) => f.label === "AGENTS.md")!;
  assert.match(agentsMd.description!, /^outside/);
  assert.match(agentsMd.tooltip!, /\n\nClaude Code, started in `crates\/api`, does not load this file, which CLAUDE\.md imports/);
  // Without a class, the group is a closed line that says so.
  const plain = startsNode("f", { withFiles: 2, packageRoots: 0, named: 1, classes: [] });
  assert.equal(plain.description, "this folder · 2 folders with files · 1 named start");
  assert.equal(plain.collapsed, true);
  assert.deepEqual(plain.children!.map((c) => c.label), ["Every agent gets its start's files in the folders below it"]);
});
