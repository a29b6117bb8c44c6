// Which server binary to run: the setting, then $INSTRUCTIONS_LSP_PATH, then the bundled
// binary, then PATH; each checked with `--version`. Pure apart from the injected probe.

import * as path from "path";

export interface Probe {
  /** True when a file exists at the path. */
  exists(file: string): boolean;
  /** The first line of `file --version`, or an error message. */
  version(file: string): Promise<{ ok: true; line: string } | { ok: false; error: string }>;
}

export interface Sources {
  setting?: string;
  env?: string;
  bundled: string;
  pathEnv?: string;
  exe?: string;
}

export type Resolved =
  | { ok: true; path: string; version: string; tried: string[] }
  | { ok: false; tried: string[]; message: string };

export async function resolveServer(src: Sources, probe: Probe): Promise<Resolved> {
  const exe = src.exe ?? "instructions-lsp";
  const candidates: [string, string][] = [];
  if (src.setting) candidates.push(["setting instructions.server.path", src.setting]);
  if (src.env) candidates.push(["$INSTRUCTIONS_LSP_PATH", src.env]);
  candidates.push(["bundled", src.bundled]);
  for (const dir of (src.pathEnv ?? "").split(path.delimiter).filter((d) => d.length > 0)) {
    candidates.push(["PATH", path.join(dir, exe)]);
  }
  const tried: string[] = [];
  for (const [from, file] of candidates) {
    if (!probe.exists(file)) {
      if (from !== "PATH") tried.push(`${from}: ${file} (not found)`);
      continue;
    }
    const v = await probe.version(file);
    if (v.ok && v.line.startsWith("instructions-lsp ")) {
      return { ok: true, path: file, version: v.line, tried };
    }
    tried.push(`${from}: ${file} (--version ${v.ok ? `printed "${v.line}"` : `failed: ${v.error}`})`);
  }
  if (!candidates.some(([from]) => from === "PATH") || !tried.some((t) => t.startsWith("PATH"))) {
    tried.push(`PATH: no ${exe} found`);
  }
  return {
    ok: false,
    tried,
    message: `No working instructions-lsp server was found. Tried: ${tried.join("; ")}. Set "instructions.server.path", or install it with \`cargo install instructions-lsp\` (or \`cargo install --path .\` in a checkout).`,
  };
}
