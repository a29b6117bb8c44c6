// Times the npm peers on one chain, as instructions-lsp's benchmark does:
//   node benches/peers.mjs --cwd DIR --home DIR [--iterations N] [--modules DIR]
// cold: the first call in a fresh Node process (import excluded); warm: the median of later calls.
// Prints JSON: { "<peer>": { "cold_us": n, "warm_us": n, "files": n } }.
import { spawnSync } from "child_process";
import { join, resolve } from "path";
import { pathToFileURL } from "url";

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const cwd = arg("--cwd");
const home = arg("--home");
const modules = resolve(arg("--modules", ".cache/peers/node_modules"));
const load = (rel) => import(pathToFileURL(join(modules, rel)).href);
const iterations = Number(arg("--iterations", "200"));
const one = arg("--one"); // internal: one cold sample of one peer

// The peers log to the console; a benchmark prints only its numbers.
console.debug = () => {};
console.info = () => {};
console.warn = () => {};

const peers = {
  "dsh-agent-instructions": async () => {
    const m = await load("@deepseek-ai/dsh-agent-instructions/lib/index.js");
    return async () => {
      const r = await m.loadBaselineInstructions({ cwd, maxBytes: 65536, dshHome: join(home, ".dsh") });
      return r ? r.text.length : 0;
    };
  },
  "gemini-cli-core": async () => {
    const discovery = await load("@google/gemini-cli-core/dist/src/utils/memoryDiscovery.js");
    const tool = await load("@google/gemini-cli-core/dist/src/tools/memoryTool.js");
    tool.setGeminiMdFilename(["GEMINI.md"]);
    return async () => {
      const paths = await discovery.getEnvironmentMemoryPaths([cwd]);
      const contents = await discovery.readGeminiMdFiles(paths);
      return discovery.concatenateInstructions(contents).length;
    };
  },
};

if (one) {
  const run = await peers[one]();
  const start = process.hrtime.bigint();
  const bytes = await run();
  const us = Number(process.hrtime.bigint() - start) / 1000;
  process.stdout.write(JSON.stringify({ us, bytes }));
  process.exit(0);
}

const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const out = {};
for (const [name, start] of Object.entries(peers)) {
  const colds = [];
  for (let i = 0; i < 5; i++) {
    const r = spawnSync(process.execPath, [process.argv[1], "--one", name, "--cwd", cwd, "--home", home, "--modules", modules], {
      env: { ...process.env, HOME: home },
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`${name}: ${r.stderr}`);
    colds.push(JSON.parse(r.stdout).us);
  }
  const run = await start();
  let bytes = await run();
  const warms = [];
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    bytes = await run();
    warms.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  out[name] = { cold_us: median(colds), warm_us: median(warms), bytes };
}
process.stdout.write(JSON.stringify(out, null, 2) + "\n");
