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

export type Icon = "loaded" | "truncated" | "omitted" | "skipped" | "info";

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
  text: string;
  parts: string[];
  bytes: number;
  budget?: string;
  files: ProfileFile[];
}

/** The answer to `instructions/effective` with `profile: "targets"` (or `"all"`). */
export interface AllProfiles {
  folder: string;
  profiles: ProfileResult[];
  /** Which agents, and why ("showing for Codex, Claude Code: detected from AGENTS.md, …"). */
  selectedBecause?: string;
  /** What to show first: the selected agents, or the engine's blocks (the `profile` setting). */
  view?: "agents" | "engine";
}

const REACHES = new Set(["loaded", "truncated"]);
const CUT = new Set(["truncated", "omitted"]);

function profileIcon(status: string): Icon {
  if (status === "loaded" || status === "truncated" || status === "omitted") return status;
  return "skipped";
}

/** One profile's row: what reaches that agent, what it cuts; its files below. */
function profileNode(base: string, p: ProfileResult, collapsed: boolean): Node {
  const reaching = p.files.filter((f) => REACHES.has(f.status));
  const cut = p.files.filter((f) => CUT.has(f.status)).map((f) => f.path);
  const files_ = `${reaching.length} file${reaching.length === 1 ? "" : "s"}`;
  const description = `${files_} · ${formatBytes(p.bytes)}${cut.length ? ` · cuts ${cut.join(", ")}` : ""}`;
  const files = p.files.map((f, i): Node => {
    const waits = f.status === "waiting" && f.globs?.length ? ` · loads when a file matching ${f.globs.join(", ")} is read` : "";
    return {
      id: `${base}#agents#${p.profile}#${i}`,
      label: f.path,
      description: `${f.status}${f.by ? ` (${f.by})` : ""} · ${fileSize(f)} · ${f.scope}${waits}`,
      tooltip: `${f.path}\n${p.name ?? p.profile}: ${f.status}${f.by ? ` (${f.by})` : ""}${waits}\n${f.includedBytes} of ${f.bytes} bytes reach the agent`,
      icon: profileIcon(f.status),
      uri: f.uri,
      cutBytes: f.status === "truncated" ? f.includedBytes : undefined,
    };
  });
  return {
    id: `${base}#agents#${p.profile}`,
    label: collapsed ? p.profile : (p.name ?? p.profile),
    description,
    tooltip: `${p.name ?? p.profile} mirrors ${p.mirrors}${p.budget ? `\n${p.budget}` : ""}\n${p.bytes} bytes reach the agent`,
    icon: cut.length ? "truncated" : reaching.length ? "loaded" : "skipped",
    collapsed,
    children: files.length ? files : [note(`${base}#agents#${p.profile}#none`, "Loads nothing here")],
  };
}

/** The "Agents" group: a row per profile (what reaches that agent, what it cuts), its files below. */
export function agentsNode(base: string, all: AllProfiles): Node {
  const rows = all.profiles.map((p) => profileNode(base, p, true));
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
export function agentsFolderNode(name: string, e: Effective, all: AllProfiles, activeFile?: string): Node {
  const engine = folderNode(name, e, activeFile);
  const names = all.profiles.map((p) => p.name ?? p.profile);
  return {
    id: e.folder,
    label: name,
    description: `for ${names.join(", ")}`,
    tooltip: all.selectedBecause,
    children: [
      ...all.profiles.map((p) => profileNode(e.folder, p, false)),
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
}

/** True when any of the agents omits or truncates a file. */
export function agentsCut(all: AllProfiles): boolean {
  return all.profiles.some((p) => p.files.some((f) => CUT.has(f.status)));
}

/** The status bar text for the agents: e.g. `$(book) Codex 31.9 KiB · Claude Code 12 KiB $(warning)`. */
export function agentsStatusText(all: AllProfiles): string {
  const cut = agentsCut(all);
  const parts = all.profiles.map((p) => `${p.name ?? p.profile} ${formatBytes(p.bytes)}`);
  const text = parts.length > 3 ? `${parts.length} agents` : parts.join(" · ");
  return `$(book) ${text}${cut ? " $(warning)" : ""}`;
}

/** The status bar tooltip for the agents: a line per agent, and why these agents. */
export function agentsStatusTooltip(all: AllProfiles): string {
  const lines = all.profiles.map((p) => {
    const reaching = p.files.filter((f) => REACHES.has(f.status)).length;
    const cut = p.files.filter((f) => CUT.has(f.status)).map((f) => `${f.path} ${f.status}`);
    return `${p.name ?? p.profile}: ${reaching} file(s), ${p.bytes} bytes${cut.length ? `; ${cut.join(", ")}` : ""}`;
  });
  return [`Agent instructions (${all.selectedBecause ?? "the selected agents"})`, ...lines].join("\n");
}

/** "Show Effective Context" for the agents: each agent's text as it gets it, then the served blocks. */
export function agentsContextText(all: AllProfiles, e: Effective): string {
  const parts = all.profiles.map((p) => `<!-- ${p.name ?? p.profile} (mirrors ${p.mirrors}): ${p.bytes} bytes -->\n\n${p.text}`);
  const served = contextText(e);
  if (served) parts.push(`<!-- Served blocks: what this server hands an agent that asks it -->\n\n${served}`);
  return parts.join("\n\n");
}
