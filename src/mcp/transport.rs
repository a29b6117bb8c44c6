//! The server's stdio transport: newline-delimited JSON-RPC, read with the SDK's own codec (so
//! messages parse exactly as its `AsyncRwTransport` parses them), with the two bounds that
//! transport lacks (see `docs/mcp.md`, "Limits"):
//!
//! - **Waiting answers.** The SDK reads as fast as the client writes and spawns a task per request
//!   and per answer, so a client that sends calls and never reads what comes back makes the server
//!   grow until it dies. Here every request read takes one of [`MAX_WAITING_ANSWERS`] permits, given
//!   back once its answer is written: when all are taken, the server stops reading, the client's
//!   writes block, and memory stays bounded (the language server's transport keeps the same 16).
//! - **Line length.** A line longer than [`MAX_LINE_BYTES`] is skipped as the SDK skips it, but
//!   answered with a parse error that says so (the SDK only logs it, and the client waits forever).
//!
//! Every request is answered exactly once, which the permits rely on: a second request with an id
//! still waiting for its answer is refused here (the SDK would run it and drop one of the two
//! answers), and `notifications/cancelled` for a waiting request is kept from the SDK (which would
//! drop the answer): the work of a call is not interruptible anyway, and its answer is not written.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{JsonRpcMessageCodec, JsonRpcMessageCodecError};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::bytes::BytesMut;
use tokio_util::codec::Decoder;

use crate::jsonrpc::{INVALID_REQUEST, PARSE_ERROR, error_response};

/// The longest request line read: the SDK's own default, and as much as its HTTP transport takes.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Requests read and not yet answered; past this, the server stops reading.
pub const MAX_WAITING_ANSWERS: usize = crate::jsonrpc::MAX_WAITING_ANSWERS;

type Rx = RxJsonRpcMessage<RoleServer>;
type Tx = TxJsonRpcMessage<RoleServer>;

/// The requests waiting for their answers, each holding its permit.
#[derive(Default)]
struct Waiting {
    by_id: Mutex<HashMap<RequestId, Answer>>,
}

struct Answer {
    _permit: OwnedSemaphorePermit,
    /// The client cancelled the request: its answer is not written.
    cancelled: bool,
}

impl Waiting {
    fn lock(&self) -> MutexGuard<'_, HashMap<RequestId, Answer>> {
        // A panic elsewhere leaves the map usable: keep serving.
        self.by_id.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Gives a request's permit back when its answer was written, failed, or was dropped unwritten
/// (a send future dropped at shutdown included).
struct Done(Arc<Waiting>, Option<RequestId>);

impl Drop for Done {
    fn drop(&mut self) {
        if let Some(id) = &self.1 {
            self.0.lock().remove(id);
        }
    }
}

/// What one read of the input gave.
enum Read {
    /// Boxed: a message is hundreds of bytes, the other outcomes a few.
    Message(Box<Rx>),
    TooLong,
    /// Well-formed JSON that is no message (why).
    Invalid(String),
    Eof,
}

/// The bounded stdio transport.
pub struct Bounded<R, W> {
    input: R,
    buf: BytesMut,
    codec: JsonRpcMessageCodec<Rx>,
    output: Arc<tokio::sync::Mutex<Option<W>>>,
    permits: Arc<Semaphore>,
    waiting: Arc<Waiting>,
    /// A permit taken before a read, kept for the next one when the read gave no request.
    spare: Option<OwnedSemaphorePermit>,
    /// An error the transport answered by itself, being written: finished before anything else is
    /// read (a task of its own, so that a `receive` cancelled by the SDK never cuts it in half).
    owed: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl<R, W> Bounded<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub fn new(input: R, output: W) -> Self {
        Self {
            input,
            buf: BytesMut::new(),
            codec: JsonRpcMessageCodec::new_with_max_length(MAX_LINE_BYTES),
            output: Arc::new(tokio::sync::Mutex::new(Some(output))),
            permits: Arc::new(Semaphore::new(MAX_WAITING_ANSWERS)),
            waiting: Arc::default(),
            spare: None,
            owed: None,
        }
    }

    /// The next message, or what kept a line from being one. Reads only when the buffer holds no
    /// whole line, so at most one line (and one read) is buffered.
    async fn read(&mut self) -> Read {
        loop {
            let before = self.buf.len();
            match self.codec.decode(&mut self.buf) {
                Ok(Some(message)) => return Read::Message(Box::new(message)),
                Err(JsonRpcMessageCodecError::MaxLineLengthExceeded) => return Read::TooLong,
                Err(JsonRpcMessageCodecError::Serde(e)) => match e.classify() {
                    // Not JSON: no id to answer, and answering garbage can start an error storm
                    // with a client that echoes it; the SDKs ignore it, and so does this.
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                        tracing::debug!("ignoring a line that is not JSON: {e}");
                    }
                    _ => return Read::Invalid(e.to_string()),
                },
                Err(e) => return Read::Invalid(e.to_string()),
                // A line was consumed (a notification the SDK ignores): there may be another.
                Ok(None) if self.buf.len() < before => {}
                Ok(None) => {
                    self.buf.reserve(64 * 1024);
                    match self.input.read_buf(&mut self.buf).await {
                        // A last line without its newline is still a message: end it, once.
                        Ok(0) if !self.buf.is_empty() && !self.buf.ends_with(b"\n") => {
                            self.buf.extend_from_slice(b"\n")
                        }
                        Ok(0) => return Read::Eof,
                        Ok(_) => {}
                        Err(e) => {
                            tracing::error!("cannot read from the client: {e}");
                            return Read::Eof;
                        }
                    }
                }
            }
        }
    }

    /// Answers a line with an error by itself, with the id `null` (JSON-RPC 2.0's id for a
    /// request whose id cannot be read; the SDK would leave it out).
    fn owe(&mut self, code: i64, message: String) {
        let mut line = error_response(serde_json::Value::Null, code, message).to_string().into_bytes();
        line.push(b'\n');
        let output = self.output.clone();
        self.owed = Some(tokio::spawn(async move { write_line(&output, &line).await }));
    }

    /// Takes a request's permit, or refuses a request whose id still waits for its answer.
    fn admit(&mut self, id: &RequestId) -> bool {
        let mut waiting = self.waiting.lock();
        if waiting.contains_key(id) {
            return false;
        }
        if let Some(permit) = self.spare.take() {
            waiting.insert(id.clone(), Answer { _permit: permit, cancelled: false });
        }
        true
    }

    /// Marks a waiting request cancelled; false when no such request waits.
    fn cancel(&self, id: &RequestId) -> bool {
        self.waiting.lock().get_mut(id).map(|a| a.cancelled = true).is_some()
    }
}

/// One message as a line of JSON.
fn line_of(message: &Tx) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    Ok(line)
}

async fn write_line<W: AsyncWrite + Unpin>(output: &tokio::sync::Mutex<Option<W>>, line: &[u8]) -> std::io::Result<()> {
    let mut output = output.lock().await;
    let out = output.as_mut().ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotConnected, "closed"))?;
    out.write_all(line).await?;
    out.flush().await
}

impl<R, W> Transport<RoleServer> for Bounded<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(&mut self, item: Tx) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let id = match &item {
            JsonRpcMessage::Response(r) => Some(r.id.clone()),
            JsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        let line = line_of(&item);
        let output = self.output.clone();
        let done = Done(self.waiting.clone(), id);
        async move {
            let cancelled = done.1.as_ref().is_some_and(|id| done.0.lock().get(id).is_some_and(|a| a.cancelled));
            if cancelled {
                return Ok(());
            }
            write_line(&output, &line?).await
        }
    }

    /// Cancel-safe, as the SDK polls it beside other events: the permit, the buffered input and
    /// an owed answer all live in `self` between polls.
    async fn receive(&mut self) -> Option<Rx> {
        loop {
            if let Some(owed) = &mut self.owed {
                let written = owed.await;
                self.owed = None;
                if !matches!(written, Ok(Ok(()))) {
                    tracing::error!("cannot write to the client; closing");
                    return None;
                }
            }
            if self.spare.is_none() {
                // Waits while MAX_WAITING_ANSWERS requests wait for the client to read.
                self.spare = Some(self.permits.clone().acquire_owned().await.ok()?);
            }
            let message = match self.read().await {
                Read::Message(message) => *message,
                Read::Eof => return None,
                Read::TooLong => {
                    tracing::warn!("a request line longer than {MAX_LINE_BYTES} bytes; skipped");
                    let message = format!(
                        "Parse error: the line is longer than {MAX_LINE_BYTES} bytes (16 MiB), the most this server \
                         reads in one message; it was skipped"
                    );
                    self.owe(PARSE_ERROR, message);
                    continue;
                }
                Read::Invalid(why) => {
                    tracing::warn!("a line that is no JSON-RPC message: {why}");
                    self.owe(INVALID_REQUEST, format!("Invalid request: {why}; expected a JSON-RPC 2.0 message"));
                    continue;
                }
            };
            match message {
                JsonRpcMessage::Request(r) => {
                    if self.admit(&r.id) {
                        return Some(JsonRpcMessage::Request(r));
                    }
                    tracing::warn!("a request with the id {} of one still running; refused", r.id);
                    let message = format!("Invalid request: the id {} is the id of a request not answered yet", r.id);
                    self.owe(INVALID_REQUEST, message);
                }
                JsonRpcMessage::Notification(n) => {
                    if let ClientNotification::CancelledNotification(c) = &n.notification
                        && c.params.request_id.as_ref().is_some_and(|id| self.cancel(id))
                    {
                        continue;
                    }
                    return Some(JsonRpcMessage::Notification(n));
                }
                other => return Some(other),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.output.lock().await.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{EmptyResult, ServerResult};
    use tokio::io::AsyncBufReadExt;

    /// A request whose id still waits is refused, and a cancelled request's answer is not
    /// written, but gives its permit back.
    #[tokio::test]
    async fn every_request_is_answered_once_and_a_cancelled_one_not_at_all() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            "\n",
        );
        let (out, theirs) = tokio::io::duplex(64 * 1024);
        let mut t = Bounded::new(input.as_bytes(), out);
        assert!(matches!(t.receive().await, Some(JsonRpcMessage::Request(r)) if r.id == RequestId::Number(1)));
        // The second id 1 is refused (answered by the transport), the cancel is kept back.
        assert!(matches!(t.receive().await, Some(JsonRpcMessage::Request(r)) if r.id == RequestId::Number(2)));
        assert_eq!(t.permits.available_permits(), MAX_WAITING_ANSWERS - 2);
        let answer = |id| Tx::response(ServerResult::EmptyResult(EmptyResult {}), RequestId::Number(id));
        assert!(t.send(answer(1)).await.is_ok());
        assert!(t.send(answer(2)).await.is_ok());
        assert_eq!(t.permits.available_permits(), MAX_WAITING_ANSWERS);
        assert!(t.receive().await.is_none(), "the end of input");
        drop(t);
        let mut lines = tokio::io::BufReader::new(theirs).lines();
        let mut written = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            written.push(line);
        }
        assert_eq!(written.len(), 2, "{written:?}");
        assert!(written[0].contains("not answered yet") && written[0].contains(r#""id":null"#), "{}", written[0]);
        assert!(written[1].contains(r#""id":2"#), "{}", written[1]);
    }
}
