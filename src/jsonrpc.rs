//! What both servers' transports share about JSON-RPC 2.0, whatever their framing (the language
//! server's `Content-Length` headers, the MCP server's lines): the error codes they answer
//! unreadable input with, the shape of that answer, and how many answers may wait for a client.

use serde_json::{Value, json};

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;

/// Answers waiting for the client to read them (or requests read and not yet answered); beyond
/// this, a server stops reading its input, so a client that never reads cannot make it grow.
pub const MAX_WAITING_ANSWERS: usize = 16;

/// An error response; `id` is `null` when the request's id could not be read, as JSON-RPC 2.0
/// requires.
pub fn error_response(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
