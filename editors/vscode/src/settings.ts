// Which level of a setting the extension passes on. Pure (no `vscode` import) so that it is
// unit-tested; extension.ts feeds it `WorkspaceConfiguration.inspect()` results.

/**
 * Settings a hostile workspace could use to make the server read files outside it (and show
 * their text) or to run a binary. package.json lists the same keys under
 * `capabilities.untrustedWorkspaces.restrictedConfigurations`; a unit test keeps the two equal.
 */
export const RESTRICTED_KEYS = [
  "server.path",
  "globalInstructionFile",
  "dshHome",
  "stateDir",
  "instructionFileCandidates",
  "localInstructionFileCandidates",
  "projectRootMarkers",
  "symlinks",
] as const;

/** Settings about the server process itself, not about what the agents get. */
const PROCESS_KEYS = ["watch", "stateDir"];

/**
 * The CLI's `--set` arguments for the settings a folder's server gets (`explicitSettings`), so
 * that `instructions-lsp diff` run for the sidebar compares the agents and limits the sidebar
 * shows, not only what the repository's own configuration names. Each value goes as JSON (a
 * string too, so that "true" stays a string).
 */
export function cliSetArgs(settings: Record<string, unknown>): string[] {
  return Object.entries(settings)
    .filter(([key]) => !PROCESS_KEYS.includes(key))
    .flatMap(([key, value]) => ["--set", `${key}=${JSON.stringify(value)}`]);
}

/** The levels of `inspect()` that can hold a value the user or the workspace set. */
export interface Levels<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * The value a user or workspace explicitly set for `key` (folder, then workspace, then user),
 * or undefined so the server's default applies. In an untrusted workspace a restricted key
 * comes from the user's own settings only. VS Code drops the workspace values of the keys the
 * manifest declares restricted, but `inspect()` reports any key left off that list (the e2e test
 * showed a workspace's globalInstructionFile reaching the server that way), so the extension
 * does not rely on the manifest alone.
 */
export function explicitValue<T>(key: string, levels: Levels<T> | undefined, trusted: boolean): T | undefined {
  if (!levels) return undefined;
  const restricted = (RESTRICTED_KEYS as readonly string[]).includes(key);
  const order = trusted || !restricted ? [levels.workspaceFolderValue, levels.workspaceValue, levels.globalValue] : [levels.globalValue];
  return order.find((v) => v !== undefined);
}

/** The repository's web address from package.json's `repository` (string or object form). */
export function repositoryUrl(repository: string | { url?: string } | undefined): string | undefined {
  const raw = typeof repository === "string" ? repository : repository?.url;
  if (!raw) return undefined;
  return raw.replace(/^git\+/, "").replace(/\.git$/, "");
}

/** The notification shown when no server could be found, and its button. */
export interface MissingServerNotice {
  message: string;
  docsButton: string;
  docsUrl?: string;
}

/** What to tell a user whose platform has no bundled server and who has none installed. */
export function missingServerNotice(platform: string, docsUrl: string | undefined): MissingServerNotice {
  return {
    message:
      `Agent Instructions: no instructions-lsp server was found for ${platform} (none is bundled, none is at ` +
      `"instructions.server.path", none is on PATH). Install it with \`cargo install instructions-lsp\` ` +
      `(or \`cargo install --path .\` in a checkout of the repository), then run "Agent Instructions: Restart Server".`,
    docsButton: "Open Install Docs",
    docsUrl,
  };
}

/**
 * Shows the missing-server notice at most once per window: the server restarts on every
 * change of a relevant setting, and each failed restart must not stack another notification
 * (the details of each attempt go to the output channel instead).
 */
export function onceNotifier(
  show: (message: string, ...buttons: string[]) => PromiseLike<string | undefined>,
  open: (url: string) => void,
): (notice: MissingServerNotice) => Promise<boolean> {
  let shown = false;
  return async (notice) => {
    if (shown) return false;
    shown = true;
    const buttons = notice.docsUrl ? [notice.docsButton] : [];
    const pick = await show(notice.message, ...buttons);
    if (pick === notice.docsButton && notice.docsUrl) open(notice.docsUrl);
    return true;
  };
}

/**
 * The files the server gives hovers, lenses, links and diagnostics on, besides the engine's
 * candidates: every agent's own files (the server's `is_agent_path`: its file names, Copilot's
 * `*.instructions.md`, Cursor's `*.mdc`), Markdown in a `.claude` folder (rules, imports), and
 * the project configuration (not `.vscode/settings.json`, which VS Code's own editor serves). A
 * test holds this list to the server's.
 */
export const INSTRUCTION_PATTERNS = [
  "**/AGENTS.md",
  "**/AGENTS.override.md",
  "**/AGENTS.local.md",
  "**/CLAUDE.md",
  "**/CLAUDE.local.md",
  "**/GEMINI.md",
  "**/CONTEXT.md",
  "**/copilot-instructions.md",
  "**/.cursorrules",
  "**/*.instructions.md",
  "**/*.mdc",
  "**/.claude/**/*.md",
  "**/instructions-lsp.toml",
  "**/.instructions-lsp.toml",
];

/** The client's document selector: the candidates a user named (one brace pattern), then every pattern above. */
export function documentPatterns(candidates: string[]): string[] {
  const named = candidates.length ? [`**/{${candidates.join(",")}}`] : [];
  return [...named, ...INSTRUCTION_PATTERNS];
}
