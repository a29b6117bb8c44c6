//! The client's roots over time: asked with `roots/list`, kept until the client says they
//! changed, and never dropped meanwhile, so that a call right after
//! `notifications/roots/list_changed` is answered under the new roots, not under none.
//!
//! The SDK hands every message to a task of its own, so a notification's handler may run after
//! the call the client sent behind it. Only the transport sees messages in their order: it counts
//! the changes as it reads them ([`Watching`]), and a call that sees more changes than its roots
//! were asked after asks again before it is answered ([`Roots::stale`]).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// How many `notifications/roots/list_changed` the client has sent so far, counted in the order
/// its messages arrive.
#[derive(Clone, Debug, Default)]
pub struct Changes(Arc<AtomicU64>);

impl Changes {
    pub fn seen(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    fn add(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A transport that counts roots changes as it reads them, before any later message is read
/// (and so before any call that follows is handled).
pub struct Watching<T> {
    inner: T,
    changes: Changes,
}

impl<T> Watching<T> {
    pub fn new(inner: T, changes: Changes) -> Self {
        Self { inner, changes }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Watching<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    /// Cancelled only while the inner read is pending (which resumes where it was): the count is
    /// taken in the same poll that returns the message.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let message = self.inner.receive().await;
        if let Some(JsonRpcMessage::Notification(n)) = &message
            && matches!(n.notification, ClientNotification::RootsListChangedNotification(_))
        {
            self.changes.add();
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The roots the sessions answer under, and how many changes they were asked after.
#[derive(Debug, Default)]
pub struct Roots {
    list: Option<Vec<PathBuf>>,
    asked_after: u64,
}

impl Roots {
    /// The roots as known (empty before the first call).
    pub fn list(&self) -> &[PathBuf] {
        self.list.as_deref().unwrap_or_default()
    }

    /// Whether they must be asked (again) before a call is answered, `changes` having been seen.
    pub fn stale(&self, changes: u64) -> bool {
        self.list.is_none() || self.asked_after < changes
    }

    /// Takes the client's answer to `roots/list`, asked after `changes` changes: `Some` roots
    /// (none: `cwd`), or `None` when the client did not answer, which keeps the roots it had
    /// (`cwd` when there were none yet) rather than losing them.
    pub fn answered(&mut self, changes: u64, listed: Option<Vec<PathBuf>>, cwd: &Path) {
        let list = match listed {
            Some(list) if !list.is_empty() => list,
            Some(_) => vec![cwd.to_path_buf()],
            None => self.list.take().unwrap_or_else(|| vec![cwd.to_path_buf()]),
        };
        tracing::debug!("roots after {changes} changes: {list:?}");
        self.list = Some(list);
        self.asked_after = self.asked_after.max(changes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(roots: &Roots) -> Vec<&str> {
        roots.list().iter().filter_map(|p| p.to_str()).collect()
    }

    #[test]
    fn roots_are_kept_until_the_new_list_is_known() {
        let cwd = Path::new("/cwd");
        let mut roots = Roots::default();
        assert!(roots.stale(0), "asked at the first call");
        roots.answered(0, Some(vec![PathBuf::from("/a")]), cwd);
        assert!(!roots.stale(0));
        // A change makes them stale, but they stay until the new list comes.
        assert!(roots.stale(1));
        assert_eq!(list(&roots), ["/a"]);
        roots.answered(1, Some(vec![PathBuf::from("/b")]), cwd);
        assert_eq!((list(&roots), roots.stale(1)), (vec!["/b"], false));
        // No answer: the roots stay as they were (not asked again for that change).
        roots.answered(2, None, cwd);
        assert_eq!((list(&roots), roots.stale(2)), (vec!["/b"], false));
        // A list without a local directory: the working directory.
        roots.answered(3, Some(Vec::new()), cwd);
        assert_eq!(list(&roots), ["/cwd"]);
        // An answer to an older question never moves the count back.
        roots.answered(1, Some(vec![PathBuf::from("/a")]), cwd);
        assert!(!roots.stale(3));
        // No answer at the first call: the working directory.
        let mut fresh = Roots::default();
        fresh.answered(0, None, cwd);
        assert_eq!(list(&fresh), ["/cwd"]);
    }
}
