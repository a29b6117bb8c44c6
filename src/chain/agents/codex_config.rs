//! The two keys of Codex's `$CODEX_HOME/config.toml` that change what it loads:
//! `project_doc_max_bytes` and `project_doc_fallback_filenames`. Only top-level keys count (a
//! `[table]` header ends them), as in Codex. A value this reader cannot parse is left out, so
//! the profile falls back to Codex's default for it.

use std::path::Path;

/// What `config.toml` sets.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CodexConfig {
    pub max_bytes: Option<u64>,
    pub fallbacks: Option<Vec<String>>,
}

/// Reads `codex_home/config.toml`; a missing or unreadable file sets nothing.
pub fn read(codex_home: &Path) -> CodexConfig {
    match crate::chain::text::read::read_capped(&codex_home.join("config.toml"), 1024 * 1024) {
        Ok((data, _)) => parse(&String::from_utf8_lossy(&data)),
        Err(_) => CodexConfig::default(),
    }
}

pub fn parse(text: &str) -> CodexConfig {
    let mut out = CodexConfig::default();
    let mut rest = text;
    while !rest.is_empty() {
        let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            break;
        }
        if let Some((key, value)) = trimmed.split_once('=') {
            let key = key.trim().trim_matches('"');
            // `value` ends `line`, and `line` opens `rest`: the value with what follows the line.
            let value_start = &rest[line.len() - value.len()..];
            match key {
                "project_doc_max_bytes" => {
                    let v = strip_comment(value).trim().replace('_', "");
                    out.max_bytes = v.parse().ok();
                }
                "project_doc_fallback_filenames" => {
                    if let Some((list, consumed)) = string_array(value_start) {
                        out.fallbacks = Some(list);
                        rest = &value_start[consumed..];
                        rest = rest.split_once('\n').map_or("", |(_, r)| r);
                        continue;
                    }
                }
                _ => {}
            }
        }
        rest = after;
    }
    out
}

fn strip_comment(value: &str) -> &str {
    value.split('#').next().unwrap_or("")
}

/// A TOML array of strings at the start of `text` (after spaces): the strings and the bytes
/// consumed up to its `]`.
fn string_array(text: &str) -> Option<(Vec<String>, usize)> {
    let mut chars = text.char_indices().peekable();
    let mut out = Vec::new();
    // The opening bracket.
    loop {
        let (_, c) = chars.next()?;
        match c {
            '[' => break,
            ' ' | '\t' => continue,
            _ => return None,
        }
    }
    loop {
        let (i, c) = chars.next()?;
        match c {
            ' ' | '\t' | '\r' | '\n' | ',' => {}
            '#' => {
                // A comment runs to the end of the line.
                while chars.next_if(|&(_, c)| c != '\n').is_some() {}
            }
            ']' => return Some((out, i + 1)),
            '"' => {
                let mut s = String::new();
                loop {
                    let (_, c) = chars.next()?;
                    match c {
                        '"' => break,
                        '\\' => {
                            let (_, e) = chars.next()?;
                            match e {
                                'n' => s.push('\n'),
                                't' => s.push('\t'),
                                'r' => s.push('\r'),
                                '"' => s.push('"'),
                                '\\' => s.push('\\'),
                                'u' | 'U' => {
                                    let n = if e == 'u' { 4 } else { 8 };
                                    let hex: String = (0..n).filter_map(|_| chars.next().map(|(_, c)| c)).collect();
                                    s.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                                }
                                _ => return None,
                            }
                        }
                        '\n' => return None,
                        c => s.push(c),
                    }
                }
                out.push(s);
            }
            '\'' => {
                let mut s = String::new();
                loop {
                    let (_, c) = chars.next()?;
                    match c {
                        '\'' => break,
                        '\n' => return None,
                        c => s.push(c),
                    }
                }
                out.push(s);
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_two_top_level_keys_and_nothing_in_tables() {
        let c = parse(
            "model = \"x\"\nproject_doc_max_bytes = 65_536 # big\nproject_doc_fallback_filenames = [\n  \"CLAUDE.md\", # one\n  'GUIDE.md',\n  \"caf\\u00e9.md\"\n]\n[profiles.x]\nproject_doc_max_bytes = 1\n",
        );
        assert_eq!(c.max_bytes, Some(65536));
        assert_eq!(c.fallbacks, Some(vec!["CLAUDE.md".into(), "GUIDE.md".into(), "café.md".into()]));
        let tabled = parse("[tui]\nproject_doc_max_bytes = 5\n");
        assert_eq!(tabled, CodexConfig::default());
        assert_eq!(parse("project_doc_fallback_filenames = [1, 2]\n").fallbacks, None, "not strings: ignored");
        assert_eq!(parse("project_doc_max_bytes = \"lots\"\n").max_bytes, None);
        let tight = parse("project_doc_fallback_filenames=[\"A.md\"]\nproject_doc_max_bytes=9");
        assert_eq!((tight.fallbacks, tight.max_bytes), (Some(vec!["A.md".into()]), Some(9)));
    }
}
