// A test-only extension for editors/vscode/test/e2e/copilot.mjs: it asks VS Code's chat what it
// attaches on its own (instruction files, the customizations index) and writes the answer down.
//
// The harness writes <out>/request-<n>.json ({ id, root, query, attachFiles, vendor, mode }) into the
// directory named by $COPILOT_PROBE_OUT; the probe, in the window whose folder is `root`, opens a
// new chat and sends `query` to its participant @probe with the files attached and its own model
// selected, and writes <out>/response-<id>.json with request.references as the participant got
// them. The model is never asked anything: the chat only needs one to send. The read tool stands in
// for Copilot Chat's (reference name `readFile`): VS Code writes its list of instruction files
// only when a tool to read them is enabled, and Copilot's always is; it is never called.
const vscode = require("vscode");
const fs = require("fs");
const path = require("path");

const VENDOR = "instructions-probe";
const TOOL = "probe_readFile";
const out = process.env.COPILOT_PROBE_OUT;

/** The request the participant waits for, resolved by its handler. */
let waiting;

function log(line) {
  if (out) fs.appendFileSync(path.join(out, "probe.log"), `${new Date().toISOString()} ${line}\n`);
}

function reference(ref) {
  const value = ref.value;
  const entry = { id: ref.id, name: ref.name };
  if (value instanceof vscode.Uri) entry.uri = value.toString();
  else if (typeof value === "string") entry.text = value;
  else if (value && value.uri instanceof vscode.Uri) entry.uri = value.uri.toString();
  if (ref.modelDescription) entry.modelDescription = ref.modelDescription;
  return entry;
}

async function handler(request, _context, stream) {
  const refs = request.references.map(reference);
  log(`participant got ${refs.length} references`);
  if (waiting) waiting.resolve({ prompt: request.prompt, model: request.model?.id, references: refs });
  stream.markdown(`recorded ${refs.length} references`);
  return {};
}

function withTimeout(promise, ms, what) {
  return Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))]);
}

async function send(req) {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (folder !== req.root) return false;
  const started = Date.now();
  const answer = new Promise((resolve) => (waiting = { resolve }));
  // The model and the tool may reach the chat after activation; it needs both before it sends.
  for (let i = 0; ; i++) {
    const models = await vscode.lm.selectChatModels({ vendor: req.vendor ?? VENDOR });
    if (models.length && vscode.lm.tools.some((t) => t.name === TOOL)) break;
    if (i > 100) throw new Error("the probe's model or tool never registered");
    await new Promise((r) => setTimeout(r, 100));
  }
  await vscode.commands.executeCommand("workbench.action.chat.newChat");
  await vscode.commands.executeCommand("workbench.action.chat.open", {
    query: req.query,
    isPartialQuery: false,
    attachFiles: req.attachFiles.map((f) => vscode.Uri.file(f)),
    modelSelector: { vendor: req.vendor ?? VENDOR },
    ...(req.mode ? { mode: req.mode } : {}),
  });
  const got = await withTimeout(answer, 30_000, "the participant's request");
  waiting = undefined;
  return { ...got, millis: Date.now() - started };
}

function activate(context) {
  context.subscriptions.push(vscode.chat.createChatParticipant("probe", handler));
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider(VENDOR, {
      provideLanguageModelChatInformation: () => [
        {
          id: "probe-model",
          name: "Probe model",
          family: "probe",
          version: "1",
          maxInputTokens: 128000,
          maxOutputTokens: 4096,
          isUserSelectable: true,
          capabilities: { toolCalling: true, imageInput: false },
        },
      ],
      provideLanguageModelChatResponse: async (_model, _messages, _options, progress) => {
        progress.report(new vscode.LanguageModelTextPart("The probe's model answers nothing."));
      },
      provideTokenCount: async (_model, text) => (typeof text === "string" ? Math.ceil(text.length / 4) : 1),
    }),
  );
  context.subscriptions.push(
    vscode.lm.registerTool(TOOL, {
      invoke: async () => new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart("The probe reads nothing.")]),
    }),
  );
  if (!out) return;
  log(`activated in ${vscode.workspace.workspaceFolders?.[0]?.uri.fsPath}`);
  const done = new Set();
  let busy = false;
  const poll = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      for (const name of fs.readdirSync(out).filter((n) => /^request-.*\.json$/.test(n)).sort()) {
        if (done.has(name)) continue;
        const req = JSON.parse(fs.readFileSync(path.join(out, name), "utf8"));
        const target = path.join(out, `response-${req.id}.json`);
        if (fs.existsSync(target)) {
          done.add(name);
          continue;
        }
        let result;
        try {
          result = await send(req);
          if (result === false) continue;
        } catch (e) {
          result = { error: String(e && e.stack ? e.stack : e) };
        }
        done.add(name);
        fs.writeFileSync(`${target}.tmp`, JSON.stringify({ id: req.id, ...result }, null, 2));
        fs.renameSync(`${target}.tmp`, target);
        log(`answered ${req.id}`);
      }
    } catch (e) {
      log(`poll: ${e}`);
    } finally {
      busy = false;
    }
  }, 200);
  context.subscriptions.push({ dispose: () => clearInterval(poll) });
}

module.exports = { activate, deactivate() {} };
