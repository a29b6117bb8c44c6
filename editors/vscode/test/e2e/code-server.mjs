// What the tests in a real VS Code share: code-server installed offline
// (scripts/install-code-server.sh), a quiet user profile, code-server on loopback in its own
// process group, and Debian's headless Chromium driven by playwright-core.
import { execFileSync, spawn } from "child_process";
import { mkdirSync, writeFileSync } from "fs";
import { createServer } from "net";
import { dirname, join } from "path";
import { fileURLToPath } from "url";
import { chromium } from "playwright-core";

export const root = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
export const TIMEOUT = 60_000;

/** Installs code-server into .cache/code-server (reused when done); returns its launcher. */
export function installCodeServer() {
  return execFileSync("bash", [join(root, "scripts/install-code-server.sh"), join(root, ".cache/code-server")], {
    stdio: ["ignore", "pipe", "inherit"],
  })
    .toString()
    .trim()
    .split("\n")
    .pop();
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

export async function waitFor(what, fn, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
}

/** A fresh user profile in `dir` with the settings of a quiet, offline VS Code, plus `extra`. */
export function userSettings(dir, extra) {
  mkdirSync(join(dir, "User"), { recursive: true });
  const quiet = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "telemetry.telemetryLevel": "off",
    "window.restoreWindows": "none",
    "instructions.stateDir": null,
  };
  writeFileSync(join(dir, "User/settings.json"), JSON.stringify({ ...quiet, ...extra }));
}

/**
 * Starts code-server on a free loopback port with the user profile `user` and extensions `ext`;
 * its config goes to `tmp`. Returns { server, port, log }.
 */
export async function startCodeServer({ codeServer, tmp, name, user, ext, env, args = [] }) {
  const port = await freePort();
  const cfg = join(tmp, `${name}.yaml`);
  writeFileSync(cfg, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const server = spawn(
    codeServer,
    ["--config", cfg, "--user-data-dir", user, "--extensions-dir", ext, "--disable-telemetry", "--disable-update-check",
      "--disable-getting-started-override", ...args],
    // Its own process group, so that the extension host and our server stop with it.
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  const cs = { server, port, log: "" };
  server.stdout.on("data", (d) => (cs.log += d));
  server.stderr.on("data", (d) => (cs.log += d));
  await waitFor("code-server to listen", async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok);
  return cs;
}

// Waits for code-server to exit: its extension host and our server still write logs and state
// into tmp while they shut down.
export async function stopCodeServer({ server }) {
  const exited = new Promise((resolve) => server.once("exit", resolve));
  try {
    process.kill(-server.pid, "SIGTERM");
  } catch {
    server.kill();
  }
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10000))]);
}

export function launchChromium() {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}
