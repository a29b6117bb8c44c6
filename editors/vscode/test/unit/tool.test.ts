// The language model tool: the paths a model may give, and the text it gets back.
import { strict as assert } from "assert";
import { readFileSync } from "fs";
import { join } from "path";
import { test } from "node:test";

import { Effective } from "../../src/model";
import { resolveToolPath, toolText } from "../../src/tool";

const folders = [
  { name: "alpha", fsPath: "/ws/alpha" },
  { name: "beta", fsPath: "/ws/beta" },
];
const files = new Set(["/ws/alpha/src/main.rs", "/ws/beta/notes.txt"]);
const exists = (p: string) => files.has(p);

test("a tool path is absolute inside a folder, relative to one, or led by the folder's name", () => {
  assert.equal(resolveToolPath({ path: "/ws/alpha/src/main.rs" }, folders, exists), "/ws/alpha/src/main.rs");
  assert.equal(resolveToolPath({ path: "src/main.rs" }, folders, exists), "/ws/alpha/src/main.rs");
  assert.equal(resolveToolPath({ path: "notes.txt" }, folders, exists), "/ws/beta/notes.txt", "the folder that holds it");
  assert.equal(resolveToolPath({ path: "beta/new.rs" }, folders, exists), "/ws/beta/new.rs", "a file about to be created");
  assert.equal(resolveToolPath({ path: " lib/new.rs " }, folders, exists), "/ws/alpha/lib/new.rs");
});

test("a bad tool path is an error that says what was wrong", () => {
  assert.throws(() => resolveToolPath({}, folders, exists), /expected \{"path"/);
  assert.throws(() => resolveToolPath({ path: 42 }, folders, exists), /expected \{"path"/);
  assert.throws(() => resolveToolPath(undefined, folders, exists), /expected \{"path"/);
  assert.throws(() => resolveToolPath({ path: "/etc/passwd" }, folders, exists), /not inside a workspace folder/);
  assert.throws(() => resolveToolPath({ path: "/ws/alphabet/x" }, folders, exists), /not inside a workspace folder/);
  assert.throws(() => resolveToolPath({ path: "../../etc/passwd" }, folders, exists), /leaves the workspace folders/);
});

test("the tool gives the blocks the file's agent has, then what the touch adds", () => {
  // Recorded from the server: the answer for a file whose directory holds an AGENTS.md.
  const e: Effective = JSON.parse(readFileSync(join(__dirname, "../../test/unit/fixtures/effective-preview.json"), "utf8"));
  assert.ok(e.preview && e.preview.rendered.length > 0, "the fixture previews a nested file");
  const text = toolText("pkg/x.rs", e);
  const blocks = [e.baseline, ...e.nested].map((b) => b.rendered).filter((t) => t);
  assert.equal(text, [`Project instructions that apply to pkg/x.rs (follow them; deeper files override the root's):`, ...blocks, e.preview!.rendered].join("\n\n"));
  const none: Effective = { ...e, baseline: { ...e.baseline, rendered: "" }, nested: [], preview: null };
  assert.equal(toolText("x.rs", none), "No instruction file applies to x.rs.");
});
