// The language model tool (`instructions_for_file`): which file the model asked about, and the
// text it gets back. Pure: no `vscode` import, so unit tests run in plain Node.
import * as path from "path";

import { contextText, Effective } from "./model";

export const TOOL_NAME = "instructions_for_file";

export interface Folder {
  name: string;
  fsPath: string;
}

/**
 * The file a tool call names: an absolute path inside a workspace folder, or a path relative to
 * one (`src/main.rs`, or `alpha/src/main.rs` with the folder's name first in a multi-root
 * workspace). Throws an error that says what was wrong, for the model to read.
 */
export function resolveToolPath(input: unknown, folders: Folder[], exists: (p: string) => boolean): string {
  const given = (input as { path?: unknown } | undefined)?.path;
  if (typeof given !== "string" || given.trim() === "") {
    throw new Error('expected {"path": "<file or directory>"}: the file you are about to read or change');
  }
  const p = given.trim();
  const inside = (abs: string) => folders.some((f) => abs === f.fsPath || abs.startsWith(f.fsPath.endsWith(path.sep) ? f.fsPath : f.fsPath + path.sep));
  if (path.isAbsolute(p)) {
    const abs = path.normalize(p);
    if (!inside(abs)) throw new Error(`${p} is not inside a workspace folder (${folders.map((f) => f.fsPath).join(", ")})`);
    return abs;
  }
  const candidates: string[] = [];
  for (const f of folders) candidates.push(path.join(f.fsPath, p));
  const [first, ...rest] = p.split(/[\\/]/);
  const named = folders.find((f) => f.name === first);
  if (named && rest.length) candidates.unshift(path.join(named.fsPath, ...rest));
  const ok = candidates.filter(inside);
  if (ok.length === 0) throw new Error(`${p} leaves the workspace folders`);
  // A file that does not exist yet (about to be created) resolves against the first folder.
  return ok.find(exists) ?? ok[0];
}

/**
 * What the model gets: the blocks an agent working on the file has — the baseline, the nested
 * blocks touches reached so far, and what this touch adds (`e` is the answer for the file, asked
 * before the touch, so its preview is the new part).
 */
export function toolText(display: string, e: Effective): string {
  const given = contextText(e);
  const added = e.preview?.rendered ?? "";
  if (given === "" && added === "") return `No instruction file applies to ${display}.`;
  const head = `Project instructions that apply to ${display} (follow them; deeper files override the root's):`;
  return [head, given, added].filter((t) => t.length > 0).join("\n\n");
}
