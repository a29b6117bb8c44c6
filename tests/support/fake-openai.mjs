// A stand-in for the Responses API on 127.0.0.1, so that `codex exec` runs offline in
// tests/it/hook.rs: it appends every request to LOG (one JSON line each) and answers with a short
// streamed reply. While TARGET (a file) holds an apply_patch envelope, the first turn answers
// with an apply_patch call of it, so that Codex edits files and runs its PostToolUse hooks.
//   node tests/support/fake-openai.mjs LOG TARGET   (prints the port)
import http from "http";
import { appendFileSync, readFileSync } from "fs";

const [log, targetFile] = process.argv.slice(2);

const server = http.createServer((req, res) => {
  let body = "";
  // Decoded as one stream: a character split between two chunks stays whole.
  req.setEncoding("utf8");
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    appendFileSync(log, JSON.stringify({ url: req.url, body }) + "\n");
    if (req.method !== "POST" || !req.url.endsWith("/responses")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end("{}");
      return;
    }
    let parsed = {};
    try {
      parsed = JSON.parse(body);
    } catch {}
    let patch = "";
    try {
      patch = readFileSync(targetFile, "utf8");
    } catch {}
    const answered = JSON.stringify(parsed.input ?? []).includes("custom_tool_call_output");
    const item = patch && !answered
      ? { type: "custom_tool_call", id: "ctc_1", call_id: "call_1", name: "apply_patch", input: patch, status: "completed" }
      : { type: "message", id: "msg_1", role: "assistant", status: "completed",
          content: [{ type: "output_text", text: "ok", annotations: [] }] };
    res.writeHead(200, { "content-type": "text/event-stream" });
    const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev("response.created", { response: { id: "resp_1" } });
    ev("response.output_item.done", { item });
    ev("response.completed", { response: { id: "resp_1", usage: { input_tokens: 1, input_tokens_details: null,
      output_tokens: 1, output_tokens_details: null, total_tokens: 2 } } });
    res.end();
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
