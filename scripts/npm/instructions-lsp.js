#!/usr/bin/env node
// The npm package's launcher: runs the instructions-lsp binary of the package for this platform
// (@instructions-lsp/cli-<platform>-<arch>, an optional dependency npm installed by its os and
// cpu), with the same arguments, standard streams and exit code.
"use strict";
const { spawnSync } = require("child_process");

const target = `${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "instructions-lsp.exe" : "instructions-lsp";
let binary;
try {
  binary = require.resolve(`@instructions-lsp/cli-${target}/bin/${exe}`);
} catch {
  process.stderr.write(
    `instructions-lsp: no binary for ${target} was installed (the package @instructions-lsp/cli-${target}).\n` +
      "Releases are built for linux-x64, linux-arm64, darwin-x64, darwin-arm64 and win32-x64; install with\n" +
      "optional dependencies on (not --omit=optional), or build it: cargo install instructions-lsp\n",
  );
  process.exit(1);
}
const result = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (result.error) {
  process.stderr.write(`instructions-lsp: cannot run ${binary}: ${result.error.message}\n`);
  process.exit(1);
}
process.exit(result.status ?? 1);
