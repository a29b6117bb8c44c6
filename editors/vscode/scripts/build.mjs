// Bundles the extension (vscode-languageclient included, `vscode` external) with esbuild;
// with --tests, also bundles the unit tests for `node --test`.
import { build } from "esbuild";
import { readdirSync } from "fs";
import { dirname, join } from "path";
import { fileURLToPath } from "url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const common = { bundle: true, platform: "node", format: "cjs", target: "node18", sourcemap: false, logLevel: "warning" };

await build({ ...common, entryPoints: [join(root, "src/extension.ts")], outfile: join(root, "out/extension.js"), external: ["vscode"], minify: true });

if (process.argv.includes("--tests")) {
  const dir = join(root, "test/unit");
  const tests = readdirSync(dir).filter((f) => f.endsWith(".test.ts"));
  await build({ ...common, entryPoints: tests.map((t) => join(dir, t)), outdir: join(root, "out/test") });
}
