// The Active Guidance tree and the status text, built from `instructions/effective` results.
// Pure: no `vscode` import, so unit tests run in plain Node.

export interface FileInfo {
  uri: string;
  path: string;
  scope: string;
  kind: string;
  bytes: number;
  includedBytes: number;
  sha256: string;
  status: "loaded" | "truncated" | "omitted";
}

export interface Block {
  rendered: string;
  bytes: number;
  files: FileInfo[];
  omitted: string[];
  truncated: { uri: string; originalBytes: number; includedBytes: number }[];
}

export interface Skipped {
  uri: string;
  path: string;
  reason: string;
  shadowedBy?: string;
}

export interface Effective {
  folder: string;
  projectRoot: string;
  seq: number;
  budgetBytes: number;
  baseline: Block;
  nested: Block[];
  preview: Block | null;
  skipped: Skipped[];
}

export type Icon = "loaded" | "truncated" | "omitted" | "skipped" | "info" | "changed";

export interface Node {
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  icon?: Icon;
  /** A file to open when the node is clicked. */
  uri?: string;
  /** For a truncated file: the byte offset of the first byte agents do not see. */
  cutBytes?: number;
  children?: Node[];
  /** Starts collapsed (the rows of the Agents group). */
  collapsed?: boolean;
}

/** "1.2 KiB", "600 B". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  return `${trim((bytes / 1024).toFixed(1))} KiB`;
}

function trim(n: string): string {
  return n.endsWith(".0") ? n.slice(0, -2) : n;
}

/** A path for display: relative to the project root when below it. */
export function displayPath(uri: string, projectRoot: string): string {
  const prefix = projectRoot.endsWith("/") ? projectRoot : projectRoot + "/";
  const rel = uri.startsWith(prefix) ? uri.slice(prefix.length) : uri.replace(/^file:\/\//, "");
  try {
    return decodeURIComponent(rel);
  } catch {
    return rel;
  }
}

const REASONS: Record<string, string> = {
  symlink: "symlink (skipped)",
  notAFile: "not a regular file",
  tooLarge: "too large",
  chainTooLarge: "past the 32 MiB one chain loads",
  invalidUtf8: "invalid UTF-8",
  unreadable: "unreadable",
  outsideRoot: "symlink leaves the project root",
};

/** Why a candidate does not load, in words. */
export function reasonText(s: Skipped, projectRoot: string): string {
  const other = s.shadowedBy ? displayPath(s.shadowedBy, projectRoot) : "";
  if (s.reason === "shadowed") return `shadowed by ${other}`;
  if (s.reason === "duplicate") return `same content as ${other}`;
  return REASONS[s.reason] ?? s.reason;
}

/** "1.2 KiB of 3.6 KiB" for a truncated file, else its size. */
function fileSize(f: { status: string; bytes: number; includedBytes: number }): string {
  return f.status === "truncated" ? `${formatBytes(f.includedBytes)} of ${formatBytes(f.bytes)}` : formatBytes(f.bytes);
}

function fileNode(id: string, f: FileInfo): Node {
  const size = fileSize(f);
  return {
    id,
    label: f.path,
    description: `${f.status} · ${size}`,
    tooltip: `${f.path}\nscope: ${f.scope} · kind: ${f.kind}\n${f.status}: ${f.includedBytes} of ${f.bytes} bytes reach the agent\nsha256: ${f.sha256}`,
    icon: f.status,
    uri: f.uri,
    cutBytes: f.status === "truncated" ? f.includedBytes : undefined,
  };
}

function note(id: string, label: string): Node {
  return { id, label, icon: "info" };
}

/** The four groups of one folder: Baseline, Reached, For this file, Not loaded. */
export function folderNode(name: string, e: Effective, activeFile?: string): Node {
  const base = e.folder;
  const baseline = e.baseline.files.map((f, i) => fileNode(`${base}#baseline#${i}`, f));
  const reached = e.nested.flatMap((b, j) => b.files.map((f, i) => fileNode(`${base}#reached#${j}#${i}`, f)));
  let forFile: Node[];
  if (!activeFile || e.preview === null) {
    forFile = [note(`${base}#preview#none`, "Open a file in this folder to preview what a touch adds")];
  } else if (e.preview.files.length === 0) {
    forFile = [note(`${base}#preview#empty`, "Nothing new: its scopes are already loaded")];
  } else {
    forFile = e.preview.files.map((f, i) => fileNode(`${base}#preview#${i}`, f));
  }
  const skipped = e.skipped.map((s, i) => ({
    id: `${base}#skipped#${i}`,
    label: s.path,
    description: reasonText(s, e.projectRoot),
    tooltip: `${s.path}: not loaded (${reasonText(s, e.projectRoot)})`,
    icon: "skipped" as Icon,
    uri: s.uri,
  }));
  const total = e.baseline.bytes + e.nested.reduce((n, b) => n + b.bytes, 0);
  const group = (key: string, label: string, children: Node[], empty: string): Node => ({
    id: `${base}#${key}`,
    label,
    description: children.length && children[0].icon !== "info" ? String(children.length) : undefined,
    children: children.length ? children : [note(`${base}#${key}#none`, empty)],
  });
  return {
    id: base,
    label: name,
    description: `${formatBytes(total)} of ${formatBytes(e.budgetBytes)}`,
    children: [
      group("baseline", "Baseline", baseline, "No instruction file on the way to this folder"),
      group("reached", "Reached", reached, "No nested file reached yet"),
      { id: `${base}#preview`, label: "For this file", children: forFile },
      group("skipped", "Not loaded", skipped, "Every candidate loads"),
    ],
  };
}

/** True when a block of the session omits or truncates anything. */
export function isCut(e: Effective): boolean {
  return [e.baseline, ...e.nested].some((b) => b.omitted.length > 0 || b.truncated.length > 0);
}

/** The status bar text of a session, e.g. `$(book) 12.3/64 KiB`. */
export function statusText(e: Effective): string {
  const total = e.baseline.bytes + e.nested.reduce((n, b) => n + b.bytes, 0);
  const kib = (n: number) => trim((n / 1024).toFixed(1));
  const budget = e.budgetBytes > 0 ? kib(e.budgetBytes) : "off";
  return `$(book) ${kib(total)}/${budget} KiB${isCut(e) ? " $(warning)" : ""}`;
}

/** The status bar tooltip. */
export function statusTooltip(e: Effective): string {
  const files = e.baseline.files.length + e.nested.reduce((n, b) => n + b.files.length, 0);
  const cut = isCut(e) ? "\nSomething is omitted or truncated: see Active Guidance." : "";
  return `Agent instructions: ${files} file(s), ${e.baseline.bytes} bytes in the baseline block, budget ${e.budgetBytes} bytes${cut}`;
}

/** Every rendered block of a result, as an agent gets them, for "Show Effective Context". */
export function contextText(e: Effective): string {
  const blocks = [e.baseline, ...e.nested].map((b) => b.rendered).filter((t) => t.length > 0);
  return blocks.join("\n\n");
}

export interface Tokens {
  count: number;
  exact: boolean;
}

/** "1,234 tokens", or "~1,234 tokens" (an estimate) for an agent whose tokenizer is not o200k_base. */
export function formatTokens(t: Tokens | undefined, long = false): string {
  if (!t) return "";
  const n = t.count.toLocaleString("en-US");
  const unit = t.count === 1 ? "token" : "tokens";
  return t.exact ? `${n} ${unit}` : `~${n} ${unit}${long ? " (estimate)" : ""}`;
}

/** " · 1,234 tokens" when the size in tokens is known. */
function tokensPart(t: Tokens | undefined, long = false): string {
  return t ? ` · ${formatTokens(t, long)}` : "";
}

/** One profile's answer to `instructions/effective` with `profile`. */
export interface ProfileFile {
  uri: string;
  path: string;
  scope: string;
  status: string;
  bytes: number;
  includedBytes: number;
  by?: string;
  /** For a `waiting` rule: the globs whose first matching touch loads it. */
  globs?: string[];
}

export interface ProfileResult {
  profile: string;
  /** The agent's name for people ("Claude Code"). */
  name?: string;
  mirrors: string;
  /** How every edge heads this answer: "Codex CLI 0.171.0 (codex)", "Copilot in VS Code 1.139.1 (copilot)". */
  headline?: string;
  /** Why the text is empty, when it is: "none of GEMINI.md is on its way here, nor a global file of its own". */
  nothing?: string;
  text: string;
  parts: string[];
  bytes: number;
  /** The size in o200k_base tokens: exact for Codex and Copilot, an estimate for the others. */
  tokens?: Tokens;
  budget?: string;
  files: ProfileFile[];
  /** The imports the agent skips because of the folder it starts in, each as `effective` says it. */
  importsSkipped?: string[];
}

/** A file a class of folders misses, with the sentence of its `importOutside` diagnostic. */
export interface Missed {
  uri: string;
  path: string;
  message: string;
}

/** A class of folders where an agent misses what its start gets. */
export interface ClassSaid {
  profile: string;
  name: string;
  /** "any folder below `.` without its own `CLAUDE.md` (such as `crates/uv` and 41 other package roots)" */
  folders: string;
  start: string;
  example: string;
  packageRoots: number;
  named: number;
  misses: Missed[];
}

/** Where agents start in the folder's tree: the same places `check` judges. */
export interface StartsSummary {
  /** Folders below this one with instruction files of their own. */
  withFiles: number;
  packageRoots: number;
  named: number;
  classes: ClassSaid[];
}

/** The answer to `instructions/effective` with `profile: "targets"` (or `"all"`). */
export interface AllProfiles {
  folder: string;
  profiles: ProfileResult[];
  /** Which agents, and why ("showing for Codex, Claude Code: detected from AGENTS.md, …"). */
  selectedBecause?: string;
  /** What to show first: the selected agents, or the engine's blocks (the `profile` setting). */
  view?: "agents" | "engine";
  /** Where agents start in the folder's tree (the language server's answer; absent elsewhere). */
  starts?: StartsSummary;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * "Where agents start": how many places of each kind the folder's checks judge, and each class
 * of folders where an agent misses what its start gets, with the file and the diagnostic's words.
 */
export function startsNode(base: string, s: StartsSummary): Node {
  const kinds = [
    "this folder",
    ...(s.withFiles ? [plural(s.withFiles, "folder with files", "folders with files")] : []),
    ...(s.packageRoots ? [plural(s.packageRoots, "package root", "package roots")] : []),
    ...(s.named ? [plural(s.named, "named start", "named starts")] : []),
  ];
  const classes = s.classes.map((c, i): Node => {
    const files = c.misses.map((m) => m.path);
    return {
      id: `${base}#starts#${i}`,
      label: c.name,
      description: `misses ${files.join(", ")} in ${c.folders.replace(/`/g, "")}`,
      tooltip: c.misses.map((m) => `${m.path}: ${m.message}`).join("\n\n"),
      icon: "omitted",
      children: c.misses.map((m, j): Node => ({
        id: `${base}#starts#${i}#${j}`,
        label: m.path,
        description: "not loaded there",
        tooltip: m.message,
        icon: "skipped",
        uri: m.uri,
      })),
    };
  });
  return {
    id: `${base}#starts`,
    label: "Where agents start",
    description: kinds.join(" · "),
    tooltip:
      "The places agents are judged from, as `instructions-lsp check` judges them: the root, every folder with " +
      "instruction files, every package root and the folders `starts` names; any other folder gets its nearest " +
      "start's view, except where listed below",
    icon: classes.length ? "omitted" : "loaded",
    collapsed: classes.length === 0,
    children: classes.length ? classes : [note(`${base}#starts#none`, "Every agent gets its start's files in the folders below it")],
  };
}

const REACHES = new Set(["loaded", "truncated"]);
const CUT = new Set(["truncated", "omitted"]);

function profileIcon(status: string): Icon {
  if (status === "loaded" || status === "truncated" || status === "omitted") return status;
  return "skipped";
}

/** One profile's row: what reaches that agent, what it cuts; its files below. */
function profileNode(base: string, p: ProfileResult, collapsed: boolean, marks?: DiffMarks): Node {
  const reaching = p.files.filter((f) => REACHES.has(f.status));
  const cut = p.files.filter((f) => CUT.has(f.status)).map((f) => f.path);
  const files_ = `${reaching.length} file${reaching.length === 1 ? "" : "s"}`;
  const description = `${files_} · ${formatBytes(p.bytes)}${tokensPart(p.tokens)}${cut.length ? ` · cuts ${cut.join(", ")}` : ""}`;
  const files = p.files.map((f, i): Node => {
    const waits = f.status === "waiting" && f.globs?.length ? ` · loads when a file matching ${f.globs.join(", ")} is read` : "";
    // Why an import does not load where the agent starts, in the words `effective` prints.
    const why = p.importsSkipped?.find((l) => l.startsWith(`${f.path}: `))?.slice(f.path.length + 2);
    return {
      id: `${base}#agents#${p.profile}#${i}`,
      label: f.path,
      description: `${f.status}${f.by ? ` (${f.by})` : ""} · ${fileSize(f)} · ${f.scope}${waits}`,
      tooltip: `${f.path}\n${p.name ?? p.profile}: ${f.status}${f.by ? ` (${f.by})` : ""}${waits}\n${f.includedBytes} of ${f.bytes} bytes reach the agent${why ? `\n\n${why}` : ""}`,
      icon: profileIcon(f.status),
      uri: f.uri,
      cutBytes: f.status === "truncated" ? f.includedBytes : undefined,
    };
  });
  const node: Node = {
    id: `${base}#agents#${p.profile}`,
    label: collapsed ? p.profile : (p.name ?? p.profile),
    description,
    tooltip: `${heading(p)}${p.budget ? `\n${p.budget}` : ""}\n${p.nothing ? `Loads nothing here: ${p.nothing}` : `${p.bytes} bytes${tokensPart(p.tokens, true)} reach the agent`}`,
    icon: cut.length ? "truncated" : reaching.length ? "loaded" : "skipped",
    collapsed,
    children: files.length
      ? files
      : [note(`${base}#agents#${p.profile}#none`, `Loads nothing here${p.nothing ? `: ${p.nothing}` : ""}`)],
  };
  return marks ? marked(node, marks.base, marks.agents.get(p.profile)) : node;
}

/** The "Agents" group: a row per profile (what reaches that agent, what it cuts), its files below. */
export function agentsNode(base: string, all: AllProfiles, marks?: DiffMarks): Node {
  const rows = all.profiles.map((p) => profileNode(base, p, true, marks));
  return {
    id: `${base}#agents`,
    label: "Agents",
    description: String(rows.length),
    tooltip: all.selectedBecause,
    children: rows,
  };
}

/**
 * A folder as its agents see it (the default): a group per agent the repository targets, with
 * what each loads, cuts, ignores or keeps waiting; then, collapsed, the blocks this server hands
 * an agent that asks it (the engine's session: Baseline, Reached, For this file, Not loaded).
 */
export function agentsFolderNode(name: string, e: Effective, all: AllProfiles, activeFile?: string, marks?: DiffMarks): Node {
  const engine = folderNode(name, e, activeFile);
  const names = all.profiles.map((p) => p.name ?? p.profile);
  const node: Node = {
    id: e.folder,
    label: name,
    description: `for ${names.join(", ")}`,
    tooltip: all.selectedBecause,
    children: [
      ...all.profiles.map((p) => profileNode(e.folder, p, false, marks)),
      ...(all.starts ? [startsNode(e.folder, all.starts)] : []),
      {
        id: `${e.folder}#served`,
        label: "Served blocks",
        description: engine.description,
        tooltip: "What this server hands an agent that asks it (instructions/effective, the seeds' lifecycle): set the `profile` setting to show these first",
        collapsed: true,
        children: engine.children,
      },
    ],
  };
  return markFolder(node, marks);
}

/**
 * A folder's row marked when anything changed since the revision: an agent's view (the agents'
 * rows carry the details) or what the folder's lines say.
 */
export function markFolder(node: Node, marks?: DiffMarks): Node {
  if (!hasMarks(marks)) return node;
  const agents = [...marks.agents.keys()];
  const lines = [...(agents.length ? [`the view of ${agents.join(", ")} changes`] : []), ...marks.folder];
  return { ...marked(node, marks.base, lines), icon: undefined };
}

/** True when any of the agents omits or truncates a file. */
export function agentsCut(all: AllProfiles): boolean {
  return all.profiles.some((p) => p.files.some((f) => CUT.has(f.status)));
}

/** The status bar text for the agents: e.g. `$(book) Codex 31.9 KiB · Claude Code 12 KiB $(warning)`. */
export function agentsStatusText(all: AllProfiles): string {
  const cut = agentsCut(all);
  const parts = all.profiles.map((p) => `${p.name ?? p.profile} ${formatBytes(p.bytes)}`);
  // Past three agents the figures would not fit: how many, and which cut a file.
  const cutting = all.profiles.filter((p) => p.files.some((f) => CUT.has(f.status))).map((p) => p.name ?? p.profile);
  const text = parts.length > 3 ? `${parts.length} agents · ${cutting.length ? `${cutting.join(", ")} cut` : "none cut"}` : parts.join(" · ");
  return `$(book) ${text}${cut ? " $(warning)" : ""}`;
}

/** The status bar tooltip for the agents: a line per agent, and why these agents. */
export function agentsStatusTooltip(all: AllProfiles): string {
  const lines = all.profiles.map((p) => {
    const reaching = p.files.filter((f) => REACHES.has(f.status)).length;
    const cut = p.files.filter((f) => CUT.has(f.status)).map((f) => `${f.path} ${f.status}`);
    const tokens = p.tokens ? `, ${formatTokens(p.tokens, true)}` : "";
    return `${p.name ?? p.profile}: ${reaching} file(s), ${p.bytes} bytes${tokens}${cut.length ? `; ${cut.join(", ")}` : ""}`;
  });
  return [`Agent instructions (${all.selectedBecause ?? "the selected agents"})`, ...lines].join("\n");
}

/** How the server heads a profile's answer (as `effective` and `compare` do); its release when an older server gives none. */
function heading(p: ProfileResult): string {
  return p.headline ?? `${p.name ?? p.profile} (${p.mirrors})`;
}

/** "Show Effective Context" for the agents: each agent's text as it gets it, then the served blocks. */
export function agentsContextText(all: AllProfiles, e: Effective): string {
  const parts = all.profiles.map(
    (p) =>
      p.nothing && p.text === ""
        ? `<!-- ${heading(p)}: loads nothing here: ${p.nothing} -->`
        : `<!-- ${heading(p)}: ${p.bytes} bytes${p.tokens ? `, ${formatTokens(p.tokens, true)}` : ""} -->\n\n${p.text}`,
  );
  const served = contextText(e);
  if (served) parts.push(`<!-- Served blocks: what this server hands an agent that asks it -->\n\n${served}`);
  return parts.join("\n\n");
}

/**
 * The answer of `instructions-lsp diff BASE --json` (docs/cli.md#diff), as far as the sidebar
 * shows it. The comparison is the CLI's; this only puts its results on the tree's rows.
 */
export interface DiffState {
  status: string;
  bytes?: number;
  includedBytes?: number;
  by?: string;
  budget?: string;
}

export interface DiffChange {
  kind: "leaves" | "enters" | "resized" | "treated" | "text";
  file?: { path: string; own: boolean };
  before?: DiffState | null;
  after?: DiffState | null;
}

export interface DiffFinding {
  path: string;
  line: number;
  column: number;
  severity: string;
  code: string;
  agent: string | null;
  message: string;
}

export interface DiffResult {
  base: string;
  head: string;
  agents: string[];
  files: { path: string; before: number | null; after: number | null }[];
  groups: { agent: string; dirs: { dir: string; before: number; after: number }[]; changes: DiffChange[] }[];
  addedDirs: string[];
  removedDirs: string[];
  newFindings: DiffFinding[];
  goneFindings: DiffFinding[];
  changedFindings: DiffFinding[];
}

/** What the sidebar marks: per agent (profile id), the lines of its tooltip; and the folder's. */
export interface DiffMarks {
  /** The revision compared with ("HEAD"). */
  base: string;
  agents: Map<string, string[]>;
  /** Lines for the folder's row: new findings, places where agents start that come or go. */
  folder: string[];
}

function stateWords(s: DiffState | null | undefined): string {
  if (!s) return "not there";
  const size =
    s.status === "truncated" && s.includedBytes !== undefined && s.bytes !== undefined
      ? ` at ${s.includedBytes} of ${s.bytes} bytes`
      : s.bytes !== undefined
        ? `, ${s.bytes} bytes`
        : "";
  return `${s.status}${size}${s.by ? ` (${s.by})` : ""}${s.budget ? ` (${s.budget})` : ""}`;
}

/** A change in a few words; `dirs`: where the agent starts (a file marked `own` lies in each). */
function changeWords(c: DiffChange, dirs: string[]): string {
  const own = (path: string) => (dirs.length === 1 ? (dirs[0] === "." ? path : `${dirs[0]}/${path}`) : `their own ${path}`);
  const file = c.file ? (c.file.own ? own(c.file.path) : c.file.path) : "";
  const cutNow = c.after?.status === "truncated" && c.before?.status !== "truncated";
  switch (c.kind) {
    case "enters":
      return `${file} enters: ${stateWords(c.after)}${c.before ? ` (before: ${stateWords(c.before)})` : ""}`;
    case "leaves":
      return `${file} leaves: ${c.after ? stateWords(c.after) : "gone"} (before: ${stateWords(c.before)})`;
    case "resized":
      return `${file}${cutNow ? " is cut now" : ""}: ${stateWords(c.after)} (before: ${stateWords(c.before)})`;
    case "treated":
      return `${file}: ${stateWords(c.after)} (before: ${stateWords(c.before)})`;
    default:
      return "other text in the same files";
  }
}

function findingWords(f: DiffFinding): string {
  return `new finding: ${f.path}:${f.line}: ${f.severity}[${f.code}]: ${f.message}`;
}

/** Whether `dir` (from the repository's root) lies in the folder at `prefix` ("" = the root, else "pkg/"). */
function inFolder(dir: string, prefix: string): boolean {
  if (prefix === "") return true;
  const p = prefix.replace(/\/+$/, "");
  return dir === p || dir.startsWith(p + "/");
}

/**
 * The marks of a folder from the diff of its repository: an agent is marked when its view
 * changes in a directory of the folder (`prefix`: the folder's path from the repository's root,
 * as `git rev-parse --show-prefix` prints it) or a new finding is its own.
 */
export function diffMarks(d: DiffResult, prefix = ""): DiffMarks {
  const agents = new Map<string, string[]>();
  const add = (agent: string, line: string) => {
    const lines = agents.get(agent) ?? [];
    lines.push(line);
    agents.set(agent, lines);
  };
  for (const g of d.groups) {
    const dirs = g.dirs.map((x) => x.dir).filter((dir) => inFolder(dir, prefix));
    if (dirs.length === 0) continue;
    const where = dirs.length > 3 ? `${dirs.length} directories (${dirs.slice(0, 3).join(", ")}, …)` : dirs.join(", ");
    add(g.agent, `in ${where}: ${g.changes.map((c) => changeWords(c, dirs)).join("; ")}`);
  }
  const newFindings = d.newFindings.filter((f) => inFolder(f.path, prefix));
  for (const f of newFindings) if (f.agent) add(f.agent, findingWords(f));
  const folder = [
    ...newFindings.map(findingWords),
    ...d.addedDirs.filter((x) => inFolder(x, prefix)).map((x) => `agents start in ${x} now`),
    ...d.removedDirs.filter((x) => inFolder(x, prefix)).map((x) => `agents no longer start in ${x}`),
  ];
  return { base: d.base, agents, folder };
}

/** Whether the marks say anything. */
export function hasMarks(m: DiffMarks | undefined): m is DiffMarks {
  return !!m && (m.agents.size > 0 || m.folder.length > 0);
}

/** A row of an agent or folder with its marks: the description says so, the tooltip lists them. */
function marked(node: Node, base: string, lines: string[] | undefined): Node {
  if (!lines || lines.length === 0) return node;
  const label = `changed since ${base}`;
  return {
    ...node,
    description: node.description ? `${node.description} · ${label}` : label,
    tooltip: `${node.tooltip ? `${node.tooltip}\n\n` : ""}Changed since ${base} (Agent Instructions: Show Changes Since HEAD):\n${lines.map((l) => `- ${l}`).join("\n")}`,
    icon: "changed",
  };
}
