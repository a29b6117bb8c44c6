// The release artefacts of one platform, in dist/: what a user downloads or installs.
//
//   node scripts/dist.mjs [--target linux-x64|linux-arm64|linux-x64-musl|linux-arm64-musl|darwin-x64|darwin-arm64|win32-x64]
//                         [--no-build] [--add]
//
// - instructions-lsp-<target>[.exe]: the binary (what the GitHub Action downloads);
// - instructions-lsp-<target>.tar.gz: the binary with README.md and LICENSE;
// - instructions-lsp-<target>.vsix: the VS Code extension with that binary inside (for the musl
//   targets, VS Code's `alpine-*` platforms);
// - npm/instructions-lsp-<version>.tgz: the npm package `instructions-lsp`, a small launcher whose
//   optional dependencies are one package per platform, chosen by npm from their `os` and `cpu`
//   (the layout esbuild and biome use: nothing is downloaded at install time);
// - npm/instructions-lsp-cli-<target>-<version>.tgz: that platform's package, `@instructions-lsp/cli-<target>`;
// - SHA256SUMS of the files above.
//
// The release workflow runs it on each platform and attaches the files; .ci/run runs it for this
// machine's platform and installs each artefact from the packed files (scripts/check-dist.sh).
// --no-build takes the binary and .vsix that editors/vscode/scripts/vsix.mjs already wrote in vsix/.
import { execFileSync } from "child_process";
import { createHash } from "crypto";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "fs";
import { dirname, join } from "path";
import { fileURLToPath } from "url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const run = (cmd, args, cwd = root) =>
  execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "inherit"], shell: process.platform === "win32" }).toString();

/**
 * The platforms a release is built for, as npm's `os`, `cpu` and `libc` name them, with VS Code's
 * name of each. The `-musl` binaries are static: they run on Alpine and on any other Linux.
 */
const platforms = {
  "linux-x64": { os: "linux", cpu: "x64", libc: "glibc", vscode: "linux-x64" },
  "linux-arm64": { os: "linux", cpu: "arm64", libc: "glibc", vscode: "linux-arm64" },
  "linux-x64-musl": { os: "linux", cpu: "x64", libc: "musl", vscode: "alpine-x64" },
  "linux-arm64-musl": { os: "linux", cpu: "arm64", libc: "musl", vscode: "alpine-arm64" },
  "darwin-x64": { os: "darwin", cpu: "x64", vscode: "darwin-x64" },
  "darwin-arm64": { os: "darwin", cpu: "arm64", vscode: "darwin-arm64" },
  "win32-x64": { os: "win32", cpu: "x64", vscode: "win32-x64" },
};

const arg = (name) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const target = arg("--target") ?? `${process.platform}-${process.arch}`;
if (!platforms[target]) throw new Error(`no release target "${target}"; use one of ${Object.keys(platforms).join(", ")}`);
const exe = target.startsWith("win32-") ? ".exe" : "";

const cargoToml = readFileSync(join(root, "Cargo.toml"), "utf8");
const version = /^version = "([^"]+)"/m.exec(cargoToml)?.[1];
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
if (!version || manifest.version !== version) {
  throw new Error(`Cargo.toml says ${version}, package.json ${manifest.version}: they must name one version`);
}

const { os, cpu, libc, vscode } = platforms[target];
if (!process.argv.includes("--no-build")) {
  execFileSync("node", ["editors/vscode/scripts/vsix.mjs", "--target", vscode], { cwd: root, stdio: "inherit" });
}
const binary = join(root, "vsix", `instructions-lsp-${vscode}${exe}`);
const vsix = join(root, "vsix", `instructions-lsp-${vscode}.vsix`);
for (const f of [binary, vsix]) statSync(f);

// dist/ is emptied first, unless --add keeps what another target's run wrote there (SHA256SUMS
// then covers both).
const dist = join(root, "dist");
if (!process.argv.includes("--add")) rmSync(dist, { recursive: true, force: true });
rmSync(join(dist, ".stage"), { recursive: true, force: true });
mkdirSync(join(dist, "npm"), { recursive: true });
copyFileSync(binary, join(dist, `instructions-lsp-${target}${exe}`));
copyFileSync(vsix, join(dist, `instructions-lsp-${target}.vsix`));

// The archive: the binary at its top, beside the README and the license.
const stage = join(dist, ".stage", `instructions-lsp-${target}`);
mkdirSync(stage, { recursive: true });
copyFileSync(binary, join(stage, `instructions-lsp${exe}`));
chmodSync(join(stage, `instructions-lsp${exe}`), 0o755);
for (const f of ["README.md", "LICENSE"]) copyFileSync(join(root, f), join(stage, f));
// (Paths relative to dist/: GNU tar reads the `C:` of a Windows path as a remote host.)
run("tar", ["-czf", `instructions-lsp-${target}.tar.gz`, "-C", ".stage", `instructions-lsp-${target}`], dist);

// npm: the platform's package, then the launcher.
const common = {
  version,
  license: manifest.license,
  repository: { type: "git", url: "git+https://github.com/instructions-lsp/instructions-lsp.git" },
  homepage: "https://github.com/instructions-lsp/instructions-lsp",
};
const platformDir = join(dist, ".stage", "npm-platform");
mkdirSync(join(platformDir, "bin"), { recursive: true });
copyFileSync(binary, join(platformDir, "bin", `instructions-lsp${exe}`));
chmodSync(join(platformDir, "bin", `instructions-lsp${exe}`), 0o755);
writeFileSync(
  join(platformDir, "package.json"),
  JSON.stringify(
    {
      name: `@instructions-lsp/cli-${target}`,
      description: `The instructions-lsp binary for ${target} (installed by the instructions-lsp package)`,
      ...common,
      os: [os],
      cpu: [cpu],
      ...(libc ? { libc: [libc] } : {}),
      files: ["bin"],
      preferUnplugged: true,
    },
    null,
    2,
  ) + "\n",
);
copyFileSync(join(root, "LICENSE"), join(platformDir, "LICENSE"));

const launcherDir = join(dist, ".stage", "npm-launcher");
mkdirSync(join(launcherDir, "bin"), { recursive: true });
copyFileSync(join(root, "scripts", "npm", "instructions-lsp.js"), join(launcherDir, "bin", "instructions-lsp.js"));
chmodSync(join(launcherDir, "bin", "instructions-lsp.js"), 0o755);
writeFileSync(
  join(launcherDir, "package.json"),
  JSON.stringify(
    {
      name: "instructions-lsp",
      description: manifest.description,
      ...common,
      bin: { "instructions-lsp": "bin/instructions-lsp.js" },
      files: ["bin"],
      engines: { node: ">=18" },
      optionalDependencies: Object.fromEntries(Object.keys(platforms).map((t) => [`@instructions-lsp/cli-${t}`, version])),
    },
    null,
    2,
  ) + "\n",
);
for (const f of ["README.md", "LICENSE"]) copyFileSync(join(root, f), join(launcherDir, f));
for (const dir of [platformDir, launcherDir]) run("npm", ["pack", "--silent", "--pack-destination", join(dist, "npm")], dir);
rmSync(join(dist, ".stage"), { recursive: true, force: true });

// SHA256SUMS, as `sha256sum` writes it.
const files = readdirSync(dist, { recursive: true })
  .map(String)
  .filter((f) => f !== "SHA256SUMS" && statSync(join(dist, f)).isFile())
  .sort();
const sums = files.map((f) => `${createHash("sha256").update(readFileSync(join(dist, f))).digest("hex")}  ${f.replaceAll("\\", "/")}`);
writeFileSync(join(dist, "SHA256SUMS"), sums.join("\n") + "\n");
console.log(`dist/ for ${target}, version ${version}:\n${files.map((f) => `  ${f}`).join("\n")}`);
