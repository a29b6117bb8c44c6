// Builds the release server for one VS Code platform target, stages it alone in server/,
// bundles the extension and writes vsix/instructions-lsp-<target>.vsix with
// `vsce package --target`.
//
//   node editors/vscode/scripts/vsix.mjs [--target linux-x64|linux-arm64|alpine-x64|alpine-arm64|darwin-x64|darwin-arm64|win32-x64]
//
// The target defaults to $VSIX_TARGET, else this machine's platform. A target other than this
// machine's builds with `cargo build --target <triple>` (the release workflow installs the Rust
// target; cross linking is its business). The staged binary is also copied to
// vsix/instructions-lsp-<target>[.exe] so a release can attach it next to the .vsix.
import { execFileSync } from "child_process";
import { chmodSync, copyFileSync, mkdirSync, rmSync } from "fs";
import { dirname, join } from "path";
import { fileURLToPath } from "url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: "inherit", shell: process.platform === "win32" });

/** VS Code's platform targets and the Rust target each one runs (Alpine's: a static musl binary). */
const rustTargets = {
  "linux-x64": "x86_64-unknown-linux-gnu",
  "linux-arm64": "aarch64-unknown-linux-gnu",
  "alpine-x64": "x86_64-unknown-linux-musl",
  "alpine-arm64": "aarch64-unknown-linux-musl",
  "darwin-x64": "x86_64-apple-darwin",
  "darwin-arm64": "aarch64-apple-darwin",
  "win32-x64": "x86_64-pc-windows-msvc",
};

const flag = process.argv.indexOf("--target");
const host = `${process.platform}-${process.arch}`;
const target = (flag >= 0 ? process.argv[flag + 1] : undefined) ?? process.env.VSIX_TARGET ?? host;
if (!rustTargets[target]) {
  throw new Error(`no VS Code target "${target}"; use one of ${Object.keys(rustTargets).join(", ")}`);
}

// The host's own target builds into target/release, sharing the cache of every other build.
const cross = target !== host;
run("cargo", ["build", "--release", "--locked", ...(cross ? ["--target", rustTargets[target]] : [])]);
const exe = target.startsWith("win32-") ? "instructions-lsp.exe" : "instructions-lsp";
const built = join(root, "target", ...(cross ? [rustTargets[target]] : []), "release", exe);

// server/ holds exactly one binary: a stale one of another platform would ship too.
rmSync(join(root, "server"), { recursive: true, force: true });
mkdirSync(join(root, "server"), { recursive: true });
copyFileSync(built, join(root, "server", exe));
chmodSync(join(root, "server", exe), 0o755);

run("node", ["editors/vscode/scripts/build.mjs"]);
mkdirSync(join(root, "vsix"), { recursive: true });
const out = join("vsix", `instructions-lsp-${target}.vsix`);
run("npx", ["vsce", "package", "--no-dependencies", "--target", target, "--out", out]);
copyFileSync(built, join(root, "vsix", `instructions-lsp-${target}${exe.endsWith(".exe") ? ".exe" : ""}`));
console.log(`wrote ${out}`);
