// Asks the real agent libraries what they load, for tests/it/agents.rs.
//   node tests/support/agents.mjs MODULES < cases.json > results.json
// A case is { kind: "gemini" | "dsh-next", cwd, home, names?, touches?, maxBytes?, dshHome? }.
// names: Gemini's context.fileName (absent: not configured).
// gemini: { text } as Gemini CLI core composes it: global, project, then each touch's JIT files.
// dsh-next: { text } of loadBaselineInstructions, "" when it returns nothing.
import { readFileSync } from "fs";
import { join } from "path";
import { pathToFileURL } from "url";

const modules = process.argv[2];
const load = (rel) => import(pathToFileURL(join(modules, rel)).href);
console.debug = () => {};
console.info = () => {};
console.warn = () => {};
console.error = () => {};
console.log = () => {};

const discovery = await load("@google/gemini-cli-core/dist/src/utils/memoryDiscovery.js");
const tool = await load("@google/gemini-cli-core/dist/src/tools/memoryTool.js");
const dsh = await load("@deepseek-ai/dsh-agent-instructions/lib/index.js");

async function gemini(c) {
  // As Config's constructor does with context.fileName, from the default GEMINI.md: the
  // names accumulate, so each case starts over.
  tool.resetGeminiMdFilename();
  if (c.names) tool.setGeminiMdFilename(c.names);
  process.env.HOME = c.home;
  const global = await discovery.getGlobalMemoryPaths();
  const project = await discovery.getEnvironmentMemoryPaths([c.cwd]);
  const texts = [];
  for (const paths of [global, project]) {
    texts.push(discovery.concatenateInstructions(await discovery.readGeminiMdFiles(paths)));
  }
  const loaded = new Set([...global, ...project]);
  for (const touch of c.touches ?? []) {
    const r = await discovery.loadJitSubdirectoryMemory(touch, [c.cwd], loaded);
    r.files.forEach((f) => loaded.add(f.path));
    texts.push(discovery.concatenateInstructions(r.files.map((f) => ({ filePath: f.path, content: f.content }))));
  }
  return { text: texts.filter((t) => t.length > 0).join("\n\n") };
}

async function dshNext(c) {
  process.env.HOME = c.home; // the display of the global file compares with ~/.dsh
  const r = await dsh.loadBaselineInstructions({ cwd: c.cwd, maxBytes: c.maxBytes, dshHome: c.dshHome });
  return { text: r ? r.text : "" };
}

const cases = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const c of cases) out.push(c.kind === "gemini" ? await gemini(c) : await dshNext(c));
process.stdout.write(JSON.stringify(out));
