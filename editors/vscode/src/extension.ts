// The Agent Instructions extension: starts instructions-lsp, reports file touches, and shows
// the Active Guidance tree, the status bar item and the commands.

import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

import {
  agentsFolderNode,
  agentsContextText,
  agentsCut,
  agentsNode,
  agentsStatusText,
  agentsStatusTooltip,
  AllProfiles,
  contextText,
  diffMarks,
  DiffMarks,
  DiffResult,
  Effective,
  folderNode,
  isCut,
  markFolder,
  Node,
  statusText,
  statusTooltip,
} from "./model";
import { resolveServer } from "./resolve";
import { TOOL_NAME, resolveToolPath, toolText } from "./tool";
import { cliSetArgs, documentPatterns, explicitValue, missingServerNotice, onceNotifier, repositoryUrl } from "./settings";

/** Settings the server reads; the others (`server.path`, `trace.server`, `logLevel`) are ours. */
const SERVER_KEYS = [
  "profile",
  "instructionFileCandidates",
  "localInstructionFileCandidates",
  "dshHome",
  "globalInstructionFile",
  "projectRootMarkers",
  "baselineMaxBytes",
  "maxFileBytes",
  "frame",
  "symlinks",
  "dedupeTrimmed",
  "watch",
  "stateDir",
  "profiles",
];

/** A setting's explicit value, with restricted keys from user settings only while untrusted. */
function explicit<T>(cfg: vscode.WorkspaceConfiguration, key: string): T | undefined {
  return explicitValue<T>(key, cfg.inspect<T>(key), vscode.workspace.isTrusted);
}

/** Only the keys a user set (at any level), so the server's own defaults apply otherwise. */
function explicitSettings(scope?: vscode.Uri): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration("instructions", scope);
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const v = explicit(cfg, key);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/** Candidate and overlay names of a scope (as the server would judge them). */
function candidateNames(scope?: vscode.Uri): string[] {
  const cfg = vscode.workspace.getConfiguration("instructions", scope);
  const profile = cfg.get<string>("profile", "dsh");
  const main = explicit<string[]>(cfg, "instructionFileCandidates") ?? ["AGENTS.md", "CLAUDE.md"];
  const overlays = explicit<string[]>(cfg, "localInstructionFileCandidates") ?? (profile === "ds4" ? ["AGENTS.local.md"] : []);
  return [...main, ...overlays].filter((n) => n && !n.includes("/") && !n.includes("\\"));
}

function allCandidateNames(): string[] {
  const names = new Set<string>(candidateNames());
  for (const f of vscode.workspace.workspaceFolders ?? []) candidateNames(f.uri).forEach((n) => names.add(n));
  return [...names];
}

function isCandidate(doc: vscode.TextDocument): boolean {
  return doc.uri.scheme === "file" && candidateNames(doc.uri).includes(path.basename(doc.uri.fsPath));
}

let client: LanguageClient | undefined;
/** Shows a read-only Markdown text (set once the extension is active). */
let showText: (name: string, text: string) => Promise<void> = async () => undefined;
/** The binary the client runs; `diff` runs the same one. */
let serverPath: string | undefined;
let output: vscode.OutputChannel;
let notifyMissing: ReturnType<typeof onceNotifier>;

async function startClient(context: vscode.ExtensionContext): Promise<LanguageClient | undefined> {
  const cfg = vscode.workspace.getConfiguration("instructions");
  const bundled = path.join(context.extensionPath, "server", process.platform === "win32" ? "instructions-lsp.exe" : "instructions-lsp");
  const resolved = await resolveServer(
    {
      // Scope `machine` keeps it out of workspace settings; read like the server's keys anyway.
      setting: explicit<string>(cfg, "server.path") ?? "",
      env: process.env.INSTRUCTIONS_LSP_PATH,
      bundled,
      pathEnv: process.env.PATH,
      exe: process.platform === "win32" ? "instructions-lsp.exe" : "instructions-lsp",
    },
    {
      exists: (f) => fs.existsSync(f),
      version: (f) =>
        new Promise((resolve) => {
          execFile(f, ["--version"], { timeout: 5000 }, (err, stdout) => {
            if (err) resolve({ ok: false, error: err.message });
            else resolve({ ok: true, line: stdout.split("\n")[0].trim() });
          });
        }),
    },
  );
  if (!resolved.ok) {
    output.appendLine(resolved.message);
    const docs = repositoryUrl(context.extension.packageJSON?.repository);
    void notifyMissing(missingServerNotice(`${process.platform}-${process.arch}`, docs));
    return undefined;
  }
  output.appendLine(`Using ${resolved.version} at ${resolved.path}`);
  serverPath = resolved.path;
  const serverOptions: ServerOptions = {
    command: resolved.path,
    args: ["--log-level", cfg.get<string>("logLevel", "info")],
    transport: TransportKind.stdio,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentPatterns(allCandidateNames()).map((pattern) => ({ scheme: "file", pattern })),
    outputChannel: output,
    initializationOptions: explicitSettings(),
    synchronize: { configurationSection: "instructions" },
    middleware: {
      // An agent's lens opens the agent's exact text, which the server answers with.
      executeCommand: async (command, args, next) => {
        const answer = await next(command, args);
        if (command === "instructions.showView" && answer && typeof answer.text === "string") {
          // A path's slashes would make the title a folder of the document's URI.
          await showText(`${String(answer.title).replace(/\//g, "\u2215")}.md`, answer.text);
        }
        return answer;
      },
      workspace: {
        configuration: (params) =>
          params.items.map((item) =>
            item.section === "instructions" ? explicitSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined) : null,
          ),
      },
    },
  };
  const c = new LanguageClient("instructions", "Agent Instructions", serverOptions, clientOptions);
  await c.start();
  return c;
}

/** Reports every other file opened or saved as a touch, without sending its text. */
function touch(doc: vscode.TextDocument, kind: "read" | "write") {
  if (!client || doc.uri.scheme !== "file" || isCandidate(doc)) return;
  if (!vscode.workspace.getWorkspaceFolder(doc.uri)) return;
  void client.sendNotification("instructions/touch", { uri: doc.uri.toString(), kind });
}

class GuidanceTree implements vscode.TreeDataProvider<Node> {
  private emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  /** The last results per folder URI, for the status bar: the engine's, and the agents'. */
  results = new Map<string, { e: Effective; all: AllProfiles }>();

  refresh() {
    this.emitter.fire(undefined);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const collapsible = !node.children
      ? vscode.TreeItemCollapsibleState.None
      : node.collapsed
        ? vscode.TreeItemCollapsibleState.Collapsed
        : vscode.TreeItemCollapsibleState.Expanded;
    const item = new vscode.TreeItem(node.label, collapsible);
    item.id = node.id;
    item.description = node.description;
    item.tooltip = node.tooltip;
    const icons: Record<string, vscode.ThemeIcon> = {
      loaded: new vscode.ThemeIcon("pass", new vscode.ThemeColor("testing.iconPassed")),
      truncated: new vscode.ThemeIcon("warning", new vscode.ThemeColor("list.warningForeground")),
      omitted: new vscode.ThemeIcon("circle-slash", new vscode.ThemeColor("list.warningForeground")),
      skipped: new vscode.ThemeIcon("eye-closed"),
      changed: new vscode.ThemeIcon("diff-modified", new vscode.ThemeColor("gitDecoration.modifiedResourceForeground")),
      info: new vscode.ThemeIcon("info"),
    };
    if (node.icon) item.iconPath = icons[node.icon];
    if (node.uri) {
      item.resourceUri = vscode.Uri.parse(node.uri);
      item.command = { command: "instructions.openFile", title: "Open", arguments: [node.uri, node.cutBytes] };
    }
    return item;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node) return node.children ?? [];
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (!client || folders.length === 0) return [];
    const active = vscode.window.activeTextEditor?.document.uri;
    const nodes: Node[] = [];
    this.results.clear();
    for (const folder of folders) {
      const inFolder = active && active.scheme === "file" && vscode.workspace.getWorkspaceFolder(active)?.uri.toString() === folder.uri.toString();
      try {
        const uri = inFolder && active ? active.toString() : folder.uri.toString();
        const e = await client.sendRequest<Effective>("instructions/effective", { uri });
        // The agents the repository targets (its instructions-lsp.toml, else what its files
        // show; the `profiles` setting overrides it), as if they had read the active file.
        const all = await client.sendRequest<AllProfiles>("instructions/effective", { uri, profile: "targets", tokens: true });
        this.results.set(folder.uri.toString(), { e, all });
        const activeFile = inFolder ? active?.toString() : undefined;
        const marks = diffs.marks.get(folder.uri.toString());
        if (all.view === "agents") {
          nodes.push(agentsFolderNode(folder.name, e, all, activeFile, marks));
        } else {
          // `profile` chosen: the engine's blocks first, the agents compared below.
          const node = folderNode(folder.name, e, activeFile);
          node.children!.push(agentsNode(e.folder, all, marks));
          nodes.push(markFolder(node, marks));
        }
      } catch (err) {
        nodes.push({ id: folder.uri.toString(), label: folder.name, description: `error: ${String(err)}`, icon: "info" });
      }
    }
    const empty = [...this.results.values()].every(
      ({ e, all }) => e.baseline.files.length === 0 && e.nested.length === 0 && all.profiles.every((p) => p.files.length === 0),
    );
    void vscode.commands.executeCommand("setContext", "instructions.noFiles", empty);
    status.update(this);
    return nodes;
  }
}

class Status {
  item = vscode.window.createStatusBarItem("instructions.status", vscode.StatusBarAlignment.Right, 100);

  constructor() {
    this.item.name = "Agent Instructions";
    this.item.command = "instructions.activeGuidance.focus";
  }

  update(tree: GuidanceTree) {
    const active = vscode.window.activeTextEditor?.document.uri;
    const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
    const r = folder && tree.results.get(folder.uri.toString());
    if (!r) {
      this.item.hide();
      return;
    }
    const agents = r.all.view === "agents";
    const cut = agents ? agentsCut(r.all) : isCut(r.e);
    this.item.text = agents ? agentsStatusText(r.all) : statusText(r.e);
    this.item.tooltip = `${folder.name}: ${agents ? agentsStatusTooltip(r.all) : statusTooltip(r.e)}`;
    this.item.backgroundColor = cut ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    this.item.show();
  }
}

let status: Status;

/** Runs a program (git, the server binary) with `args` in `cwd`: its stdout, or an error with its stderr. */
function run(file: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error((stderr || err.message).trim()));
      else resolve(stdout);
    });
  });
}

/** The folder's path from the root of its git repository ("" at the root), or an error. */
function gitPrefix(cwd: string): Promise<string> {
  return run("git", ["rev-parse", "--show-prefix"], cwd).then((s) => s.trim());
}

/**
 * What changed since HEAD, per folder: `instructions-lsp diff HEAD --json` (the CLI computes it;
 * the sidebar only marks its rows). Run after a change, debounced, for the folders that are in a
 * git repository; a folder that is not, or a failure, has no marks and no popup.
 */
class Diffs {
  marks = new Map<string, DiffMarks>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  /** The last failure logged per folder, so that one that repeats is logged once. */
  private failed = new Map<string, string>();

  constructor(private onChange: () => void) {}

  schedule(delay = 1000) {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.update(), delay);
  }

  private async update() {
    this.timer = undefined;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      const next = new Map<string, DiffMarks>();
      // An untrusted repository's git config may name programs to run: no git there.
      const folders = vscode.workspace.isTrusted ? (vscode.workspace.workspaceFolders ?? []) : [];
      for (const folder of folders) {
        if (folder.uri.scheme !== "file" || !serverPath) continue;
        const cwd = folder.uri.fsPath;
        let prefix: string;
        try {
          prefix = await gitPrefix(cwd);
        } catch {
          continue; // Not a git repository, or no git: nothing to compare with.
        }
        try {
          const d = JSON.parse(await run(serverPath, ["diff", "HEAD", "--json", ...cliSetArgs(explicitSettings(folder.uri))], cwd)) as DiffResult;
          next.set(folder.uri.toString(), diffMarks(d, prefix));
          this.failed.delete(cwd);
        } catch (err) {
          const message = `diff HEAD in ${cwd}: ${err instanceof Error ? err.message : String(err)}`;
          if (this.failed.get(cwd) !== message) output.appendLine(message);
          this.failed.set(cwd, message);
        }
      }
      const key = (m: Map<string, DiffMarks>) => JSON.stringify([...m].map(([k, v]) => [k, v.folder, [...v.agents]]));
      const changed = key(next) !== key(this.marks);
      this.marks = next;
      if (changed) this.onChange();
    } finally {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.schedule(0);
      }
    }
  }
}

let diffs: Diffs;

/** The folder (or active file) a command is about. */
function commandTarget(): string | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active && active.scheme === "file" && vscode.workspace.getWorkspaceFolder(active)) return active.toString();
  return vscode.workspace.workspaceFolders?.[0]?.uri.toString();
}

class ReadOnlyDocs implements vscode.TextDocumentContentProvider {
  texts = new Map<string, string>();
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }
}

/** The workspace folders, for the tool's paths. */
function toolFolders() {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => ({ name: f.name, fsPath: f.uri.fsPath }));
}

/**
 * The language model tool: agent mode asks for the instructions of the file it is about to work
 * on. The answer comes from the running server, and the call is a touch of the same session, so
 * the sidebar's Reached group shows what the agent was given.
 */
class InstructionsTool implements vscode.LanguageModelTool<{ path: string }> {
  prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<{ path: string }>) {
    const p = typeof options.input?.path === "string" ? options.input.path : "a file";
    return { invocationMessage: `Reading the agent instructions for ${p}` };
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<{ path: string }>): Promise<vscode.LanguageModelToolResult> {
    if (!client) throw new Error("the instructions-lsp server is not running (see the Agent Instructions log)");
    const file = resolveToolPath(options.input, toolFolders(), (p) => fs.existsSync(p));
    const uri = vscode.Uri.file(file);
    // Asked before the touch, so that the preview is what the touch adds.
    const e = await client.sendRequest<Effective>("instructions/effective", { uri: uri.toString() });
    await client.sendNotification("instructions/touch", { uri: uri.toString(), kind: "read" });
    return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(toolText(vscode.workspace.asRelativePath(uri), e))]);
  }
}

export async function activate(context: vscode.ExtensionContext) {
  output = vscode.window.createOutputChannel("Agent Instructions");
  notifyMissing = onceNotifier(
    (message, ...buttons) => vscode.window.showErrorMessage(message, ...buttons),
    (url) => void vscode.env.openExternal(vscode.Uri.parse(url)),
  );
  status = new Status();
  const tree = new GuidanceTree();
  diffs = new Diffs(() => tree.refresh());
  const docs = new ReadOnlyDocs();
  context.subscriptions.push(output, status.item);
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider("instructions", docs));
  context.subscriptions.push(vscode.window.registerTreeDataProvider("instructions.activeGuidance", tree));

  const connect = async () => {
    client = await startClient(context);
    if (!client) return;
    context.subscriptions.push(
      client.onNotification("instructions/didChange", () => {
        tree.refresh();
        diffs.schedule();
      }),
    );
    for (const doc of vscode.workspace.textDocuments) touch(doc, "read");
    tree.refresh();
    diffs.schedule(0);
  };

  const show = async (name: string, text: string, language: string) => {
    const uri = vscode.Uri.parse(`instructions:/${name}`);
    docs.texts.set(uri.toString(), text);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, language);
    await vscode.window.showTextDocument(doc, { preview: true });
  };

  showText = (name, text) => show(name, text, "markdown");

  // Any other file of a folder: what each agent gets when it reads it, as a lens per agent and
  // the hover on its first line (the server answers for files it is not sent).
  const other = (doc: vscode.TextDocument) =>
    client !== undefined && doc.uri.scheme === "file" && !isCandidate(doc) && vscode.workspace.getWorkspaceFolder(doc.uri) !== undefined;
  context.subscriptions.push(
    vscode.languages.registerCodeLensProvider(
      { scheme: "file" },
      {
        async provideCodeLenses(doc, token) {
          if (!other(doc)) return [];
          const lenses = await client!.sendRequest("textDocument/codeLens", { textDocument: { uri: doc.uri.toString() } }, token);
          return client!.protocol2CodeConverter.asCodeLenses(lenses as never, token);
        },
      },
    ),
    vscode.languages.registerHoverProvider(
      { scheme: "file" },
      {
        async provideHover(doc, position, token) {
          if (!other(doc) || position.line !== 0) return undefined;
          const params = { textDocument: { uri: doc.uri.toString() }, position: { line: position.line, character: position.character } };
          const hover = await client!.sendRequest("textDocument/hover", params, token);
          return hover ? client!.protocol2CodeConverter.asHover(hover as never) : undefined;
        },
      },
    ),
  );

  const effective = async (): Promise<Effective | undefined> => {
    const target = commandTarget();
    if (!client || !target) {
      void vscode.window.showWarningMessage("Agent Instructions: no server or no folder.");
      return undefined;
    }
    return client.sendRequest<Effective>("instructions/effective", { uri: target });
  };

  context.subscriptions.push(
    vscode.lm.registerTool(TOOL_NAME, new InstructionsTool()),
    // What agent mode gets from the tool for a file, through VS Code's own tool API.
    vscode.commands.registerCommand("instructions.askTool", async (given?: string) => {
      const active = vscode.window.activeTextEditor?.document.uri;
      const p =
        given ??
        (await vscode.window.showInputBox({
          title: "Ask the agent tool about a file",
          prompt: "A path, absolute or relative to the workspace folder",
          value: active?.scheme === "file" ? active.fsPath : "",
        }));
      if (!p) return;
      if (!vscode.lm.tools.some((t) => t.name === TOOL_NAME)) {
        void vscode.window.showErrorMessage(`Agent Instructions: the tool ${TOOL_NAME} is not registered`);
        return;
      }
      try {
        const result = await vscode.lm.invokeTool(TOOL_NAME, { input: { path: p }, toolInvocationToken: undefined });
        const text = result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : "")).join("");
        await show("Agent Tool Result.md", `<!-- ${TOOL_NAME} {"path": ${JSON.stringify(p)}} -->\n\n${text}`, "markdown");
      } catch (err) {
        void vscode.window.showErrorMessage(`Agent Instructions: ${err instanceof Error ? err.message : String(err)}`);
      }
      tree.refresh();
    }),
    vscode.commands.registerCommand("instructions.showEffective", async () => {
      const e = await effective();
      if (!e) return;
      const preview = e.preview && e.preview.rendered ? `\n\n<!-- preview: what a touch of the active file adds -->\n\n${e.preview.rendered}` : "";
      // The agents the repository targets first (as if they had read the active file), unless
      // the `profile` setting chose the engine's rules.
      const all = await client!.sendRequest<AllProfiles>("instructions/effective", { uri: commandTarget(), profile: "targets", tokens: true });
      const text = all.view === "agents" ? agentsContextText(all, e) : contextText(e) + preview;
      await show("Effective Context.md", text, "markdown");
    }),
    vscode.commands.registerCommand("instructions.copyContext", async () => {
      const e = await effective();
      if (!e) return;
      await vscode.env.clipboard.writeText(contextText(e));
      void vscode.window.showInformationMessage(`Copied ${contextText(e).length} characters of agent context.`);
    }),
    vscode.commands.registerCommand("instructions.showTransitions", async () => {
      const target = commandTarget();
      if (!client || !target) return;
      const t = await client.sendRequest("instructions/transitions", { uri: target, since: 0 });
      await show("Transitions.json", JSON.stringify(t, null, 2), "json");
    }),
    vscode.commands.registerCommand("instructions.refresh", () => {
      tree.refresh();
      diffs.schedule(0);
    }),
    // What changed since HEAD for each agent, in the words of `instructions-lsp diff HEAD`.
    vscode.commands.registerCommand("instructions.showDiff", async () => {
      const target = commandTarget();
      const folder = target ? vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(target)) : undefined;
      if (!folder || folder.uri.scheme !== "file") {
        void vscode.window.showWarningMessage("Agent Instructions: open a folder that is in a git repository to see what changed since HEAD.");
        return;
      }
      if (!serverPath) {
        void vscode.window.showErrorMessage("Agent Instructions: no instructions-lsp binary (see the Agent Instructions log).");
        return;
      }
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage("Agent Instructions: trust this workspace to compare it with HEAD (it runs git).");
        return;
      }
      try {
        await gitPrefix(folder.uri.fsPath);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        void vscode.window.showWarningMessage(`Agent Instructions: ${folder.name} is not in a git repository, or git cannot run: ${why}`);
        return;
      }
      try {
        const text = await run(
          serverPath,
          ["diff", "HEAD", "--format", "markdown", ...cliSetArgs(explicitSettings(folder.uri))],
          folder.uri.fsPath,
        );
        await show(`Changes Since HEAD (${folder.name}).md`, text, "markdown");
      } catch (err) {
        void vscode.window.showErrorMessage(`Agent Instructions: diff HEAD: ${err instanceof Error ? err.message : String(err)}`);
      }
      diffs.schedule(0);
    }),
    vscode.commands.registerCommand("instructions.restartServer", async () => {
      if (client) {
        await client.stop();
        client = undefined;
      }
      await connect();
    }),
    vscode.commands.registerCommand("instructions.openLog", () => output.show()),
    vscode.commands.registerCommand("instructions.createAgentsMd", async () => {
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (!folder) return;
      const uri = vscode.Uri.joinPath(folder.uri, "AGENTS.md");
      const edit = new vscode.WorkspaceEdit();
      edit.createFile(uri, { ignoreIfExists: true });
      await vscode.workspace.applyEdit(edit);
      await vscode.window.showTextDocument(uri);
    }),
    vscode.commands.registerCommand("instructions.openFile", async (uri: string, cutBytes?: number) => {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
      const editor = await vscode.window.showTextDocument(doc);
      if (cutBytes !== undefined) {
        // Byte offset of the cut -> character offset -> position.
        const chars = Buffer.from(doc.getText(), "utf8").subarray(0, cutBytes).toString("utf8").length;
        const pos = doc.positionAt(chars);
        editor.selection = new vscode.Selection(pos, doc.positionAt(doc.getText().length));
        editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenter);
      }
    }),
  );

  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument((doc) => touch(doc, "read")),
    vscode.workspace.onDidSaveTextDocument((doc) => {
      touch(doc, "write");
      tree.refresh();
      diffs.schedule();
    }),
    vscode.window.onDidChangeActiveTextEditor(() => tree.refresh()),
    // Trust unlocks the workspace's restricted settings: the server must start over with them.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void vscode.commands.executeCommand("instructions.restartServer")),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      tree.refresh();
      diffs.schedule();
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      // The document selector and the binary are fixed when the client starts.
      const restart = ["instructions.server.path", "instructions.logLevel", "instructions.instructionFileCandidates", "instructions.localInstructionFileCandidates", "instructions.profile"];
      if (restart.some((k) => e.affectsConfiguration(k))) {
        await vscode.commands.executeCommand("instructions.restartServer");
      } else if (e.affectsConfiguration("instructions")) {
        setTimeout(() => tree.refresh(), 200);
      }
    }),
  );

  await connect();
}

export async function deactivate() {
  if (client) await client.stop();
}
