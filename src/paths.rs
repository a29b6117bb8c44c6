//! Path helpers shared by every layer: lexical normalisation, `/`-joined display paths and
//! `file://` URIs (kept here so that the engine needs no LSP crate).

use std::path::{Component, Path, PathBuf};

/// Removes `.` and resolves `..` lexically; never touches the disk. On Windows it also
/// unifies separators and the drive letter's case (see [`normalize_str`]).
pub fn normalize(path: &Path) -> PathBuf {
    #[cfg(windows)]
    if let Some(text) = path.to_str() {
        return PathBuf::from(normalize_str(text, Flavour::Windows));
    }
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

/// `dir` joined with `name`, as [`Path::join`] joins them, made at its final size at once: a
/// check joins each directory of tens of thousands of chains with every name an agent looks
/// for, and growing each copy was a twentieth of its time.
pub fn join(dir: &Path, name: impl AsRef<Path>) -> PathBuf {
    let name = name.as_ref();
    let mut out = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.as_os_str().len());
    out.push(dir);
    out.push(name);
    out
}

/// Makes a path absolute against the current directory, then normalises it.
pub fn absolute(path: &Path) -> std::io::Result<PathBuf> {
    Ok(normalize(&std::path::absolute(path)?))
}

/// `path` from the folder `from` (`../AGENTS.md` for a file beside it); `path` itself when the
/// two share no folder but the root.
pub fn relative(path: &Path, from: &Path) -> PathBuf {
    let (p, c): (Vec<_>, Vec<_>) = (path.components().collect(), from.components().collect());
    let common = p.iter().zip(&c).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        return path.to_path_buf();
    }
    let mut out: PathBuf = std::iter::repeat_n("..", c.len() - common).collect();
    out.extend(p[common..].iter());
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
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

/// `text` as one line for a person to read: its control characters escaped as Rust escapes them
/// (`\n`, `\t`, `\u{1b}`), and the invisible ones that break or reorder a line (U+2028, U+2029,
/// the bidirectional marks and overrides) as `\u{…}`. A name of a repository can hold a newline,
/// which would otherwise start a forged line of the output; other text stays as it is.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hidden) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if c.is_control() => out.extend(c.escape_debug()),
            c if hidden(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out.into()
}

fn push_segment(out: &mut String, segment: &str) {
    if !out.is_empty() && !out.ends_with('/') {
        out.push('/');
    }
    out.push_str(segment);
}

/// Whose rules a path string follows. The Windows rules are plain string logic so that they
/// run (and are tested) on every platform; the `cfg(windows)` build uses them for real paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    Unix,
    Windows,
}

impl Flavour {
    /// The flavour of the platform this binary runs on.
    pub const NATIVE: Flavour = if cfg!(windows) { Flavour::Windows } else { Flavour::Unix };

    fn is_separator(self, c: char) -> bool {
        c == '/' || (self == Flavour::Windows && c == '\\')
    }
}

/// The start of a Windows path before its first separator.
#[derive(Debug, PartialEq, Eq)]
enum WinPrefix<'a> {
    /// `\foo` or `foo`: no drive, no server.
    None,
    /// `C:`, stored upper-case: Windows compares drive letters without case and VS Code sends
    /// them lower-case (`file:///c%3A/...`) while the process sees `C:`.
    Drive(char),
    /// `\\server\share`.
    Unc { server: &'a str, share: &'a str },
}

/// A Windows path split into prefix, rootedness and the names between separators, with `.`
/// dropped and `..` resolved lexically (a `..` above the root is dropped, as Windows does).
#[derive(Debug)]
struct WinPath<'a> {
    prefix: WinPrefix<'a>,
    rooted: bool,
    names: Vec<&'a str>,
}

fn parse_windows(path: &str) -> WinPath<'_> {
    let sep = |c: char| Flavour::Windows.is_separator(c);
    // Verbatim forms (`\\?\C:\x`, `\\?\UNC\server\share\x`) are what canonicalize returns;
    // they name the same file as the plain form.
    let mut rest = path;
    let mut verbatim_unc = false;
    for start in ["\\\\?\\", "//?/", "\\\\.\\"] {
        if let Some(r) = rest.strip_prefix(start) {
            rest = r;
            if let Some(r) = rest.strip_prefix("UNC").filter(|r| r.starts_with(sep)) {
                rest = r;
                verbatim_unc = true;
            }
            break;
        }
    }
    let is_unc = verbatim_unc || (rest.starts_with(sep) && rest[1..].starts_with(sep));
    let (prefix, rooted, tail) = if is_unc {
        let (server, after) = split_at_separator(rest.trim_start_matches(sep));
        let (share, tail) = split_at_separator(after.trim_start_matches(sep));
        (WinPrefix::Unc { server, share }, true, tail)
    } else {
        let bytes = rest.as_bytes();
        if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
            let tail = &rest[2..];
            (WinPrefix::Drive(char::from(bytes[0].to_ascii_uppercase())), tail.starts_with(sep), tail)
        } else {
            (WinPrefix::None, rest.starts_with(sep), rest)
        }
    };
    WinPath { prefix, rooted, names: resolve_names(tail.split(sep), rooted) }
}

/// The names of a path with `.` and empty names dropped and `..` resolved; a `..` that would
/// climb above the root of a rooted path stays at the root, as both platforms resolve it.
fn resolve_names<'a>(parts: impl Iterator<Item = &'a str>, rooted: bool) -> Vec<&'a str> {
    let mut names: Vec<&str> = Vec::new();
    for name in parts {
        match name {
            "" | "." => {}
            ".." => {
                if names.last().is_some_and(|n| *n != "..") {
                    names.pop();
                } else if !rooted {
                    names.push("..");
                }
            }
            other => names.push(other),
        }
    }
    names
}

/// `s` cut before its first Windows separator (the separator stays with the rest).
fn split_at_separator(s: &str) -> (&str, &str) {
    match s.find(['/', '\\']) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

impl WinPath<'_> {
    fn render(&self) -> String {
        let mut out = match &self.prefix {
            WinPrefix::None => String::new(),
            WinPrefix::Drive(letter) => format!("{letter}:"),
            WinPrefix::Unc { server, share } => format!("\\\\{server}\\{share}"),
        };
        if self.rooted {
            out.push('\\');
        }
        out.push_str(&self.names.join("\\"));
        out
    }

    /// Windows compares names without case (the file systems it ships are case-insensitive
    /// by default); `to_uppercase` per character matches its table for practical names.
    fn key(&self) -> (String, bool, Vec<String>) {
        let upper = |s: &str| s.chars().flat_map(char::to_uppercase).collect::<String>();
        let prefix = match &self.prefix {
            WinPrefix::None => String::new(),
            WinPrefix::Drive(letter) => format!("{letter}:"),
            WinPrefix::Unc { server, share } => format!("\\\\{}\\{}", upper(server), upper(share)),
        };
        (prefix, self.rooted, self.names.iter().map(|n| upper(n)).collect())
    }
}

/// Lexical normalisation of a path string: `.` removed, `..` resolved; for Windows also `/`
/// turned into `\` and the drive letter upper-cased.
pub fn normalize_str(path: &str, flavour: Flavour) -> String {
    match flavour {
        Flavour::Windows => parse_windows(path).render(),
        Flavour::Unix => {
            let rooted = path.starts_with('/');
            let names = resolve_names(path.split('/'), rooted);
            let joined = names.join("/");
            if rooted { format!("/{joined}") } else { joined }
        }
    }
}

/// Whether `path` is `base` or lies under it, comparing as the flavour's file systems do:
/// exact on Unix, without case on Windows (so `c:\Proj\a.md` is inside `C:\proj`).
pub fn starts_with_str(path: &str, base: &str, flavour: Flavour) -> bool {
    match flavour {
        Flavour::Unix => Path::new(&normalize_str(path, flavour)).starts_with(normalize_str(base, flavour)),
        Flavour::Windows => {
            let (p_prefix, p_rooted, p_names) = parse_windows(path).key();
            let (b_prefix, b_rooted, b_names) = parse_windows(base).key();
            p_prefix == b_prefix && p_rooted == b_rooted && p_names.starts_with(&b_names)
        }
    }
}

/// Whether two path strings name the same file by the flavour's comparison rules.
pub fn same_str(a: &str, b: &str, flavour: Flavour) -> bool {
    starts_with_str(a, b, flavour) && starts_with_str(b, a, flavour)
}

/// Percent-encodes everything but unreserved characters and `/` (and `:` when asked).
fn encode_into(out: &mut String, bytes: &[u8], keep_colon: bool) {
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') || (keep_colon && b == b':') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// The `file://` URI of an absolute path string in the given flavour. Windows: `C:\a b` gives
/// `file:///C:/a%20b` and `\\server\share\x` gives `file://server/share/x`.
pub fn path_str_to_uri(path: &str, flavour: Flavour) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    out.push_str("file://");
    match flavour {
        Flavour::Unix => {
            let path = normalize_str(path, flavour);
            if !path.starts_with('/') {
                out.push('/');
            }
            encode_into(&mut out, path.as_bytes(), false);
        }
        Flavour::Windows => {
            let parsed = parse_windows(path);
            match &parsed.prefix {
                WinPrefix::Unc { server, share } => {
                    encode_into(&mut out, server.as_bytes(), false);
                    out.push('/');
                    encode_into(&mut out, share.as_bytes(), false);
                }
                WinPrefix::Drive(letter) => {
                    out.push('/');
                    out.push(*letter);
                    out.push(':');
                }
                WinPrefix::None => {}
            }
            for name in &parsed.names {
                out.push('/');
                encode_into(&mut out, name.as_bytes(), false);
            }
            if parsed.names.is_empty() {
                out.push('/');
            }
        }
    }
    out
}

/// Splits a `file:` URI into its authority and its still-encoded path, dropping any query or
/// fragment; `None` for another scheme or a path that is not absolute.
fn split_file_uri(uri: &str) -> Option<(&str, &str)> {
    let scheme = uri.get(..7)?;
    if !scheme.eq_ignore_ascii_case("file://") {
        return None;
    }
    let rest = &uri[7..];
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let slash = rest.find('/')?;
    Some((&rest[..slash], &rest[slash..]))
}

/// The path string of a `file://` URI in the given flavour; `None` for other schemes, malformed
/// escapes, or (on Unix) a remote authority. Windows accepts both `file:///C:/x` and VS Code's
/// `file:///c%3A/x`, and an authority as a UNC server (`file://server/share/x`).
pub fn uri_to_path_str(uri: &str, flavour: Flavour) -> Option<String> {
    let (authority, encoded) = split_file_uri(uri)?;
    let local = authority.is_empty() || authority.eq_ignore_ascii_case("localhost");
    let text = String::from_utf8(percent_decode(encoded)?).ok()?;
    match flavour {
        Flavour::Unix => local.then(|| normalize_str(&text, flavour)),
        Flavour::Windows => {
            if !local {
                return Some(normalize_str(&format!("\\\\{authority}{text}"), flavour));
            }
            // `/C:/x`: the slash before a drive letter belongs to the URI, not the path.
            let b = text.as_bytes();
            let body = if b.len() >= 3 && b[1].is_ascii_alphabetic() && b[2] == b':' { &text[1..] } else { &text };
            Some(normalize_str(body, flavour))
        }
    }
}

/// A `file://` URI for an absolute path, percent-encoding everything but unreserved
/// characters and `/`. On Unix the path's raw bytes are encoded, so a name that is not UTF-8
/// round-trips through [`uri_to_path`]; on Windows [`path_str_to_uri`] does the work.
pub fn path_to_uri(path: &Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = normalize(path).as_os_str().as_bytes().to_vec();
        let mut out = String::with_capacity(bytes.len() + 8);
        out.push_str("file://");
        if bytes.first() != Some(&b'/') {
            out.push('/');
        }
        encode_into(&mut out, &bytes, false);
        out
    }
    #[cfg(not(unix))]
    {
        path_str_to_uri(&path.to_string_lossy(), Flavour::Windows)
    }
}

/// The path of a `file://` URI (with or without an authority of `localhost`); `None` for other
/// schemes or malformed escapes.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        // Raw bytes, not a string: a name that is not UTF-8 must still map to its file.
        let (authority, encoded) = split_file_uri(uri)?;
        if !(authority.is_empty() || authority.eq_ignore_ascii_case("localhost")) {
            return None;
        }
        let bytes = percent_decode(encoded)?;
        Some(normalize(Path::new(&std::ffi::OsString::from_vec(bytes))))
    }
    #[cfg(not(unix))]
    {
        uri_to_path_str(uri, Flavour::Windows).map(PathBuf::from)
    }
}

/// Whether `path` is `base` or lies under it, by the platform's comparison (without case on
/// Windows).
pub fn starts_with(path: &Path, base: &Path) -> bool {
    if cfg!(windows) {
        starts_with_str(&path.to_string_lossy(), &base.to_string_lossy(), Flavour::Windows)
    } else {
        path.starts_with(base)
    }
}

/// `path` re-spelt under `base` when it lies inside it by the platform's comparison, so that
/// later `strip_prefix` calls against `base` succeed even when a client spelt the case of a
/// Windows folder differently.
pub fn within(path: &Path, base: &Path) -> Option<PathBuf> {
    if !starts_with(path, base) {
        return None;
    }
    let depth = base.components().count();
    let mut out = base.to_path_buf();
    out.extend(path.components().skip(depth));
    Some(out)
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

    /// A name holding a newline, a tab, an escape or a bidirectional override prints on one line
    /// as it reads; other text, accents and all, is handed back as it is.
    #[test]
    fn printable_escapes_what_would_break_or_reorder_a_line() {
        assert_eq!(printable("a\nb\tc\u{1b}[31m"), "a\\nb\\tc\\u{1b}[31m");
        assert_eq!(printable("x\u{202e}y\u{2028}"), "x\\u{202e}y\\u{2028}");
        assert!(matches!(printable("pkg/été"), std::borrow::Cow::Borrowed("pkg/été")));
    }

    #[test]
    fn join_says_what_path_join_says() {
        for (dir, name) in
            [("/a/b", "AGENTS.md"), ("/a/b/", ".cursor/rules"), ("", "x"), ("rel", "y/z"), ("/a", "/b"), ("/", "c")]
        {
            assert_eq!(join(Path::new(dir), name), Path::new(dir).join(name), "{dir:?} + {name:?}");
        }
    }

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

    // Windows-shaped inputs through the string logic the Windows build uses; they run here.
    const W: Flavour = Flavour::Windows;

    #[test]
    fn windows_uris_from_vscode_and_from_other_clients_give_one_path() {
        // VS Code lower-cases the drive and encodes the colon; other clients do neither.
        let vscode = uri_to_path_str("file:///c%3A/Users/Me/My%20Proj/AGENTS.md", W);
        let plain = uri_to_path_str("file:///C:/Users/Me/My%20Proj/AGENTS.md", W);
        assert_eq!(vscode.as_deref(), Some(r"C:\Users\Me\My Proj\AGENTS.md"));
        assert_eq!(vscode, plain);
        assert_eq!(uri_to_path_str("file://localhost/d:/x/./y/../z", W).as_deref(), Some(r"D:\x\z"));
        assert_eq!(uri_to_path_str("FILE:///C:/a?query#frag", W).as_deref(), Some(r"C:\a"));
        assert_eq!(uri_to_path_str("untitled:Untitled-1", W), None);
        assert_eq!(uri_to_path_str("file:///C:/bad%zz", W), None);
    }

    #[test]
    fn windows_paths_become_uris_that_read_back_to_the_same_path() {
        for (path, uri) in [
            (r"C:\Users\me\AGENTS.md", "file:///C:/Users/me/AGENTS.md"),
            (r"c:\Program Files\ünï #1\CLAUDE.md", "file:///C:/Program%20Files/%C3%BCn%C3%AF%20%231/CLAUDE.md"),
            (r"C:/mixed\seps/./a\..\b.md", "file:///C:/mixed/seps/b.md"),
            (r"\\server\share\dir\AGENTS.md", "file://server/share/dir/AGENTS.md"),
            (r"\\?\C:\verbatim\AGENTS.md", "file:///C:/verbatim/AGENTS.md"),
            (r"\\?\UNC\server\share\x.md", "file://server/share/x.md"),
            (r"C:\", "file:///C:/"),
        ] {
            assert_eq!(path_str_to_uri(path, W), uri, "{path}");
            let back = uri_to_path_str(uri, W).unwrap_or_default();
            assert!(same_str(&back, path, W), "{uri} read back as {back}, not {path}");
        }
        assert_eq!(
            uri_to_path_str("file://server/share/dir/AGENTS.md", W).as_deref(),
            Some(r"\\server\share\dir\AGENTS.md")
        );
    }

    #[test]
    fn windows_compares_without_case_and_unix_with_it() {
        assert!(starts_with_str(r"c:\PROJ\sub\AGENTS.md", r"C:\proj", W));
        assert!(starts_with_str("C:/proj/sub", r"c:\Proj\", W));
        assert!(same_str(r"C:\Proj", "c:/proj/.", W));
        assert!(starts_with_str(r"\\SERVER\Share\a", r"\\server\share", W));
        // Names, not string prefixes: `proj2` is not inside `proj`; another drive is elsewhere.
        assert!(!starts_with_str(r"C:\proj2\a", r"C:\proj", W));
        assert!(!starts_with_str(r"D:\proj\a", r"C:\proj", W));
        assert!(!starts_with_str(r"C:\a", r"C:\a\b", W));
        assert!(!starts_with_str("/Proj/a", "/proj", Flavour::Unix));
        assert!(starts_with_str("/proj/./a", "/proj", Flavour::Unix));
    }

    #[test]
    fn windows_normalisation_unifies_separators_and_drive_case() {
        assert_eq!(normalize_str("c:/a/b/../c/./d", W), r"C:\a\c\d");
        assert_eq!(normalize_str(r"C:\..\a", W), r"C:\a");
        assert_eq!(normalize_str(r"..\a\..\..\b", W), r"..\..\b");
        assert_eq!(normalize_str("/a/./b/../c", Flavour::Unix), "/a/c");
        assert_eq!(normalize_str("/../a", Flavour::Unix), "/a");
    }

    #[test]
    fn unix_flavour_leaves_a_drive_looking_uri_alone_and_rejects_remote_hosts() {
        // A Unix file named `/c:/x` is legal; only the Windows flavour treats `c:` as a drive.
        assert_eq!(uri_to_path_str("file:///c%3A/x", Flavour::Unix).as_deref(), Some("/c:/x"));
        assert_eq!(uri_to_path_str("file://server/share/x", Flavour::Unix), None);
        #[cfg(unix)]
        assert_eq!(uri_to_path("file://server/share/x"), None);
        assert_eq!(path_str_to_uri("/tmp/a b:c", Flavour::Unix), "file:///tmp/a%20b%3Ac");
    }

    #[test]
    fn a_file_is_re_spelt_under_its_folder() {
        let folder = Path::new("/w/proj");
        assert_eq!(within(Path::new("/w/proj/a/AGENTS.md"), folder), Some(PathBuf::from("/w/proj/a/AGENTS.md")));
        assert_eq!(within(Path::new("/w/project/AGENTS.md"), folder), None);
        assert_eq!(within(folder, folder), Some(folder.to_path_buf()));
    }
}
