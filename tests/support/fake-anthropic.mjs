// A stand-in for the Anthropic Messages API on 127.0.0.1, so that Claude Code runs offline in
// tests/it/agents.rs: it appends every request to LOG (one JSON line each) and answers with a short
// streamed reply. While TARGET (a file) names a path, the first turn answers with a Read tool
// call of that path (a Write or an Edit for "write:PATH" or "edit:PATH", the edit replacing
// "code"), so that Claude Code loads what such a touch loads; "tool:NAME INPUT" calls the tool
// NAME (an MCP server's) with INPUT, a JSON object. A TARGET of several lines asks for one call
// per line, each once the previous one has its result (tests/it/hook.rs).
//   node tests/support/fake-anthropic.mjs LOG TARGET   (prints the port)
import http from "http";
import { appendFileSync, readFileSync } from "fs";

const [log, targetFile] = process.argv.slice(2);
const message = { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [],
  stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };

function stream(res, block, delta, stop) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev("message_start", { message });
  ev("content_block_start", { index: 0, content_block: block });
  ev("content_block_delta", { index: 0, delta });
  ev("content_block_stop", { index: 0 });
  ev("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } });
  ev("message_stop", {});
  res.end();
}

const server = http.createServer((req, res) => {
  let body = "";
  // Decoded as one stream: a character split between two chunks stays whole.
  req.setEncoding("utf8");
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    appendFileSync(log, JSON.stringify({ url: req.url, body }) + "\n");
    if (!req.url.startsWith("/v1/messages") || req.url.includes("count_tokens")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(req.url.includes("count_tokens") ? '{"input_tokens":1}' : "{}");
      return;
    }
    let parsed = {};
    try {
      parsed = JSON.parse(body);
    } catch {}
    let target = "";
    try {
      target = readFileSync(targetFile, "utf8").trim();
    } catch {}
    const messages = JSON.stringify(parsed.messages ?? []);
    const targets = target.split("\n").map((t) => t.trim()).filter(Boolean);
    const results = messages.split('"tool_result"').length - 1;
    const answered = targets.length > 1 ? results >= targets.length : messages.includes("tool_result");
    target = targets[Math.min(results, Math.max(targets.length - 1, 0))] ?? "";
    if (!parsed.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...message, content: [{ type: "text", text: "ok" }], stop_reason: "end_turn" }));
    } else if (target.startsWith("tool:") && !answered) {
      // "tool:NAME INPUT" calls any tool by name (an MCP server's, say) with INPUT, a JSON object.
      const rest = target.slice(5);
      const at = rest.indexOf(" ");
      stream(res, { type: "tool_use", id: "toolu_1", name: rest.slice(0, at), input: {} },
        { type: "input_json_delta", partial_json: rest.slice(at + 1) }, "tool_use");
    } else if (target && !answered) {
      // "write:PATH" and "edit:PATH" ask for a Write or an Edit instead.
      const [tool, path] = target.startsWith("write:") ? ["Write", target.slice(6)]
        : target.startsWith("edit:") ? ["Edit", target.slice(5)] : ["Read", target];
      const input = tool === "Write" ? { file_path: path, content: "written\n" }
        : tool === "Edit" ? { file_path: path, old_string: "code", new_string: "edited" } : { file_path: path };
      stream(res, { type: "tool_use", id: `toolu_${results + 1}`, name: tool, input: {} },
        { type: "input_json_delta", partial_json: JSON.stringify(input) }, "tool_use");
    } else {
      stream(res, { type: "text", text: "" }, { type: "text_delta", text: "ok" }, "end_turn");
    }
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
