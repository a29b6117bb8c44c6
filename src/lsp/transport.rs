//! Our own stdio transport. tower-lsp-server's reader ends its input stream at the first
//! decoding error (tokio-util's `FramedRead` stops after an error), so one malformed message
//! would silently stop the server. Here a bad frame gets a JSON-RPC error and reading goes on:
//! after a garbage header block or a body that is not JSON (a client that counted characters
//! instead of bytes, or a length that swallowed the next message), the reader resynchronises on
//! the next `Content-Length:` it finds, even in the middle of a line or inside the bad body.
//! Futures are polled in arrival order, up to a few at once, as tower-lsp-server does, so the
//! synchronous part of each handler runs in the order the client sent its messages.
//! Output is bounded: when the client stops reading, answers wait, handlers stop being polled,
//! and reading stops, so a client that never reads cannot make the server grow.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tower::{Service, ServiceExt};
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::{ClientSocket, LspService};

use super::server::Server;
use crate::jsonrpc::{INVALID_REQUEST, PARSE_ERROR, error_response};

const MAX_CONCURRENCY: usize = 4;
/// A header block longer than this is garbage, not headers.
const MAX_HEADER_BYTES: usize = 8 * 1024;
/// A body larger than this is refused (and skipped) rather than buffered.
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;
/// Frames waiting for the client to read them; beyond this, the server stops reading input.
const MAX_QUEUED_FRAMES: usize = crate::jsonrpc::MAX_WAITING_ANSWERS;
/// How long queued output may take to flush after `exit` or the end of input.
const FLUSH_GRACE: Duration = Duration::from_millis(200);
/// What a resynchronisation looks for, compared ignoring ASCII case.
const HEADER_NAME: &[u8] = b"content-length:";

/// One frame read from the input.
enum Frame {
    Body(Vec<u8>),
    /// A frame that cannot be read: the error to answer with.
    Bad(String),
    Eof,
}

/// The input with a buffer of our own, so that after a framing error the bytes already read
/// can be searched for the next header instead of being lost.
struct FrameReader<R> {
    input: R,
    buf: Vec<u8>,
    /// Where unread bytes start in `buf`.
    start: usize,
    /// A framing error was answered: skip to the next `Content-Length:` before parsing.
    skip: bool,
    /// Errors since the last good message are the same bad message: answered once.
    resyncing: bool,
}

/// Where `needle` (lowercase ASCII) first occurs in `hay`, ignoring ASCII case.
fn find_ignore_case(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

/// Where the header block at the start of `unread` ends, and its body starts: the first blank
/// line (`\n\n` or `\n\r\n`) within [`MAX_HEADER_BYTES`]. Only the header's own bytes are
/// looked at: a client that sends thousands of requests at once fills the buffer with them, and
/// searching all of it for every message cost more than answering it.
fn header_end(unread: &[u8]) -> Option<(usize, usize)> {
    let window = &unread[..unread.len().min(MAX_HEADER_BYTES + 3)];
    let mut from = 0;
    while let Some(at) = memchr::memchr(b'\n', &window[from..]) {
        let i = from + at;
        if i > MAX_HEADER_BYTES {
            return None;
        }
        match &window[i + 1..] {
            [b'\n', ..] => return Some((i, i + 2)),
            [b'\r', b'\n', ..] => return Some((i, i + 3)),
            _ => from = i + 1,
        }
    }
    None
}

/// A header field name: an RFC 9110 token.
fn is_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The body length a header block declares, or why the block is garbage.
fn parse_headers(block: &[u8]) -> Result<usize, String> {
    let mut length = None;
    for line in block.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let text = std::str::from_utf8(line).map_err(|_| "a header line that is not UTF-8".to_string())?;
        let Some((name, value)) = text.split_once(':') else {
            return Err(format!("a header line without a colon: `{}`", text.escape_debug()));
        };
        if !is_token(name) {
            return Err(format!("`{}` is not a header name", name.escape_debug()));
        }
        if name.eq_ignore_ascii_case("content-length") {
            let n = value.trim().parse::<usize>().map_err(|e| format!("Content-Length `{}`: {e}", value.trim()))?;
            length = Some(n);
        }
    }
    length.ok_or_else(|| "a message without a valid Content-Length header".to_string())
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    fn new(input: R) -> Self {
        Self { input, buf: Vec::new(), start: 0, skip: false, resyncing: false }
    }

    fn unread(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Reads more input; false at the end of input or on a read error.
    async fn fill(&mut self) -> bool {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        // One huge message must not keep its memory for the rest of the session.
        if self.buf.capacity() > 4 << 20 && self.buf.len() < 1 << 20 {
            self.buf.shrink_to(1 << 20);
        }
        self.buf.reserve(64 * 1024);
        matches!(self.input.read_buf(&mut self.buf).await, Ok(n) if n > 0)
    }

    /// Discards input up to the next `Content-Length:` after the current position; false at
    /// the end of input.
    async fn resync(&mut self) -> bool {
        // Past the first byte, so a garbage block that begins with the header is not re-read.
        self.start = (self.start + 1).min(self.buf.len());
        loop {
            if let Some(at) = find_ignore_case(self.unread(), HEADER_NAME) {
                self.start += at;
                return true;
            }
            // Keep a tail that may be the start of the header cut by the read.
            let keep = (HEADER_NAME.len() - 1).min(self.unread().len());
            self.start = self.buf.len() - keep;
            if !self.fill().await {
                return false;
            }
        }
    }

    /// A garbage frame: answered once per run of garbage, then skipped.
    fn garbage(&mut self, why: String) -> Option<Frame> {
        self.skip = true;
        let first = !self.resyncing;
        self.resyncing = true;
        first.then_some(Frame::Bad(why))
    }

    /// The last body was not JSON: answered once, and its bytes are searched again like
    /// garbage, because a length too long swallowed the next message's header (whole, or cut
    /// by the body's end).
    fn bad_body(&mut self, body: &[u8]) -> bool {
        let mut rest = body.to_vec();
        rest.extend_from_slice(self.unread());
        self.buf = rest;
        self.start = 0;
        self.skip = true;
        let first = !self.resyncing;
        self.resyncing = true;
        first
    }

    /// A message was understood: the stream is in step again.
    fn in_step(&mut self) {
        self.resyncing = false;
    }

    async fn next(&mut self) -> Frame {
        loop {
            if self.skip {
                self.skip = false;
                if !self.resync().await {
                    return Frame::Eof;
                }
            }
            // Blank lines between messages are tolerated.
            while let Some(&b) = self.unread().first() {
                if b != b'\r' && b != b'\n' {
                    break;
                }
                self.start += 1;
            }
            let unread = self.unread();
            let Some((block_end, body_start)) = header_end(unread) else {
                if unread.len() > MAX_HEADER_BYTES {
                    if let Some(bad) = self.garbage(format!("no end of headers in {MAX_HEADER_BYTES} bytes")) {
                        return bad;
                    }
                    continue;
                }
                if !self.fill().await {
                    return Frame::Eof;
                }
                continue;
            };
            let length = match parse_headers(&unread[..block_end]) {
                Ok(n) => n,
                Err(why) => {
                    if let Some(bad) = self.garbage(why) {
                        return bad;
                    }
                    continue;
                }
            };
            self.start += body_start;
            if length > MAX_BODY_BYTES {
                return self.skip_body(length).await;
            }
            while self.unread().len() < length {
                if !self.fill().await {
                    return Frame::Eof;
                }
            }
            let body = self.buf[self.start..self.start + length].to_vec();
            self.start += length;
            return Frame::Body(body);
        }
    }

    /// Discards a body too large to buffer, as it arrives.
    async fn skip_body(&mut self, length: usize) -> Frame {
        let mut left = length;
        loop {
            let take = left.min(self.unread().len());
            self.start += take;
            left -= take;
            if left == 0 {
                return Frame::Bad(format!("a message of {length} bytes is larger than {MAX_BODY_BYTES} bytes"));
            }
            if !self.fill().await {
                return Frame::Eof;
            }
        }
    }
}

/// A message for the client.
enum Outgoing {
    Body(Vec<u8>),
    /// A remembered answer to the request `id` (JSON): sent inside its envelope without being
    /// copied (a `profile: "all"` answer is a quarter of a megabyte).
    Answer {
        answer: std::sync::Arc<[u8]>,
        id: Vec<u8>,
    },
}

impl Outgoing {
    /// The body's bytes, in order.
    fn pieces(&self) -> Vec<&[u8]> {
        match self {
            Self::Body(body) => vec![body],
            Self::Answer { answer, id } => vec![br#"{"jsonrpc":"2.0","result":"#, answer, br#","id":"#, id, b"}"],
        }
    }
}

/// Pieces at least this large are written from where they are, not copied into the batch.
const DIRECT_WRITE_BYTES: usize = 16 * 1024;

/// The most bytes of frames written in one go: answers queued while the client is slow to read
/// go out together, in one write instead of two per frame.
const WRITE_BATCH_BYTES: usize = 1 << 20;

/// Frames `message` into `batch`, writing out what is in it first when a large piece comes.
async fn frame_into<W: AsyncWrite + Unpin>(
    out: &mut W,
    batch: &mut Vec<u8>,
    message: &Outgoing,
) -> std::io::Result<()> {
    use std::io::Write as _;
    let pieces = message.pieces();
    let _ = write!(batch, "Content-Length: {}\r\n\r\n", pieces.iter().map(|p| p.len()).sum::<usize>());
    for piece in pieces {
        if piece.len() >= DIRECT_WRITE_BYTES {
            out.write_all(batch).await?;
            batch.clear();
            out.write_all(piece).await?;
        } else {
            batch.extend_from_slice(piece);
        }
    }
    Ok(())
}

/// Serves `service` over a byte stream until `exit` or the end of input.
pub async fn serve<I, O>(input: I, mut output: O, mut service: LspService<Server>, socket: ClientSocket)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, mut out_rx) = mpsc::channel::<Outgoing>(MAX_QUEUED_FRAMES);
    let writer = tokio::spawn(async move {
        let mut batch = Vec::new();
        while let Some(message) = out_rx.recv().await {
            let written = async {
                frame_into(&mut output, &mut batch, &message).await?;
                while batch.len() < WRITE_BATCH_BYTES
                    && let Ok(message) = out_rx.try_recv()
                {
                    frame_into(&mut output, &mut batch, &message).await?;
                }
                output.write_all(&batch).await?;
                output.flush().await
            };
            if let Err(e) = written.await {
                tracing::error!("cannot write to the client: {e}");
                break;
            }
            batch.clear();
            // One huge answer must not keep its memory for the rest of the session.
            if batch.capacity() > 4 * WRITE_BATCH_BYTES {
                batch.shrink_to(WRITE_BATCH_BYTES);
            }
        }
    });
    let send = |out_tx: mpsc::Sender<Outgoing>, v: Value| async move {
        if let Ok(body) = serde_json::to_vec(&v) {
            let _ = out_tx.send(Outgoing::Body(body)).await;
        }
    };

    // Server-to-client requests and notifications go straight out; client responses come back in.
    let (mut to_client, mut from_client) = socket.split();
    let outgoing = {
        let out_tx = out_tx.clone();
        tokio::spawn(async move {
            while let Some(req) = to_client.next().await {
                if let Ok(body) = serde_json::to_vec(&req)
                    && out_tx.send(Outgoing::Body(body)).await.is_err()
                {
                    break;
                }
            }
        })
    };

    // Handler futures, polled in arrival order, a few at once. While an answer waits for room
    // in the output, no further future is polled, this channel fills, and reading stops.
    let (fut_tx, fut_rx) = mpsc::channel::<futures::future::BoxFuture<'static, Option<Response>>>(100);
    // Messages handed to the service and not finished, but for `instructions/effective`
    // requests, which change nothing (in a server with workspace folders): a remembered answer is sent straight away only when there
    // is none, so it never overtakes an earlier message's effect (a didOpen's touch, say). An
    // `effective` request still being answered does not count: else one request that finds its
    // answer forgotten (an event moved the generation on) sends every request a client
    // pipelines behind it down the slow path, routed, cloned and serialized again.
    let in_flight = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let processing = {
        let out_tx = out_tx.clone();
        tokio::spawn(async move {
            let mut results = tokio_stream_from(fut_rx).buffer_unordered(MAX_CONCURRENCY);
            while let Some(result) = results.next().await {
                if let Some(resp) = result
                    && let Ok(body) = serde_json::to_vec(&resp)
                    && out_tx.send(Outgoing::Body(body)).await.is_err()
                {
                    break;
                }
            }
        })
    };

    let mut reader = FrameReader::new(input);
    loop {
        let body = match reader.next().await {
            Frame::Eof => break,
            Frame::Bad(why) => {
                tracing::warn!("unreadable message: {why}; skipping to the next Content-Length header");
                send(out_tx.clone(), error_response(Value::Null, PARSE_ERROR, format!("Parse error: {why}"))).await;
                continue;
            }
            Frame::Body(body) => body,
        };
        let value: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                if reader.bad_body(&body) {
                    tracing::warn!("a message that is not JSON: {e}; skipping to the next Content-Length header");
                    let message = format!("Parse error: the body is not JSON: {e}");
                    send(out_tx.clone(), error_response(Value::Null, PARSE_ERROR, message)).await;
                }
                continue;
            }
        };
        reader.in_step();
        let id = value.get("id").cloned().unwrap_or(Value::Null);
        let value = without_empty_params(value);
        if let Some(body) = remembered(&service, &value, &id, &in_flight) {
            if out_tx.send(body).await.is_err() {
                break;
            }
            continue;
        }
        if value.get("method").is_some() {
            let req: Request = match serde_json::from_value(value) {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!("an invalid request: {e}");
                    let message = format!("Invalid request: {e}; expected a JSON-RPC 2.0 request");
                    send(out_tx.clone(), error_response(id, INVALID_REQUEST, message)).await;
                    continue;
                }
            };
            let exit = req.method() == "exit";
            let counted = req.method() != super::ext::EFFECTIVE || !service.inner().effective_changes_nothing();
            let fut = match service.ready().await {
                Ok(svc) => svc.call(req),
                Err(e) => {
                    tracing::error!("the service stopped: {e}");
                    break;
                }
            };
            if counted {
                in_flight.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            let done = in_flight.clone();
            let boxed: futures::future::BoxFuture<'static, Option<Response>> = Box::pin(async move {
                let response = fut.await.unwrap_or(None);
                if counted {
                    done.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                }
                response
            });
            if fut_tx.send(boxed).await.is_err() || exit {
                break;
            }
        } else {
            match serde_json::from_value::<Response>(value) {
                Ok(resp) => {
                    if from_client.send(resp).await.is_err() {
                        tracing::warn!("a response to no pending request");
                    }
                }
                Err(e) => {
                    tracing::warn!("a message that is neither request nor response: {e}");
                    let message = format!("Invalid request: {e}; expected a JSON-RPC 2.0 request or response");
                    send(out_tx.clone(), error_response(id, INVALID_REQUEST, message)).await;
                }
            }
        }
    }
    drop(fut_tx);
    // Let what is queued reach the client, but never wait long: the process must end.
    let _ = tokio::time::timeout(FLUSH_GRACE, processing).await;
    outgoing.abort();
    drop(out_tx);
    let _ = tokio::time::timeout(FLUSH_GRACE, writer).await;
}

/// The response to a warm `instructions/effective` request, built from the answer the server
/// remembers as bytes (no routing, no clone, no serialization), when nothing is in flight.
fn remembered(
    service: &LspService<Server>,
    value: &Value,
    id: &Value,
    in_flight: &std::sync::atomic::AtomicUsize,
) -> Option<Outgoing> {
    if value.get("method")? != super::ext::EFFECTIVE
        || !(id.is_u64() || id.is_string())
        || in_flight.load(std::sync::atomic::Ordering::SeqCst) != 0
    {
        return None;
    }
    let answer = service.inner().remembered_answer(value.get("params").unwrap_or(&Value::Null))?;
    Some(Outgoing::Answer { answer, id: serde_json::to_vec(id).ok()? })
}

/// `shutdown` and `exit` have no params; lsp-mode sends `{}` (others `null`). The router would answer
/// that with -32602, and the client, unable to shut the server down, kills it.
fn without_empty_params(mut value: Value) -> Value {
    let method = value.get("method").and_then(Value::as_str);
    if matches!(method, Some("shutdown" | "exit"))
        && let Some(message) = value.as_object_mut()
    {
        let empty = match message.get("params") {
            Some(Value::Null) => true,
            Some(Value::Object(params)) => params.is_empty(),
            _ => false,
        };
        if empty {
            message.remove("params");
        }
    }
    value
}

/// An mpsc receiver as a stream.
fn tokio_stream_from<T: Send + 'static>(mut rx: mpsc::Receiver<T>) -> impl futures::Stream<Item = T> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame of `input`, with garbage and bad bodies handled as `serve` does: what the
    /// client is told, in order.
    async fn frames(input: &[u8]) -> Vec<String> {
        let mut reader = FrameReader::new(input);
        let mut out = Vec::new();
        loop {
            match reader.next().await {
                Frame::Eof => return out,
                Frame::Bad(_) => out.push("bad".into()),
                Frame::Body(body) => match serde_json::from_slice::<Value>(&body) {
                    Ok(v) => {
                        reader.in_step();
                        out.push(v.to_string());
                    }
                    Err(_) => {
                        if reader.bad_body(&body) {
                            out.push("bad".into());
                        }
                    }
                },
            }
        }
    }

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[tokio::test]
    async fn headers_are_case_insensitive_and_other_headers_are_ignored() {
        let input = "content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}\r\n\r\n";
        assert_eq!(frames(format!("{input}{}", framed("[1]")).as_bytes()).await, ["{}", "[1]"]);
    }

    #[tokio::test]
    async fn garbage_is_answered_once_and_the_header_inside_a_line_is_found() {
        let input =
            format!("junk \"}}}} more junk\r\nstill junk\r\n\r\nxxContent-Length: 2\r\n\r\n{{}}{}", framed("[2]"));
        assert_eq!(frames(input.as_bytes()).await, ["bad", "{}", "[2]"]);
    }

    #[tokio::test]
    async fn a_body_that_swallowed_the_next_header_gives_it_back() {
        let next = framed("[3]");
        let input = format!("Content-Length: {}\r\n\r\n{{}}{next}", 2 + 10);
        assert_eq!(frames(input.as_bytes()).await, ["bad", "[3]"]);
    }

    #[tokio::test]
    async fn many_messages_read_at_once_come_out_whole_and_in_order() {
        let bodies: Vec<String> = (0..2000).map(|i| format!("[{i}]")).collect();
        // Both line ends, and a header block that ends with a bare `\n\n`.
        let input: String = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| match i % 3 {
                0 => framed(b),
                1 => format!("Content-Length: {}\n\n{b}", b.len()),
                _ => format!("Content-Type: x\r\nContent-Length: {}\n\r\n{b}", b.len()),
            })
            .collect();
        assert_eq!(frames(input.as_bytes()).await, bodies);
    }

    #[test]
    fn a_header_block_ends_at_its_first_blank_line_within_the_bound() {
        assert_eq!(header_end(b"A: 1\r\n\r\n{}\n\n"), Some((5, 8)));
        assert_eq!(header_end(b"A: 1\n\n{}\r\n\r\n"), Some((4, 6)));
        assert_eq!(header_end(b"A: 1\r\n\r"), None, "the rest of the line end is still to come");
        let long = format!("A: {}\r\n\r\n", "x".repeat(MAX_HEADER_BYTES));
        assert_eq!(header_end(long.as_bytes()), None, "past the bound it is no header");
    }

    #[tokio::test]
    async fn a_header_block_without_an_end_is_garbage() {
        let input = format!("Content-Length: 2{}\r\n\r\n{{}}{}", "x".repeat(MAX_HEADER_BYTES + 10), framed("[4]"));
        assert_eq!(frames(input.as_bytes()).await, ["bad", "[4]"]);
    }
}
