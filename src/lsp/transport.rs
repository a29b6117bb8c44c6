//! Our own stdio transport. tower-lsp-server's reader ends its input stream at the first
//! decoding error (tokio-util's `FramedRead` stops after an error), so one malformed message
//! would silently stop the server. Here a bad frame gets a JSON-RPC error and reading goes on.
//! Futures are polled in arrival order, up to a few at once, as tower-lsp-server does, so the
//! synchronous part of each handler runs in the order the client sent its messages.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tower::{Service, ServiceExt};
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::{ClientSocket, LspService};

use super::Server;

const MAX_CONCURRENCY: usize = 4;
/// A header line longer than this is garbage, not a header.
const MAX_HEADER_LINE_BYTES: usize = 8 * 1024;
/// A body larger than this is refused (and skipped) rather than buffered.
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;
/// How long queued output may take to flush after `exit` or the end of input.
const FLUSH_GRACE: Duration = Duration::from_millis(200);

/// One frame read from the input.
enum Frame {
    Body(Vec<u8>),
    /// A frame that cannot be read: the error to answer with.
    Bad(String),
    Eof,
}

async fn read_frame<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Frame {
    let mut length: Option<usize> = None;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        let read = (&mut *reader).take(MAX_HEADER_LINE_BYTES as u64).read_until(b'\n', &mut line).await;
        match read {
            Ok(0) | Err(_) => return Frame::Eof,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = text.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok();
            }
        }
    }
    let Some(length) = length else {
        return Frame::Bad("a message without a valid Content-Length header".into());
    };
    if length > MAX_BODY_BYTES {
        let skipped = tokio::io::copy(&mut (&mut *reader).take(length as u64), &mut tokio::io::sink()).await;
        if skipped.is_err() {
            return Frame::Eof;
        }
        return Frame::Bad(format!("a message of {length} bytes is larger than {MAX_BODY_BYTES} bytes"));
    }
    let mut body = vec![0; length];
    match reader.read_exact(&mut body).await {
        Ok(_) => Frame::Body(body),
        Err(_) => Frame::Eof,
    }
}

fn error_response(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

async fn write_frame<W: AsyncWrite + Unpin>(out: &mut W, body: &[u8]) -> std::io::Result<()> {
    out.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes()).await?;
    out.write_all(body).await?;
    out.flush().await
}

/// Serves `service` over a byte stream until `exit` or the end of input.
pub async fn serve<I, O>(input: I, mut output: O, mut service: LspService<Server>, socket: ClientSocket)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        while let Some(body) = out_rx.recv().await {
            if let Err(e) = write_frame(&mut output, &body).await {
                tracing::error!("cannot write to the client: {e}");
                break;
            }
        }
    });
    let send = {
        let out_tx = out_tx.clone();
        move |v: &Value| {
            if let Ok(body) = serde_json::to_vec(v) {
                let _ = out_tx.send(body);
            }
        }
    };

    // Server-to-client requests and notifications go straight out; client responses come back in.
    let (mut to_client, mut from_client) = socket.split();
    let outgoing = {
        let out_tx = out_tx.clone();
        tokio::spawn(async move {
            while let Some(req) = to_client.next().await {
                if let Ok(body) = serde_json::to_vec(&req) {
                    let _ = out_tx.send(body);
                }
            }
        })
    };

    // Handler futures, polled in arrival order, a few at once.
    let (fut_tx, fut_rx) = mpsc::channel::<futures::future::BoxFuture<'static, Option<Response>>>(100);
    let processing = {
        let out_tx = out_tx.clone();
        tokio::spawn(async move {
            let mut results = tokio_stream_from(fut_rx).buffer_unordered(MAX_CONCURRENCY);
            while let Some(result) = results.next().await {
                if let Some(resp) = result {
                    if let Ok(body) = serde_json::to_vec(&resp) {
                        let _ = out_tx.send(body);
                    }
                }
            }
        })
    };

    let mut reader = BufReader::new(input);
    loop {
        let body = match read_frame(&mut reader).await {
            Frame::Eof => break,
            Frame::Bad(why) => {
                tracing::warn!("unreadable message: {why}");
                send(&error_response(Value::Null, -32700, format!("Parse error: {why}")));
                continue;
            }
            Frame::Body(body) => body,
        };
        let value: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!("a message that is not JSON: {e}");
                send(&error_response(Value::Null, -32700, format!("Parse error: the body is not JSON: {e}")));
                continue;
            }
        };
        let id = value.get("id").cloned().unwrap_or(Value::Null);
        let value = without_empty_params(value);
        if value.get("method").is_some() {
            let req: Request = match serde_json::from_value(value) {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!("an invalid request: {e}");
                    send(&error_response(id, -32600, format!("Invalid request: {e}; expected a JSON-RPC 2.0 request")));
                    continue;
                }
            };
            let exit = req.method() == "exit";
            let fut = match service.ready().await {
                Ok(svc) => svc.call(req),
                Err(e) => {
                    tracing::error!("the service stopped: {e}");
                    break;
                }
            };
            let boxed: futures::future::BoxFuture<'static, Option<Response>> =
                Box::pin(async move { fut.await.unwrap_or(None) });
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
                    send(&error_response(
                        id,
                        -32600,
                        format!("Invalid request: {e}; expected a JSON-RPC 2.0 request or response"),
                    ));
                }
            }
        }
    }
    drop(fut_tx);
    drop(send);
    // Let what is queued reach the client, but never wait long: the process must end.
    let _ = tokio::time::timeout(FLUSH_GRACE, processing).await;
    outgoing.abort();
    drop(out_tx);
    let _ = tokio::time::timeout(FLUSH_GRACE, writer).await;
}

/// `shutdown` and `exit` have no params; lsp-mode sends `{}` (others `null`). The router would answer
/// that with -32602, and the client, unable to shut the server down, kills it.
fn without_empty_params(mut value: Value) -> Value {
    let method = value.get("method").and_then(Value::as_str);
    if matches!(method, Some("shutdown" | "exit")) {
        if let Some(message) = value.as_object_mut() {
            let empty = match message.get("params") {
                Some(Value::Null) => true,
                Some(Value::Object(params)) => params.is_empty(),
                _ => false,
            };
            if empty {
                message.remove("params");
            }
        }
    }
    value
}

/// An mpsc receiver as a stream.
fn tokio_stream_from<T: Send + 'static>(mut rx: mpsc::Receiver<T>) -> impl futures::Stream<Item = T> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}
