// End to end in a real VS Code: code-server (installed offline by scripts/install-code-server.sh) with the
// packaged .vsix installed, a two-folder workspace, driven by playwright-core in Debian's
// headless Chromium. Screenshots go to .artifacts/vscode/ (ignored by git).
import { execFileSync } from "child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import {
  TIMEOUT,
  installCodeServer,
  launchChromium,
  root,
  startCodeServer as start,
  stopCodeServer,
  userSettings,
  waitFor,
} from "./code-server.mjs";

const artifacts = join(root, ".artifacts/vscode");
const vsix = join(root, "vsix/instructions-lsp-linux-x64.vsix");

function log(msg) {
  console.log(`[e2e] ${msg}`);
}

let shot = async () => {};
let failures = 0;
let passes = 0;
async function check(name, fn) {
  try {
    await fn();
    passes += 1;
    log(`ok - ${name}`);
  } catch (e) {
    failures += 1;
    log(`not ok - ${name}: ${e.message}`);
    await shot(`failed-${passes + failures}`).catch(() => {});
  }
}

// 1. The real VS Code, installed offline.
const codeServer = installCodeServer();
if (!existsSync(vsix)) execFileSync("npm", ["run", "vsix"], { cwd: root, stdio: "inherit" });

// 2. A fresh profile, the extension installed from the .vsix, and the fixture workspace.
const tmp = mkdtempSync(join(tmpdir(), "instructions-e2e-"));
const [userDir, extDir, home, ws] = ["user", "ext", "home", "ws"].map((d) => join(tmp, d));
for (const d of [userDir, extDir, home, ws]) mkdirSync(d, { recursive: true });
cpSync(join(root, "editors/vscode/test/fixture"), ws, { recursive: true });
// alpha is a git repository with its files committed (the sidebar marks what differs from
// HEAD); beta only looks like one to the server's root markers.
mkdirSync(join(ws, "beta", ".git"));
const git = (...args) => execFileSync("git", ["-c", "user.name=e2e", "-c", "user.email=e2e@example.com", ...args], { cwd: join(ws, "alpha"), stdio: "pipe" });
git("init", "-q");
git("add", "-A");
git("commit", "-qm", "the fixture");
const workspaceFile = join(ws, "fixture.code-workspace");
writeFileSync(workspaceFile, JSON.stringify({ folders: [{ path: "alpha" }, { path: "beta" }] }, null, 2));
userSettings(userDir, { "security.workspace.trust.enabled": false, "editor.hover.delay": 50 });
const env = { ...process.env, HOME: home, INSTRUCTIONS_LSP_PATH: "" };
delete env.INSTRUCTIONS_LSP_PATH;
execFileSync(codeServer, ["--user-data-dir", userDir, "--extensions-dir", extDir, "--install-extension", vsix], { env, stdio: "inherit" });
const installed = readdirSync(extDir).filter((d) => d.startsWith("instructions-lsp."));
if (installed.length !== 1) throw new Error(`the extension did not install: ${readdirSync(extDir)}`);
log(`installed ${installed[0]}`);

// 3. code-server on loopback (one launch per scenario), and Chromium.
const startCodeServer = (name, user, args) => start({ codeServer, tmp, name, user, ext: extDir, env, args });

/** Opens the Active Guidance view; returns a reader of its rows as "label description". */
async function openGuidance(page) {
  // Open the view: the activity bar entry, then the pane if it starts collapsed.
  const activity = page.locator('.activitybar .action-item a[aria-label^="Agent Instructions"]');
  await activity.waitFor({ timeout: TIMEOUT });
  await activity.click();
  const header = page.locator('.pane-header:has-text("Active Guidance")');
  // A container's only view hides its header; a collapsed one must be expanded first.
  await header.waitFor({ state: "attached", timeout: TIMEOUT });
  if ((await header.getAttribute("aria-expanded")) === "false" && (await header.isVisible())) await header.click();
  const view = page.locator('.pane:has(.pane-header:has-text("Active Guidance")) .pane-body');
  // innerText would glue label and description together.
  const rows = () =>
    view.locator(".monaco-list-row").evaluateAll((els) =>
      els.map((el) => {
        const part = (sel) => (el.querySelector(sel)?.textContent ?? "").trim();
        return `${part(".label-name")} ${part(".label-description")}`.replace(/\s+/g, " ").trim();
      }),
    );
  return { view, rows };
}

/** Runs "Agent Instructions: COMMAND" from the palette; returns the text of the document it opens in TAB once `has` it. */
async function commandDocument(page, command, tab, what, has) {
  await page.keyboard.press("F1");
  await page.keyboard.type(`Agent Instructions: ${command}`);
  await page.keyboard.press("Enter");
  await page.locator(`.tab.active:has-text("${tab}")`).waitFor({ timeout: TIMEOUT });
  const lines = page.locator(".part.editor .monaco-editor .view-lines");
  // Monaco renders the visible lines only, and spaces as no-break spaces.
  return waitFor(what, async () => {
    const t = (await lines.first().innerText()).replace(/\u00a0/g, " ");
    return has(t) ? t : null;
  });
}

const browser = await launchChromium();
mkdirSync(artifacts, { recursive: true });

const trusted = await startCodeServer("trusted", userDir, ["--disable-workspace-trust", workspaceFile]);
let page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
shot = (name) => page.screenshot({ path: join(artifacts, `${name}.png`) });

try {
  await page.goto(`http://127.0.0.1:${trusted.port}/?workspace=${encodeURIComponent(workspaceFile)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: TIMEOUT });
  const { view, rows } = await openGuidance(page);

  await check("each folder shows the agents its repository targets, with their files and statuses", async () => {
    const texts = await waitFor("tree rows", async () => {
      const r = await rows();
      return r.some((t) => t.startsWith("beta")) && r.some((t) => t.includes("truncated")) ? r : null;
    });
    log(`tree: ${JSON.stringify(texts)}`);
    const alpha = texts.indexOf(texts.find((t) => t.startsWith("alpha")));
    const beta = texts.indexOf(texts.find((t) => t.startsWith("beta")));
    const alphaRows = texts.slice(alpha, beta);
    const betaRows = texts.slice(beta);
    const at = (rs, s) => rs.findIndex((t) => t.startsWith(s));
    // alpha holds AGENTS.md (Codex, opencode) and CLAUDE.md (Claude Code): a group per agent,
    // in that order, each with its files.
    if (!alphaRows[0].startsWith("alpha for Codex, Claude Code, opencode")) throw new Error(`alpha: ${JSON.stringify(alphaRows)}`);
    const order = ["Codex 1 file ·", "AGENTS.md loaded", "Claude Code 1 file ·", "CLAUDE.md loaded", "opencode 1 file ·", "Served blocks"].map((s) => at(alphaRows, s));
    if (order.some((i, k) => i < 0 || (k > 0 && i <= order[k - 1]))) throw new Error(`alpha: ${JSON.stringify(alphaRows)}`);
    if (alphaRows.some((t) => t.startsWith("DeepSeek Harness"))) throw new Error("dsh-next is not targeted here");
    // Where agents start, as `check` judges: alpha's own folder; no agent misses a file below it.
    if (!alphaRows.some((t) => t.startsWith("Where agents start this folder"))) throw new Error(`alpha: ${JSON.stringify(alphaRows)}`);
    // beta's instructions-lsp.toml gives Codex a 1200-byte budget: Codex cuts AGENTS.md.
    // Its size in tokens beside bytes: exact for Codex (o200k_base), an estimate for Claude Code.
    if (!betaRows.some((t) => /^Codex 1 file · [\d.]+ KiB · [\d,]+ tokens · cuts AGENTS\.md/.test(t))) throw new Error(`beta: ${JSON.stringify(betaRows)}`);
    if (!alphaRows.some((t) => /^Claude Code 1 file · [\d.]+ (B|KiB) · ~[\d,]+ tokens/.test(t))) throw new Error(`alpha: ${JSON.stringify(alphaRows)}`);
    if (!betaRows.some((t) => /^AGENTS\.md truncated · 1\.2 KiB of 3\.6 KiB/.test(t))) throw new Error(`beta: ${JSON.stringify(betaRows)}`);
    // beta's .github files make it a Copilot folder too: its applyTo rule waits for a matching file.
    if (!betaRows[0].startsWith("beta for Codex, opencode, Copilot (VS Code)")) throw new Error(`beta: ${JSON.stringify(betaRows)}`);
    const waiting = "notes.instructions.md waiting · 69 B · project · loads when a file matching **/*.txt is read";
    if (!betaRows.some((t) => t.startsWith(".github/instructions/" + waiting))) throw new Error(`beta: ${JSON.stringify(betaRows)}`);
  });
  // Away from the activity bar, whose tooltip would cover the tree.
  await page.mouse.move(800, 500);
  await page.waitForTimeout(1500);
  await shot("sidebar");

  await check("the two folders show different chains", async () => {
    const texts = await rows();
    const beta = texts.findIndex((t) => t.startsWith("beta"));
    const alphaFiles = texts.slice(0, beta).filter((t) => /^AGENTS\.md (loaded|truncated)/.test(t));
    const betaFiles = texts.slice(beta).filter((t) => /^AGENTS\.md (loaded|truncated)/.test(t));
    if (!(alphaFiles[0]?.includes("loaded") && betaFiles[0]?.includes("truncated"))) throw new Error(JSON.stringify({ alphaFiles, betaFiles }));
  });

  await check("clicking a file opens it, and a hover shows what each agent does with it", async () => {
    const index = (await rows()).findIndex((t) => t.startsWith("AGENTS.md loaded"));
    await view.locator(".monaco-list-row").nth(index).click();
    await page.locator('.tab.active:has-text("AGENTS.md")').waitFor({ timeout: TIMEOUT });
    const firstLine = page.locator(".part.editor .monaco-editor .view-lines .view-line >> visible=true").first();
    await firstLine.waitFor({ timeout: TIMEOUT });
    const hover = await waitFor("a hover with the chain position", async () => {
      const box = await firstLine.boundingBox();
      if (!box) return null;
      await page.mouse.move(box.x + 5, box.y + box.height / 2);
      await page.mouse.move(box.x + 20, box.y + box.height / 2);
      const h = page.locator(".monaco-hover:visible");
      if ((await h.count()) === 0) return null;
      const text = await h.first().innerText();
      // The agents the repository targets, side by side (alpha holds AGENTS.md and CLAUDE.md), in
      // the words of their findings.
      return text.includes("Codex loads this file") && text.includes("Claude Code ignores this file: it loads CLAUDE.md instead")
        ? text
        : null;
    });
    log(`hover: ${hover.replace(/\s+/g, " ").slice(0, 160)}`);
    await shot("hover");
  });

  await check("the served blocks (the engine's session) are one click away", async () => {
    const index = (await rows()).findIndex((t) => t.startsWith("Served blocks"));
    await view.locator(".monaco-list-row").nth(index).click();
    const texts = await waitFor("the served groups", async () => {
      const r = await rows();
      return r.some((t) => t.startsWith("Baseline")) ? r : null;
    });
    const at = (s) => texts.findIndex((t) => t.startsWith(s));
    if (!(at("Served blocks") < at("Baseline") && at("Baseline") < at("Not loaded"))) throw new Error(JSON.stringify(texts));
    if (!texts.some((t) => t.startsWith("CLAUDE.md shadowed by AGENTS.md"))) throw new Error(`the dsh rules shadow CLAUDE.md: ${JSON.stringify(texts)}`);
    await shot("served");
  });

  await check("the status bar shows what reaches each agent of the active file's folder", async () => {
    const item = page.locator(".statusbar-item:has-text('Claude Code')");
    const text = await waitFor("a status bar item", async () => ((await item.count()) ? (await item.first().innerText()).trim() : null));
    if (!/^Codex [\d.]+ (B|KiB) · Claude Code [\d.]+ (B|KiB) · opencode [\d.]+ (B|KiB)$/.test(text)) throw new Error(`status bar: "${text}"`);
    await item.first().click();
  });

  await check("a CLAUDE.md beside AGENTS.md has the targeted agents' diagnostic in the Problems panel", async () => {
    await page.keyboard.press("Control+Shift+M");
    const panel = page.locator(".markers-panel");
    await waitFor("opencode's problem", async () => (await panel.innerText()).includes("opencode ignores this file: it loads AGENTS.md instead"));
    await shot("problems");
  });

  await check("writing an instruction file on disk refreshes the tree", async () => {
    const text = "# Alpha\n\nRewritten on disk by another process.\n";
    writeFileSync(join(ws, "alpha/AGENTS.md"), text);
    const size = `AGENTS.md loaded · ${Buffer.byteLength(text)} B`;
    await waitFor(`"${size}" in the tree`, async () => (await rows()).some((t) => t.startsWith(size)));
    await shot("after-write");
  });

  await check("an agent whose view changed since HEAD is marked, and Show Changes Since HEAD opens the CLI's summary", async () => {
    // alpha/AGENTS.md differs from HEAD now: Codex and opencode read it, Claude Code reads CLAUDE.md.
    const mark = "changed since HEAD";
    const texts = await waitFor("the marks", async () => {
      const r = await rows();
      return r.some((t) => /^Codex 1 file · .* · changed since HEAD$/.test(t)) ? r : null;
    });
    log(`marked tree: ${JSON.stringify(texts)}`);
    const beta = texts.findIndex((t) => t.startsWith("beta"));
    const alphaRows = texts.slice(0, beta);
    const row = (s) => alphaRows.find((t) => t.startsWith(s)) ?? "";
    if (!row("alpha for Codex, Claude Code, opencode").endsWith(mark)) throw new Error(`alpha's row: ${JSON.stringify(alphaRows)}`);
    if (!row("opencode 1 file").endsWith(mark)) throw new Error(`opencode: ${JSON.stringify(alphaRows)}`);
    if (row("Claude Code 1 file").includes(mark)) throw new Error(`Claude Code does not read AGENTS.md: ${JSON.stringify(alphaRows)}`);
    // beta is in no git repository: nothing to compare with, no marks.
    if (texts.slice(beta).some((t) => t.includes(mark))) throw new Error(`beta: ${JSON.stringify(texts.slice(beta))}`);
    await shot("changed-since-head");
    const text = await commandDocument(page, "Show Changes Since HEAD", "Changes Since HEAD (alpha)", "the summary", (t) =>
      t.includes("what this change does to each agent"),
    );
    log(`summary: ${text.replace(/\s+/g, " ").slice(0, 240)}`);
    // The CLI's Markdown (`diff HEAD --format markdown`): each changed agent's line, and only theirs.
    const said = (agent) => text.includes(`**${agent}**`) && text.split("\n").some((l) => l.startsWith(`- **${agent}**`) && l.includes("`AGENTS.md` shrinks"));
    if (!said("Codex") || !said("opencode") || text.includes("**Claude Code**")) throw new Error(`the summary: ${text}`);
    await shot("changes-since-head");
  });

  await check("the agent tool is registered, returns a file's nested block, and the sidebar shows the touch", async () => {
    // Nothing below alpha's root was touched yet.
    const reachedNone = async () => {
      const r = await rows();
      return r.some((t) => t.startsWith("No nested file reached yet")) ? r : null;
    };
    if (!(await reachedNone())) {
      const index = (await rows()).findIndex((t) => t.startsWith("Served blocks"));
      await view.locator(".monaco-list-row").nth(index).click();
      await waitFor("the served blocks, with nothing reached", reachedNone);
    }
    // Through VS Code's own tool API (vscode.lm.tools, then vscode.lm.invokeTool), as agent mode calls it.
    await page.keyboard.press("F1");
    await page.keyboard.type("Agent Instructions: Ask the Agent Tool");
    await page.keyboard.press("Enter");
    // The command's own input box, not the palette's that it replaces: typing before it opens
    // lands in the palette, and the box then opens with its default value.
    const box = page.locator('.quick-input-widget:has-text("A path, absolute or relative to the workspace folder")');
    await box.waitFor({ timeout: TIMEOUT });
    const input = box.locator("input");
    await input.fill("alpha/src/main.rs");
    await waitFor("the typed path in the input box", async () => (await input.inputValue()) === "alpha/src/main.rs");
    await page.keyboard.press("Enter");
    await page.locator('.tab.active:has-text("Agent Tool Result")').waitFor({ timeout: TIMEOUT });
    const lines = page.locator(".part.editor .monaco-editor .view-lines");
    // Monaco renders the visible lines only: the head first, then the end of the answer.
    // Monaco renders spaces as no-break spaces.
    const shown = async () => (await lines.first().innerText()).replace(/\u00a0/g, " ");
    const text = await waitFor("the tool's answer", async () => {
      const t = await shown();
      return t.includes("Project instructions that apply to alpha/src/main.rs") ? t : null;
    });
    log(`tool: ${text.replace(/\s+/g, " ").slice(0, 200)}`);
    if (!text.includes("Rewritten on disk by another process.")) throw new Error(`the root's block comes first: ${text}`);
    await page.locator(".part.editor .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+End");
    await waitFor("the nested block at the end of the answer", async () => (await shown()).includes("Every module has a unit test."));
    // The call was a touch of alpha's session: src/AGENTS.md is reached now.
    await waitFor("src/AGENTS.md in Reached", async () => {
      const r = await rows();
      const at = r.findIndex((t) => t.startsWith("Reached 1"));
      return at >= 0 && r[at + 1]?.startsWith("src/AGENTS.md loaded") ? r : null;
    });
    await shot("tool");
  });

  await check("Show Changes Since HEAD in a folder outside git says so", async () => {
    // beta's AGENTS.md active: the command is about beta, which no git repository holds.
    const index = (await rows()).findIndex((t) => t.startsWith("AGENTS.md truncated"));
    await view.locator(".monaco-list-row").nth(index).click();
    await page.locator('.tab.active:has-text("AGENTS.md")').waitFor({ timeout: TIMEOUT });
    await page.keyboard.press("F1");
    await page.keyboard.type("Agent Instructions: Show Changes Since HEAD");
    await page.keyboard.press("Enter");
    const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "beta is not in a git repository" });
    await toast.first().waitFor({ timeout: TIMEOUT });
    if ((await page.locator('.tab:has-text("Changes Since HEAD (beta)")').count()) > 0) throw new Error("a summary opened for beta");
    await shot("not-a-repository");
  });

  await check("a quick fix joins a list applyTo, and an import is followed to the file it names", async () => {
    // A rule whose applyTo is a YAML list, which VS Code discards (beta targets Copilot).
    writeFileSync(join(ws, "beta/.github/instructions/list.instructions.md"), '---\napplyTo:\n  - "**/*.txt"\n---\nLists.\n');
    await page.keyboard.press("F1");
    await page.keyboard.press("Backspace");
    await page.keyboard.type("list.instructions.md");
    await page.locator('.quick-input-widget .monaco-list-row:has-text("list.instructions.md")').first().waitFor({ timeout: TIMEOUT });
    await page.keyboard.press("Enter");
    await page.locator('.tab.active:has-text("list.instructions.md")').waitFor({ timeout: TIMEOUT });
    const lines = page.locator(".part.editor .monaco-editor .view-lines >> visible=true").first();
    const shown = async () => (await lines.innerText()).replace(/\u00a0/g, " ");
    await page.locator(".part.editor .monaco-editor .squiggly-warning >> visible=true").first().waitFor({ timeout: TIMEOUT });
    await lines.click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("ArrowDown");
    // The quick fixes at the cursor, from the command palette (as Ctrl+. opens them).
    await page.keyboard.press("F1");
    await page.keyboard.type("Quick Fix...");
    await page.locator('.quick-input-widget .monaco-list-row:has-text("Quick Fix")').first().waitFor({ timeout: TIMEOUT });
    await page.keyboard.press("Enter");
    const fix = page.locator(".action-widget >> text=Join the");
    await fix.first().waitFor({ timeout: TIMEOUT });
    await shot("quick-fix");
    await fix.first().click();
    await waitFor("the applyTo joined into one string", async () => (await shown()).includes('applyTo: "**/*.txt"'));
    await page.keyboard.press("Control+S");

    // An import typed into alpha's CLAUDE.md (not saved) is a link: go to definition opens it.
    const index = (await rows()).findIndex((t) => t.startsWith("CLAUDE.md"));
    await view.locator(".monaco-list-row").nth(index).click();
    await page.locator('.tab.active:has-text("CLAUDE.md")').waitFor({ timeout: TIMEOUT });
    await lines.click();
    await page.keyboard.press("Control+End");
    await page.keyboard.press("Enter");
    await page.keyboard.type("See @src/AGENTS.md");
    await page.keyboard.press("ArrowLeft");
    await waitFor("the import followed", async () => {
      await page.keyboard.press("F12");
      await page.waitForTimeout(300);
      return (await shown()).includes("Every module has a unit test.");
    });
    await shot("import-followed");
  });

  await check("a source file's lenses say what each agent gets when it reads it, and open that view", async () => {
    await page.keyboard.press("F1");
    await page.keyboard.press("Backspace");
    await page.keyboard.type("main.rs");
    await page.locator('.quick-input-widget .monaco-list-row:has-text("main.rs")').first().waitFor({ timeout: TIMEOUT });
    await page.keyboard.press("Enter");
    await page.locator('.tab.active:has-text("main.rs")').waitFor({ timeout: TIMEOUT });
    const lens = page.locator(".part.editor .codelens-decoration a >> visible=true");
    const titles = await waitFor("the agents' lenses", async () => {
      const all = (await lens.allInnerTexts()).map((t) => t.replace(/\u00a0/g, " "));
      return all.some((t) => t.startsWith("Claude Code: ")) ? all : null;
    });
    log(`lenses: ${JSON.stringify(titles)}`);
    // (Earlier checks read main.rs and import src/AGENTS.md from CLAUDE.md: nothing new for this read.)
    if (!titles.some((t) => /^Codex: AGENTS\.md · [\d,]+ tokens$/.test(t))) throw new Error(JSON.stringify(titles));
    if (!titles.some((t) => /^Claude Code: CLAUDE\.md(, [^·]+)? · ~[\d,]+ tokens \(estimate\)$/.test(t))) throw new Error(JSON.stringify(titles));
    if (!titles.some((t) => /^opencode: AGENTS\.md, (\+ )?src\/AGENTS\.md · ~[\d,]+ tokens/.test(t))) throw new Error(JSON.stringify(titles));
    await shot("source-lens");
    await lens.filter({ hasText: "Claude Code:" }).first().click();
    await page.locator('.tab.active:has-text("Claude Code reading src\u2215main.rs")').waitFor({ timeout: TIMEOUT });
    await shot("agent-view");
    const text = (await page.locator(".part.editor .monaco-editor .view-lines >> visible=true").first().innerText()).replace(/\u00a0/g, " ");
    if (!text.includes("Contents of") || !text.includes("CLAUDE.md")) throw new Error(text.slice(0, 400));
  });
} finally {
  await page.close();
  await stopCodeServer(trusted);
  if (failures > 0) console.log(trusted.log.slice(-4000));
}

// 4. An untrusted workspace whose .vscode/settings.json points the global instruction file at a
// file of the user outside it: restricted mode must keep that file's text out of the extension.
// Workspace trust is on for this launch (user setting, no --disable-workspace-trust).
const secretText = "SECRET-MARKER-7f3a: the user's private notes";
const outside = join(tmp, "outside");
mkdirSync(outside, { recursive: true });
const secretFile = join(outside, "private-notes.md");
writeFileSync(secretFile, `${secretText}\n`);
const hostile = join(tmp, "hostile");
mkdirSync(join(hostile, ".git"), { recursive: true });
mkdirSync(join(hostile, ".vscode"), { recursive: true });
writeFileSync(join(hostile, "AGENTS.md"), "# Hostile\n\nA workspace from somewhere else.\n");
writeFileSync(join(hostile, ".vscode/settings.json"), JSON.stringify({ "instructions.globalInstructionFile": secretFile }));
const userDir2 = join(tmp, "user-trust");
userSettings(userDir2, {
  "security.workspace.trust.enabled": true,
  // No modal at startup: the folder opens in restricted mode, as it does when a user
  // dismisses the prompt.
  "security.workspace.trust.startupPrompt": "never",
  // The engine's rules first: the global file this workspace points at is theirs.
  "instructions.profile": "dsh",
});
const untrusted = await startCodeServer("untrusted", userDir2, [hostile]);
page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
try {
  await page.goto(`http://127.0.0.1:${untrusted.port}/?folder=${encodeURIComponent(hostile)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: TIMEOUT });
  const { rows } = await openGuidance(page);

  await check("an untrusted workspace cannot make a file outside it appear", async () => {
    // The scenario holds only when VS Code really runs the folder in restricted mode.
    await page.locator('.statusbar-item:has-text("Restricted Mode")').first().waitFor({ timeout: TIMEOUT });
    // The extension works there: the workspace's own file is listed...
    const texts = await waitFor("the hostile folder's AGENTS.md", async () => {
      const r = await rows();
      return r.some((t) => t.startsWith("AGENTS.md loaded")) ? r : null;
    });
    log(`untrusted tree: ${JSON.stringify(texts)}`);
    // ...but not the file its settings point at, in the tree or in the effective context.
    if (texts.some((t) => t.includes("private-notes"))) throw new Error(`the outside file is listed: ${JSON.stringify(texts)}`);
    const text = await commandDocument(page, "Show Effective Context", "Effective Context", "the effective context", (t) => t.includes("Hostile"));
    if (text.includes("SECRET-MARKER")) throw new Error("the outside file's text is in the effective context");
    await page.screenshot({ path: join(artifacts, "untrusted.png") });
  });

  await check("trusting the workspace applies its setting (the check above is not vacuous)", async () => {
    await page.locator('.statusbar-item:has-text("Restricted Mode")').first().click();
    // "Trust", not "Don't Trust".
    const trustButton = page.locator(".workspace-trust-editor .monaco-button").filter({ hasText: /^Trust/ }).first();
    await trustButton.waitFor({ timeout: TIMEOUT });
    await trustButton.click();
    await page.locator('.statusbar-item:has-text("Restricted Mode")').first().waitFor({ state: "detached", timeout: TIMEOUT });
    // The view is still open (the trust editor took the editor area, not the sidebar).
    const texts = await waitFor("the outside file once trusted", async () => {
      const r = await rows();
      return r.some((t) => t.includes("private-notes")) ? r : null;
    });
    log(`trusted tree: ${JSON.stringify(texts)}`);
  });
} finally {
  await page.close();
  await browser.close();
  await stopCodeServer(untrusted);
  if (failures > 0) console.log(untrusted.log.slice(-4000));
  try {
    rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch (err) {
    log(`left ${tmp} behind: ${err.message}`);
  }
}
console.log(`e2e: ${passes} passed, ${failures} failed`);
process.exit(failures > 0 ? 1 : 0);
