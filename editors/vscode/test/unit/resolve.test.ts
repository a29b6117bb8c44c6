// Server resolution: setting, then $INSTRUCTIONS_LSP_PATH, then bundled, then PATH, each
// checked with `--version`.
import { strict as assert } from "assert";
import { test } from "node:test";

import { Probe, resolveServer } from "../../src/resolve";

function probe(files: Record<string, string | Error>): Probe {
  return {
    exists: (f) => f in files,
    version: async (f) => {
      const v = files[f];
      return v instanceof Error ? { ok: false, error: v.message } : { ok: true, line: v };
    },
  };
}

const ok = "instructions-lsp 0.1.0";

test("the setting wins over everything else", async () => {
  const r = await resolveServer({ setting: "/s/bin", env: "/e/bin", bundled: "/ext/server/instructions-lsp", pathEnv: "/usr/bin" }, probe({ "/s/bin": ok, "/e/bin": ok, "/ext/server/instructions-lsp": ok }));
  assert.equal(r.ok && r.path, "/s/bin");
});

test("env, then bundled, then PATH", async () => {
  const files = { "/e/bin": ok, "/ext/server/instructions-lsp": ok, "/usr/bin/instructions-lsp": ok };
  const src = { bundled: "/ext/server/instructions-lsp", pathEnv: "/opt/none:/usr/bin" };
  assert.equal((await resolveServer({ ...src, env: "/e/bin" }, probe(files))) .ok && "/e/bin", "/e/bin");
  const bundled = await resolveServer(src, probe(files));
  assert.equal(bundled.ok && bundled.path, "/ext/server/instructions-lsp");
  const onPath = await resolveServer(src, probe({ "/usr/bin/instructions-lsp": ok }));
  assert.equal(onPath.ok && onPath.path, "/usr/bin/instructions-lsp");
});

test("a binary that fails --version is skipped and reported", async () => {
  const r = await resolveServer(
    { setting: "/broken", bundled: "/ext/server/instructions-lsp", pathEnv: "/usr/bin" },
    probe({ "/broken": new Error("exec format error"), "/usr/bin/instructions-lsp": "something-else 1.0" }),
  );
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.match(r.message, /setting instructions.server.path: \/broken \(--version failed: exec format error\)/);
    assert.match(r.message, /bundled: \/ext\/server\/instructions-lsp \(not found\)/);
    assert.match(r.message, /PATH: \/usr\/bin\/instructions-lsp \(--version printed "something-else 1.0"\)/);
  }
});

test("nothing anywhere says what was tried", async () => {
  const r = await resolveServer({ bundled: "/ext/server/instructions-lsp", pathEnv: "" }, probe({}));
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.message, /PATH: no instructions-lsp found/);
});

test("no server bundled for this platform: the configured path, else PATH", async () => {
  // A platform without a bundled binary (e.g. a universal .vsix on linux-arm64).
  const src = { bundled: "/ext/server/instructions-lsp", pathEnv: "/home/me/.cargo/bin:/usr/bin" };
  const configured = await resolveServer({ ...src, setting: "/opt/ilsp" }, probe({ "/opt/ilsp": ok, "/usr/bin/instructions-lsp": ok }));
  assert.equal(configured.ok && configured.path, "/opt/ilsp");
  const cargo = await resolveServer(src, probe({ "/home/me/.cargo/bin/instructions-lsp": ok, "/usr/bin/instructions-lsp": ok }));
  assert.equal(cargo.ok && cargo.path, "/home/me/.cargo/bin/instructions-lsp");
  const none = await resolveServer(src, probe({}));
  assert.equal(none.ok, false);
  if (!none.ok) assert.match(none.message, /cargo install instructions-lsp/);
});
