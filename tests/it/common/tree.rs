//! Real directory trees in temp dirs, with a private home so the user's own files never leak in.

use std::fs;
use std::path::{Path, PathBuf};

pub struct Tree {
    pub dir: tempfile::TempDir,
}

impl Tree {
    /// An empty tree with `home/` and `r/` (the project, with a `.git` directory).
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("home")).expect("home");
        fs::create_dir_all(dir.path().join("r/.git")).expect("project");
        Self { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn home(&self) -> PathBuf {
        self.path("home")
    }

    pub fn root(&self) -> PathBuf {
        self.path("r")
    }

    /// Writes a file (creating parents) and returns its path.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("parent");
        }
        fs::write(&path, content).expect("write");
        path
    }

    /// The text of a file.
    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel)).expect("read")
    }

    pub fn mkdir(&self, rel: &str) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(&path).expect("mkdir");
        path
    }

    #[cfg(unix)]
    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) -> PathBuf {
        let path = self.path(rel);
        std::os::unix::fs::symlink(target, &path).expect("symlink");
        path
    }
}
