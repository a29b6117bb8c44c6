//! The protocol edge: server setup, handlers, conversions and custom methods. No discovery
//! logic lives here.

mod background;
pub mod convert;
mod diagnostics;
pub mod ext;
mod handlers;
mod hover;
pub mod server;
mod shared;
mod state;
pub mod transport;

use std::process::ExitCode;

use tower_lsp_server::{ClientSocket, LspService};

use crate::chain::settings::Env;
pub use server::Server;

/// The service with every custom method registered.
pub fn service(env: Env) -> (LspService<Server>, ClientSocket) {
    LspService::build(|client| Server::new(client, env))
        .custom_method(ext::EFFECTIVE, Server::effective)
        .custom_method(ext::TRANSITIONS, Server::transitions)
        .custom_method(ext::TOUCH, Server::touch_notification)
        .finish()
}

type Input = Box<dyn tokio::io::AsyncRead + Unpin + Send>;
type Output = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;

/// stdin and stdout as readiness-driven pipes or sockets when they are (as editors and libuv
/// clients give them), so a request is read, answered and written on one thread without waking
/// another; anything else (a file, a terminal) goes through tokio's blocking stdio.
fn stdio() -> (Input, Output) {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::FileTypeExt;
        let kind = |fd: std::os::fd::BorrowedFd<'_>| {
            let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
            let t = file.metadata().ok()?.file_type();
            Some((t.is_fifo(), t.is_socket(), file))
        };
        // A socket (libuv gives one) registered with the runtime, for reading or writing.
        let socket = |f: std::fs::File| {
            let s = std::os::unix::net::UnixStream::from(std::os::fd::OwnedFd::from(f));
            s.set_nonblocking(true).ok().and_then(|()| tokio::net::UnixStream::from_std(s).ok())
        };
        let input: Option<Input> = match kind(std::io::stdin().as_fd()) {
            Some((true, _, f)) => tokio::net::unix::pipe::Receiver::from_file(f).ok().map(|r| Box::new(r) as Input),
            Some((_, true, f)) => socket(f).map(|s| Box::new(s) as Input),
            _ => None,
        };
        let output: Option<Output> = match kind(std::io::stdout().as_fd()) {
            Some((true, _, f)) => {
                grow_pipe(&f);
                tokio::net::unix::pipe::Sender::from_file(f).ok().map(|w| Box::new(w) as Output)
            }
            Some((_, true, f)) => socket(f).map(|s| Box::new(s) as Output),
            _ => None,
        };
        (input.unwrap_or_else(|| Box::new(tokio::io::stdin())), output.unwrap_or_else(|| Box::new(tokio::io::stdout())))
    }
    #[cfg(not(unix))]
    {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }
}

/// Asks for a pipe to the client of a megabyte (Linux's default is 64 KiB): a `profile: "all"`
/// answer of a quarter of a megabyte then goes out in one write, instead of waking the client
/// and waiting for it to read four times. Refused (a system's lower limit), the pipe stays as
/// it is.
#[cfg(target_os = "linux")]
fn grow_pipe(pipe: &std::fs::File) {
    let _ = rustix::pipe::fcntl_setpipe_size(pipe, 1 << 20);
}

#[cfg(all(unix, not(target_os = "linux")))]
fn grow_pipe(_: &std::fs::File) {}

/// Serves the language server on stdio until `exit` or end of input. The exit code is 0 when
/// `shutdown` came first, else 1 (as the LSP specification asks).
pub fn serve_stdio() -> ExitCode {
    // One thread serves the protocol (no cross-thread wake-ups on the hot path); diagnostics
    // passes and file watching run on their own threads.
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("instructions-lsp: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let clean = runtime.block_on(async {
        let (service, socket) = service(Env::from_process());
        let shared = service.inner().shared();
        let (input, output) = stdio();
        transport::serve(input, output, service, socket).await;
        // `exit` without `shutdown`, or the end of input: the sessions' ledgers still count.
        let flushing = shared.clone();
        let _ = tokio::task::spawn_blocking(move || flushing.flush_ledgers()).await;
        shared.shut_down()
    });
    // Background tasks (diagnostics, watchers) must not delay the exit.
    runtime.shutdown_background();
    if clean { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// The server's own layering, held by a test: the state (`shared.rs`, `state.rs`) and the
/// features it runs (`diagnostics.rs`, `hover.rs`) never call a handler; only `server.rs`
/// dispatches to `handlers/`. See docs/architecture.md.
#[cfg(test)]
mod layering {
    use std::path::Path;

    #[test]
    fn only_the_server_names_the_handlers() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lsp");
        let mut broken = Vec::new();
        let mut read = 0;
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "server.rs" || !name.ends_with(".rs") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            read += 1;
            // Split so that this test does not name what it looks for.
            let named = [concat!("super::", "handlers"), concat!("lsp::", "handlers"), concat!("use ", "handlers")];
            for (i, line) in text.lines().enumerate() {
                if named.iter().any(|n| line.contains(n)) {
                    broken.push(format!("src/lsp/{name}:{}: {}", i + 1, line.trim()));
                }
            }
        }
        assert!(read >= 6, "the files of src/lsp were not read");
        assert!(broken.is_empty(), "only server.rs may call a handler:\n{}", broken.join("\n"));
    }
}
