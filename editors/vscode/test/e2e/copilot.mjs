// What the real VS Code attaches to a chat request on its own, compared with the `copilot` profile.
//
// For each case of editors/vscode/test/copilot/cases.json (a small tree, a git repository opened as
// the one workspace folder) a chat request goes to the participant of a test extension
// (editors/vscode/test/copilot-probe), which records request.references: the instruction files
// VS Code attached, in order, and its customizations index (the <instructions> list). The same
// tree goes through `instructions-lsp effective --profile copilot --json --touch <attached>… <root>`:
// its `loaded` files, in order, are what it says is attached, and its <instructions> part is its
// index. A case whose two lists differ is printed side by side and fails the run.
//
// Every recording goes to .artifacts/copilot/recorded.json (ignored by git), written after each case.
//
//   node editors/vscode/test/e2e/copilot.mjs [--case NAME]…
import { execFileSync } from "child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync, renameSync } from "fs";
import { tmpdir } from "os";
import { basename, dirname, join, relative, sep } from "path";
import { fileURLToPath } from "url";
import { TIMEOUT, installCodeServer, launchChromium, root, startCodeServer, stopCodeServer, userSettings, waitFor } from "./code-server.mjs";

const casesFile = join(root, "editors/vscode/test/copilot/cases.json");
const probeDir = join(root, "editors/vscode/test/copilot-probe");
const artifacts = join(root, ".artifacts/copilot");
const recordedFile = join(artifacts, "recorded.json");
const server = join(root, "target/release/instructions-lsp");
// The probe's model vendor (its package.json declares it).
const VENDOR = "instructions-probe";
const REQUEST_TIMEOUT = 60_000;

function log(msg) {
  console.log(`[copilot] ${msg}`);
}

const only = process.argv.flatMap((a, i, all) => (all[i - 1] === "--case" ? [a] : []));
const { cases: allCases } = JSON.parse(readFileSync(casesFile, "utf8"));
const cases = only.length ? allCases.filter((c) => only.includes(c.name)) : allCases;
if (only.length && cases.length !== only.length) throw new Error(`no case named ${only.filter((n) => !allCases.some((c) => c.name === n))}`);

// 1. The real VS Code, the release server, the probe packaged as a .vsix.
const codeServer = installCodeServer();
const version = execFileSync(codeServer, ["--version"]).toString().trim().split("\n")[0];
if (!existsSync(server)) execFileSync("cargo", ["build", "--release", "--locked"], { cwd: root, stdio: "inherit" });
const tmp = mkdtempSync(join(tmpdir(), "instructions-copilot-"));
const [user, ext, home, out, trees] = ["user", "ext", "home", "out", "trees"].map((d) => join(tmp, d));
for (const d of [user, ext, home, out, trees]) mkdirSync(d, { recursive: true });
const probeVsix = join(tmp, "copilot-probe.vsix");
execFileSync(join(root, "node_modules/.bin/vsce"), ["package", "--no-dependencies", "--skip-license", "--allow-missing-repository", "--out", probeVsix], {
  cwd: probeDir,
  stdio: ["ignore", "ignore", "inherit"],
});

// 2. A fresh profile and an empty home (no user prompts folder, no ~/.claude, no ~/.copilot), the
// probe installed, and the chat switched on (code-server does not load Copilot).
userSettings(user, { "chat.disableAIFeatures": false, "security.workspace.trust.enabled": false });
const env = { ...process.env, HOME: home, COPILOT_PROBE_OUT: out };
execFileSync(codeServer, ["--user-data-dir", user, "--extensions-dir", ext, "--install-extension", probeVsix], { env, stdio: ["ignore", "ignore", "inherit"] });
if (!readdirSync(ext).some((d) => d.startsWith("instructions-lsp-test.copilot-probe"))) throw new Error(`the probe did not install: ${readdirSync(ext)}`);

/** Writes a case's tree as a git repository; returns its root. */
function buildTree(c) {
  const dir = join(trees, c.name);
  mkdirSync(dir, { recursive: true });
  execFileSync("git", ["init", "-q", dir]);
  for (const [path, text] of Object.entries(c.files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  for (const [path, target] of Object.entries(c.links ?? {})) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    symlinkSync(target, join(dir, path));
  }
  if (c.settings) {
    mkdirSync(join(dir, ".vscode"), { recursive: true });
    writeFileSync(join(dir, ".vscode/settings.json"), JSON.stringify(c.settings, null, 2));
  }
  return dir;
}

/**
 * The entries of an <instructions> list, each "path", then " applyTo=…" and " description=…" when
 * given. The AGENTS.md files that close the list (with chat.useNestedAgentsMdFiles) come from
 * VS Code's file search, in ripgrep's order, which changes from run to run; they are sorted by
 * path. Everything before them is in a defined order (the instructions folders read in name order)
 * and stays as it is.
 */
function indexEntries(text, dir) {
  const list = text.match(/<instructions>[\s\S]*?<\/instructions>/)?.[0];
  if (!list) return [];
  const entries = [...list.matchAll(/<instruction>\n([\s\S]*?)<\/instruction>/g)].map(([, body]) => {
    const field = (name) => body.match(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`))?.[1];
    const file = field("file");
    const path = file === undefined ? "(no <file>)" : file.startsWith(dir + sep) ? relative(dir, file) : file;
    const applyTo = field("applyTo");
    const description = field("description");
    const agentsMd = file !== undefined && basename(file).toLowerCase() === "agents.md" && applyTo === undefined;
    return { agentsMd, text: `${path}${applyTo !== undefined ? ` applyTo=${applyTo}` : ""}${description !== undefined ? ` description=${description}` : ""}` };
  });
  let tail = entries.length;
  while (tail > 0 && entries[tail - 1].agentsMd) tail -= 1;
  return [...entries.slice(0, tail).map((e) => e.text), ...entries.slice(tail).map((e) => e.text).sort()];
}

const pathOf = (dir, uri) => relative(dir, fileURLToPath(uri));
const withoutRoot = (text, dir) => text.split(dir + sep).join("<root>/");

/** VS Code's answer: the instruction files it attached, in order, and its index. */
function fromVsCode(response, dir) {
  const attached = [];
  const userAttached = [];
  let index;
  for (const ref of response.references) {
    const kind = ref.id.match(/^vscode\.instructions\.file\.(root|reference)__/)?.[1];
    if (kind) attached.push(`${pathOf(dir, ref.uri)}${kind === "reference" ? " (referenced)" : ""}`);
    else if (ref.id === "vscode.customizations.index") index = ref.text;
    else if (ref.uri) userAttached.push(pathOf(dir, ref.uri));
  }
  return {
    attached,
    index: index === undefined ? null : indexEntries(index, dir),
    indexText: index === undefined ? null : withoutRoot(index, dir),
    userAttached,
    references: response.references.map((r) => ({
      id: r.id.replace(/__vscode-remote:\/\/[^/]*/, "__").replace(dir + "/", "<root>/"),
      ...(r.uri ? { path: pathOf(dir, r.uri) } : {}),
    })),
  };
}

/** The profile's answer for the same tree and attachments. */
function fromProfile(c, dir) {
  const args = ["effective", "--profile", "copilot", "--json", ...c.attach.flatMap((f) => ["--touch", join(dir, f)]), dir];
  const answer = JSON.parse(execFileSync(server, args, { env: { ...process.env, HOME: home }, maxBuffer: 64 << 20 }).toString());
  const indexPart = answer.parts.find((p) => (typeof p === "string" ? p : p.text ?? "").startsWith("<instructions>"));
  const indexText = indexPart === undefined ? null : typeof indexPart === "string" ? indexPart : indexPart.text;
  return {
    // A file an attached one links to is in the profile's view as an import (scope "import").
    attached: answer.files
      .filter((f) => f.status === "loaded")
      .map((f) => (f.scope === "import" ? `${f.path} (referenced)` : f.path)),
    index: indexText === null ? null : indexEntries(indexText, dir),
    indexText: indexText === null ? null : withoutRoot(indexText, dir),
    statuses: answer.files.map((f) => ({ path: f.path, status: f.status, ...(f.globs ? { globs: f.globs } : {}) })),
    command: `instructions-lsp ${args.map((a) => (a.startsWith(dir) ? a.replace(dir, "<root>") : a)).join(" ")}`,
  };
}

const show = (list) => (list === null ? "(no index)" : list.length ? list.join(", ") : "(none)");
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// A run of some cases (--case) keeps the other cases' recordings of the same VS Code.
mkdirSync(artifacts, { recursive: true });
let earlier = [];
try {
  const previous = JSON.parse(readFileSync(recordedFile, "utf8"));
  if (only.length && previous.vscode === version) earlier = previous.cases.filter((c) => !only.includes(c.name));
} catch {
  // none yet
}
const recorded = { vscode: version, vendor: VENDOR, recordedAt: new Date().toISOString(), cases: [] };
function saveRecorded() {
  const order = (c) => allCases.findIndex((k) => k.name === c.name);
  const all = { ...recorded, cases: [...earlier, ...recorded.cases].sort((a, b) => order(a) - order(b)) };
  writeFileSync(`${recordedFile}.tmp`, JSON.stringify(all, null, 2));
  renameSync(`${recordedFile}.tmp`, recordedFile);
}

// 3. One code-server, one page; each case opens its folder in that page (a new window and
// extension host), and the probe there sends the request.
const cs = await startCodeServer({ codeServer, tmp, name: "copilot", user, ext, env, args: ["--disable-workspace-trust"] });
const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
let requests = 0;

async function ask(c, dir) {
  const id = `${++requests}`;
  const request = { id, root: dir, query: "@probe which instructions apply?", attachFiles: c.attach.map((f) => join(dir, f)), vendor: VENDOR, mode: "Agent" };
  writeFileSync(join(out, `request-${id}.json.tmp`), JSON.stringify(request));
  renameSync(join(out, `request-${id}.json.tmp`), join(out, `request-${id}.json`));
  const file = join(out, `response-${id}.json`);
  await waitFor(`the probe's answer for ${c.name}`, async () => existsSync(file), REQUEST_TIMEOUT);
  const response = JSON.parse(readFileSync(file, "utf8"));
  if (response.error) throw new Error(`the probe failed: ${response.error}`);
  return response;
}

let differ = 0;
let failed = 0;
try {
  for (const c of cases) {
    const dir = buildTree(c);
    let response;
    for (let attempt = 1; !response; attempt++) {
      try {
        await page.goto(`http://127.0.0.1:${cs.port}/?folder=${encodeURIComponent(dir)}`);
        await page.waitForSelector(".monaco-workbench", { timeout: TIMEOUT });
        response = await ask(c, dir);
      } catch (e) {
        log(`${c.name}: attempt ${attempt}: ${e.message}`);
        if (attempt >= 2) break;
      }
    }
    const entry = { name: c.name, about: c.about, files: c.files, links: c.links, settings: c.settings, attach: c.attach };
    if (!response) {
      failed += 1;
      await page.screenshot({ path: join(artifacts, `failed-${c.name}.png`) }).catch(() => {});
      recorded.cases.push({ ...entry, error: "no answer from the chat" });
      saveRecorded();
      log(`not ok - ${c.name}: no answer from the chat`);
      continue;
    }
    const vscode = fromVsCode(response, dir);
    const profile = fromProfile(c, dir);
    const agree = same(vscode.attached, profile.attached) && same(vscode.index, profile.index);
    recorded.cases.push({ ...entry, millis: response.millis, agree, vscode, profile });
    saveRecorded();
    if (agree) {
      log(`ok - ${c.name} (${response.millis} ms): attached ${show(vscode.attached)}; index ${show(vscode.index)}`);
    } else {
      differ += 1;
      log(`not ok - ${c.name} (${response.millis} ms): the copilot profile differs from VS Code`);
      if (!same(vscode.attached, profile.attached)) {
        log(`    attached  VS Code: ${show(vscode.attached)}`);
        log(`              profile: ${show(profile.attached)}`);
      }
      if (!same(vscode.index, profile.index)) {
        log(`    index     VS Code: ${show(vscode.index)}`);
        log(`              profile: ${show(profile.index)}`);
      }
    }
  }
} finally {
  await page.close().catch(() => {});
  await browser.close().catch(() => {});
  await stopCodeServer(cs);
  if (failed > 0) {
    console.log(cs.log.slice(-3000));
    if (existsSync(join(out, "probe.log"))) console.log(readFileSync(join(out, "probe.log"), "utf8").slice(-3000));
  }
  try {
    rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch (err) {
    log(`left ${tmp} behind: ${err.message}`);
  }
}
const agreeCount = cases.length - differ - failed;
console.log(`copilot: ${agreeCount} agree, ${differ} differ, ${failed} not recorded (of ${cases.length}; ${version}); recordings in ${relative(root, recordedFile)}`);
process.exit(differ + failed > 0 ? 1 : 0);
