// Builds the release server, stages it in server/, bundles the extension and writes
// vsix/instructions-lsp-<target>.vsix with `vsce package --target`.
import { execFileSync } from "child_process";
import { chmodSync, copyFileSync, mkdirSync } from "fs";
import { dirname, join } from "path";
import { fileURLToPath } from "url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: "inherit" });
const targets = { "linux-x64": "linux-x64", "linux-arm64": "linux-arm64", "darwin-x64": "darwin-x64", "darwin-arm64": "darwin-arm64", "win32-x64": "win32-x64" };
const target = process.env.VSIX_TARGET ?? targets[`${process.platform}-${process.arch}`];
if (!target) throw new Error(`no VS Code target for ${process.platform}-${process.arch}; set VSIX_TARGET`);

run("cargo", ["build", "--release", "--locked"]);
const exe = process.platform === "win32" ? "instructions-lsp.exe" : "instructions-lsp";
mkdirSync(join(root, "server"), { recursive: true });
copyFileSync(join(root, "target/release", exe), join(root, "server", exe));
chmodSync(join(root, "server", exe), 0o755);
run("node", ["editors/vscode/scripts/build.mjs"]);
mkdirSync(join(root, "vsix"), { recursive: true });
const out = join("vsix", `instructions-lsp-${target}.vsix`);
run("npx", ["vsce", "package", "--no-dependencies", "--target", target, "--out", out]);
console.log(`wrote ${out}`);
