#!/usr/bin/env node
// The npm package's launcher: runs the instructions-lsp binary of the package for this platform
// (@instructions-lsp/cli-<platform>-<arch>[-musl], an optional dependency npm installed by its os,
// cpu and libc), with the same arguments, standard streams and exit code.
"use strict";
const { spawnSync } = require("child_process");

const platform = `${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "instructions-lsp.exe" : "instructions-lsp";
// On Linux npm installs the package of the system's C library (`libc`); the static musl binary
// runs on any Linux, so it serves where the glibc one is missing too (an older npm installs both).
const glibc = process.platform === "linux" && Boolean(process.report?.getReport?.().header?.glibcVersionRuntime);
const targets =
  process.platform !== "linux" ? [platform] : glibc ? [platform, `${platform}-musl`] : [`${platform}-musl`];
let binary;
for (const target of targets) {
  try {
    binary = require.resolve(`@instructions-lsp/cli-${target}/bin/${exe}`);
    break;
  } catch {
    // the next one
  }
}
if (!binary) {
  process.stderr.write(
    `instructions-lsp: no binary for ${targets[0]} was installed (the package @instructions-lsp/cli-${targets[0]}).\n` +
      "Releases are built for linux-x64, linux-arm64 (glibc and musl), darwin-x64, darwin-arm64 and win32-x64;\n" +
      "install with optional dependencies on (not --omit=optional), or build it: cargo install instructions-lsp\n",
  );
  process.exit(1);
}
const result = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (result.error) {
  process.stderr.write(`instructions-lsp: cannot run ${binary}: ${result.error.message}\n`);
  process.exit(1);
}
process.exit(result.status ?? 1);
