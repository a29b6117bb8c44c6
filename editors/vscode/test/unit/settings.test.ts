// What the extension passes on from settings in trusted and untrusted workspaces, the manifest's
// untrusted-workspace declaration, and the one notification when no server is found.
import { strict as assert } from "assert";
import { readFileSync } from "fs";
import { join } from "path";
import { test } from "node:test";

import { cliSetArgs, documentPatterns, explicitValue, missingServerNotice, onceNotifier, repositoryUrl, RESTRICTED_KEYS } from "../../src/settings";

const manifest = JSON.parse(readFileSync(join(__dirname, "../../../../package.json"), "utf8"));

test("an untrusted workspace cannot point the server at a file outside it", () => {
  const levels = { globalValue: "~/.dsh/AGENTS.md", workspaceValue: "/home/me/.ssh/id_ed25519" };
  assert.equal(explicitValue("globalInstructionFile", levels, false), "~/.dsh/AGENTS.md");
  assert.equal(explicitValue("globalInstructionFile", { workspaceFolderValue: "/etc/shadow" }, false), undefined);
  assert.equal(explicitValue("server.path", { workspaceValue: "./evil" }, false), undefined);
  assert.equal(explicitValue("symlinks", { workspaceValue: "follow", globalValue: "skip" }, false), "skip");
  // Once trusted, the workspace's own choice wins again.
  assert.equal(explicitValue("globalInstructionFile", levels, true), "/home/me/.ssh/id_ed25519");
});

test("settings that read nothing outside still come from the workspace when untrusted", () => {
  assert.equal(explicitValue("baselineMaxBytes", { workspaceValue: 1024, globalValue: 65536 }, false), 1024);
  assert.equal(explicitValue("profile", { workspaceFolderValue: "ds4", workspaceValue: "dsh" }, false), "ds4");
});

test("folder, then workspace, then user; nothing set leaves the server's default", () => {
  assert.equal(explicitValue("frame", { workspaceFolderValue: "system-reminder", workspaceValue: "workspace-context", globalValue: "x" }, true), "system-reminder");
  assert.equal(explicitValue("frame", { workspaceValue: "workspace-context", globalValue: "x" }, true), "workspace-context");
  // An explicit null (a disabled global file) is a value, not an absence.
  assert.equal(explicitValue("globalInstructionFile", { globalValue: null }, false), null);
  assert.equal(explicitValue("frame", {}, true), undefined);
  assert.equal(explicitValue("frame", undefined, true), undefined);
});

test("the manifest restricts exactly the keys the extension filters, and they exist", () => {
  const declared = manifest.capabilities.untrustedWorkspaces;
  assert.equal(declared.supported, "limited");
  assert.deepEqual([...declared.restrictedConfigurations].sort(), RESTRICTED_KEYS.map((k) => `instructions.${k}`).sort());
  const properties = manifest.contributes.configuration.properties;
  for (const key of declared.restrictedConfigurations) assert.ok(properties[key], `${key} is not a setting`);
  // `machine`: no workspace, trusted or not, can choose the binary that runs.
  assert.equal(properties["instructions.server.path"].scope, "machine");
});

test("the missing-server notification is shown once and its button opens the repository", async () => {
  const shown: string[][] = [];
  const opened: string[] = [];
  const notify = onceNotifier(
    async (message, ...buttons) => {
      shown.push([message, ...buttons]);
      return buttons[0];
    },
    (url) => opened.push(url),
  );
  const docs = repositoryUrl(manifest.repository);
  assert.equal(docs, "https://github.com/instructions-lsp/instructions-lsp");
  const notice = missingServerNotice("linux-arm64", docs);
  assert.match(notice.message, /cargo install instructions-lsp/);
  assert.match(notice.message, /cargo install --path \./);
  assert.match(notice.message, /linux-arm64/);
  assert.equal(await notify(notice), true);
  // A restart after a settings change fails the same way: no second notification.
  assert.equal(await notify(notice), false);
  assert.equal(shown.length, 1);
  assert.deepEqual(shown[0].slice(1), ["Open Install Docs"]);
  assert.deepEqual(opened, [docs]);
});

test("dismissing the notification opens nothing", async () => {
  const opened: string[] = [];
  const notify = onceNotifier(async () => undefined, (url) => opened.push(url));
  await notify(missingServerNotice("win32-x64", "https://example.test/repo"));
  assert.deepEqual(opened, []);
});

test("the repository URL is read from either form of package.json's repository", () => {
  assert.equal(repositoryUrl("git+https://github.com/o/r.git"), "https://github.com/o/r");
  assert.equal(repositoryUrl({ url: "https://github.com/o/r" }), "https://github.com/o/r");
  assert.equal(repositoryUrl(undefined), undefined);
});

test("the sidebar's diff gets the folder's settings as the CLI's --set, values as JSON, process keys left out", () => {
  const args = cliSetArgs({ profiles: ["claude"], baselineMaxBytes: 1200, profile: "true", watch: false, stateDir: "/tmp/s" });
  assert.deepEqual(args, ["--set", 'profiles=["claude"]', "--set", "baselineMaxBytes=1200", "--set", 'profile="true"']);
  assert.deepEqual(cliSetArgs({}), []);
});

test("the client sends the server every kind of instruction file, and the candidates a user named", () => {
  const patterns = documentPatterns(["AGENTS.md", "TEAM.md"]);
  assert.equal(patterns[0], "**/{AGENTS.md,TEAM.md}");
  for (const p of ["**/GEMINI.md", "**/*.instructions.md", "**/*.mdc", "**/.claude/**/*.md", "**/instructions-lsp.toml"]) {
    assert.ok(patterns.includes(p), p);
  }
  assert.equal(documentPatterns([])[0], "**/AGENTS.md", "no empty braces without named candidates");
});
