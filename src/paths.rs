//! Path helpers shared by every layer: lexical normalisation, `/`-joined display paths and
//! `file://` URIs (kept here so that the engine needs no LSP crate).

use std::path::{Component, Path, PathBuf};

/// Removes `.` and resolves `..` lexically; never touches the disk.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Makes a path absolute against the current directory, then normalises it.
pub fn absolute(path: &Path) -> std::io::Result<PathBuf> {
    Ok(normalize(&std::path::absolute(path)?))
}

/// The normal components of a path joined with `/` (display paths on every platform).
pub fn slash_join(path: &Path) -> String {
    let mut out = String::new();
    for component in path.components() {
        match component {
            Component::RootDir => {
                if out.is_empty() {
                    out.push('/');
                }
                continue;
            }
            Component::Prefix(p) => {
                out.push_str(&p.as_os_str().to_string_lossy());
                continue;
            }
            Component::CurDir => continue,
            Component::ParentDir => {
                push_segment(&mut out, "..");
                continue;
            }
            Component::Normal(name) => push_segment(&mut out, &name.to_string_lossy()),
        }
    }
    out
}

fn push_segment(out: &mut String, segment: &str) {
    if !out.is_empty() && !out.ends_with('/') {
        out.push('/');
    }
    out.push_str(segment);
}

/// A `file://` URI for an absolute path, percent-encoding everything but unreserved
/// characters and `/`. On Unix the path's raw bytes are encoded, so a name that is not UTF-8
/// round-trips through [`uri_to_path`].
pub fn path_to_uri(path: &Path) -> String {
    #[cfg(unix)]
    let bytes: Vec<u8> = {
        use std::os::unix::ffi::OsStrExt;
        normalize(path).as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes: Vec<u8> = slash_join(path).into_bytes();
    let mut out = String::with_capacity(bytes.len() + 8);
    out.push_str("file://");
    if bytes.first() != Some(&b'/') {
        out.push('/');
    }
    for b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else if b == b':' && cfg!(windows) {
            out.push(':');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path of a `file://` URI (with or without an authority of `localhost`); `None` for other
/// schemes or malformed escapes.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let bytes = percent_decode(rest)?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(normalize(Path::new(&std::ffi::OsString::from_vec(bytes))))
    }
    #[cfg(not(unix))]
    {
        let text = String::from_utf8(bytes).ok()?;
        let text = text.strip_prefix('/').filter(|t| t.get(1..2) == Some(":")).unwrap_or(&text);
        Some(normalize(Path::new(text)))
    }
}

fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dots() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }

    #[test]
    fn uri_round_trip_with_spaces_and_unicode() {
        let p = Path::new("/tmp/my dir/ünï #1/AGENTS.md");
        let uri = path_to_uri(p);
        assert_eq!(uri, "file:///tmp/my%20dir/%C3%BCn%C3%AF%20%231/AGENTS.md");
        assert_eq!(uri_to_path(&uri).as_deref(), Some(p));
        assert_eq!(uri_to_path("file:///a/%41b").as_deref(), Some(Path::new("/a/Ab")));
        assert_eq!(uri_to_path("untitled:Untitled-1"), None);
        assert_eq!(uri_to_path("file:///bad%zz"), None);
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_round_trip() {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/bad\xff\xfename/AGENTS.md"));
        let uri = path_to_uri(p);
        assert_eq!(uri, "file:///tmp/bad%FF%FEname/AGENTS.md");
        assert_eq!(uri_to_path(&uri).as_deref(), Some(p));
    }
}
