//! Claude Code hides HTML comments that stand as blocks of their own from the model.
//!
//! Claude Code 2.1.332 (its bundled memory loader, read from the shipped code and checked
//! against what `claude -p` sends) lexes each instruction file as Markdown (marked, `gfm: false`)
//! and, for every **top-level** HTML block whose text starts (after spaces) with `<!--` and holds
//! `-->`, removes each `<!--…-->` from the block's text; what remains replaces the block, or
//! nothing when it is blank. Comments inside a paragraph, a heading, a list, a quote, a code block
//! or another HTML block stay. When anything was removed, line endings come out as `\n`;
//! otherwise the text is left as it was, `\r\n` included.
//!
//! This is not a Markdown parser: it follows lines far enough to tell where a top-level block may
//! start (fences, indented code, paragraphs and what interrupts them, lists, quotes, HTML blocks),
//! which is all the rule needs.

use std::borrow::Cow;

use crate::chain::text::read::js_trim;

/// `text` as Claude Code shows it to the model: block-level HTML comments hidden.
pub(crate) fn hide_block_comments(text: &str) -> Cow<'_, str> {
    if !text.contains("<!--") {
        return Cow::Borrowed(text);
    }
    let g = text.replace("\r\n", "\n").replace('\r', "\n");
    let spans = comment_blocks(&g);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(g.len());
    let mut at = 0;
    for (start, end) in spans {
        out.push_str(&g[at..start]);
        let rest = remove_comments(&g[start..end]);
        if !js_trim(&rest).is_empty() {
            out.push_str(&rest);
        }
        at = end;
    }
    out.push_str(&g[at..]);
    Cow::Owned(out)
}

/// JavaScript's `s.replace(/<!--[\s\S]*?-->/g, "")`.
fn remove_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    while let Some(i) = s[at..].find("<!--") {
        let open = at + i;
        let Some(j) = s[open + 4..].find("-->") else { break };
        out.push_str(&s[at..open]);
        at = open + 4 + j + 3;
    }
    out.push_str(&s[at..]);
    out
}

/// Where the walk over the lines is, at the top level of the document.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between blocks (or in indented code, which any less indented line ends).
    Start,
    Paragraph,
    /// Inside a fence of `len` times `ch`, up to its closing fence or the end.
    Fence {
        ch: u8,
        len: usize,
    },
    /// An HTML block that ends after a blank line.
    HtmlToBlank,
    /// An HTML block that ends on the line holding this text (`</script>`, `?>`, …).
    HtmlTo(&'static str),
    /// A list whose items' text starts `width` columns in; `blank`: after a blank line.
    List {
        width: usize,
        blank: bool,
    },
    Quote,
}

/// The byte ranges of the top-level HTML blocks of `g` (`\n` line endings) that Claude Code
/// strips: those starting with `<!--` and holding `-->`. Each runs from its line's start to the
/// end of the line where the comment closes, and the newlines right after it.
fn comment_blocks(g: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut state = State::Start;
    let mut at = 0;
    while at < g.len() {
        let end = g[at..].find('\n').map_or(g.len(), |i| at + i + 1);
        let line = &g[at..end];
        let mut next = end;
        // A line that ends the block it would belong to is seen again from `Start`.
        let mut again = true;
        while again {
            again = false;
            match state {
                State::Fence { ch, len } => {
                    if closes_fence(line, ch, len) {
                        state = State::Start;
                    }
                }
                State::HtmlToBlank => {
                    if blank(line) {
                        state = State::Start;
                    }
                }
                State::HtmlTo(close) => {
                    if line.to_ascii_lowercase().contains(close) {
                        state = State::Start;
                    }
                }
                State::Paragraph => {
                    if blank(line) {
                        state = State::Start;
                    } else if interrupts_paragraph(line) {
                        (state, again) = (State::Start, true);
                    }
                }
                State::Quote => {
                    if blank(line) {
                        state = State::Start;
                    } else if !quote(line) && interrupts_paragraph(line) {
                        (state, again) = (State::Start, true);
                    }
                }
                State::List { width, blank: after_blank } => {
                    let limit = width.saturating_sub(1).min(3);
                    let sp = spaces(line);
                    if blank(line) {
                        state = State::List { width, blank: true };
                    } else if sp <= limit
                        && (fence_open(line).is_some() || heading(line) || hr(line) || ends_item(line))
                    {
                        (state, again) = (State::Start, true);
                    } else if let Some(w) = list_item(line).filter(|_| sp <= limit) {
                        state = State::List { width: w, blank: false };
                    } else if sp >= width {
                        state = State::List { width, blank: false };
                    } else if after_blank {
                        (state, again) = (State::Start, true);
                    }
                }
                State::Start => {
                    if blank(line) || code_indent(line) {
                    } else if spaces(line) <= 3 && line.trim_start_matches(' ').starts_with("<!--") {
                        let open = at + spaces(line);
                        let close = comment_end(g, open);
                        let mut stop = g[close..].find('\n').map_or(g.len(), |i| close + i);
                        stop += g[stop..].bytes().take_while(|&b| b == b'\n').count();
                        if g[at..close].contains("-->") {
                            spans.push((at, stop));
                        }
                        next = stop;
                    } else if let Some((ch, len)) = fence_open(line) {
                        state = State::Fence { ch, len };
                    } else if heading(line) || hr(line) {
                    } else if quote(line) {
                        state = State::Quote;
                    } else if let Some(width) = list_item(line) {
                        state = State::List { width, blank: false };
                    } else if let Some(close) = html_to(line) {
                        // The end may be on the opening line, past its first two characters.
                        let rest = line.trim_start_matches(' ').to_ascii_lowercase();
                        if !rest.get(2..).is_some_and(|r| r.contains(close)) {
                            state = State::HtmlTo(close);
                        }
                    } else if html_block(line) {
                        state = State::HtmlToBlank;
                    } else {
                        state = State::Paragraph;
                    }
                }
            }
        }
        at = next;
    }
    spans
}

/// Where marked's comment rule `<!--(?:-?>|[\s\S]*?(?:-->|$))` ends, the comment opening at `open`.
fn comment_end(g: &str, open: usize) -> usize {
    let after = open + 4;
    if g[after..].starts_with('>') {
        return after + 1;
    }
    if g[after..].starts_with("->") {
        return after + 2;
    }
    g[after..].find("-->").map_or(g.len(), |i| after + i + 3)
}

fn spaces(line: &str) -> usize {
    line.bytes().take_while(|&b| b == b' ').count()
}

fn blank(line: &str) -> bool {
    line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n'))
}

/// The line, past at most three spaces; `None` when it is indented further.
fn lead(line: &str) -> Option<&str> {
    let sp = spaces(line);
    (sp <= 3).then(|| &line[sp..])
}

/// Indented code: four spaces, or a tab after at most three.
fn code_indent(line: &str) -> bool {
    !blank(line) && lead(line).is_none_or(|rest| rest.starts_with('\t'))
}

fn fence_open(line: &str) -> Option<(u8, usize)> {
    let rest = lead(line)?;
    let ch = *rest.as_bytes().first().filter(|c| matches!(c, b'`' | b'~'))?;
    let len = rest.bytes().take_while(|&b| b == ch).count();
    // A backtick fence's info string holds no backtick.
    (len >= 3 && (ch == b'~' || !rest[len..].contains('`'))).then_some((ch, len))
}

/// marked's closing fence: the opening fence, then only `` ` `` or `~`, then spaces.
fn closes_fence(line: &str, ch: u8, len: usize) -> bool {
    let Some(rest) = lead(line) else { return false };
    let run = rest.bytes().take_while(|&b| b == ch).count();
    run >= len && rest[len..].trim_end_matches('\n').trim_end_matches(' ').bytes().all(|b| b == b'`' || b == b'~')
}

fn heading(line: &str) -> bool {
    let Some(rest) = lead(line) else { return false };
    let n = rest.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&n) && (rest.len() == n || rest[n..].starts_with([' ', '\t', '\n']))
}

/// marked ends a list item at a less indented line opening HTML: `<!--`, or `<` and a letter with
/// a `>` later on the line.
fn ends_item(line: &str) -> bool {
    let Some(rest) = lead(line) else { return false };
    rest.starts_with("<!--")
        || (rest.as_bytes().get(1).is_some_and(u8::is_ascii_alphabetic)
            && rest.starts_with('<')
            && rest[1..].contains('>'))
}

fn hr(line: &str) -> bool {
    let Some(rest) = lead(line) else { return false };
    let body: Vec<u8> = rest.bytes().filter(|b| !matches!(b, b' ' | b'\t' | b'\n')).collect();
    body.len() >= 3 && matches!(body[0], b'-' | b'*' | b'_') && body.iter().all(|&b| b == body[0])
}

fn quote(line: &str) -> bool {
    lead(line).is_some_and(|r| r.starts_with('>'))
}

/// A list item's marker; the columns its text starts at.
fn list_item(line: &str) -> Option<usize> {
    let sp = spaces(line);
    let rest = lead(line)?;
    let marker = if rest.starts_with(['*', '+', '-']) {
        1
    } else {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if !(1..=9).contains(&digits) || !rest[digits..].starts_with(['.', ')']) {
            return None;
        }
        digits + 1
    };
    let after = &rest[marker..];
    if after.is_empty() || after == "\n" {
        return Some(sp + marker + 1);
    }
    let gap = after.bytes().take_while(|&b| b == b' ' || b == b'\t').count();
    match gap {
        0 => None,
        1..=4 if !blank(after) => Some(sp + marker + gap),
        _ => Some(sp + marker + 1),
    }
}

/// What ends a paragraph (marked, `gfm: false`): a fence, a heading, a rule, a quote, a bullet
/// or `1.` item, an HTML block of the kinds that may interrupt one.
fn interrupts_paragraph(line: &str) -> bool {
    let Some(rest) = lead(line) else { return false };
    let item = (rest.starts_with(['*', '+', '-']) && rest[1..].starts_with(' '))
        || ((rest.starts_with("1.") || rest.starts_with("1)")) && rest[2..].starts_with(' '));
    fence_open(line).is_some() || heading(line) || hr(line) || quote(line) || item || html_begin(line)
}

/// An HTML block that may interrupt a paragraph: a comment, `script`/`pre`/`style`/`textarea`, or
/// a block tag.
fn html_begin(line: &str) -> bool {
    let Some(rest) = lead(line) else { return false };
    rest.starts_with("<!--") || html_to(line).is_some_and(|c| c.starts_with("</")) || block_tag(rest)
}

/// HTML blocks that end on a given line: what ends them.
fn html_to(line: &str) -> Option<&'static str> {
    let rest = lead(line)?.to_ascii_lowercase();
    for (tag, close) in [("script", "</script>"), ("pre", "</pre>"), ("style", "</style>"), ("textarea", "</textarea>")]
    {
        let after = rest.strip_prefix('<').and_then(|r| r.strip_prefix(tag));
        if after.is_some_and(|a| a.is_empty() || a.starts_with([' ', '\t', '\n', '>'])) {
            return Some(close);
        }
    }
    if rest.starts_with("<?") {
        return Some("?>");
    }
    if rest.starts_with("<![cdata[") {
        return Some("]]>");
    }
    if rest.starts_with("<!") && rest.as_bytes().get(2).is_some_and(u8::is_ascii_alphabetic) {
        return Some(">");
    }
    None
}

/// The block-level tags of CommonMark's sixth kind of HTML block.
const BLOCK_TAGS: &[&str] = &[
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "meta",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

/// `<tag` or `</tag` of a block tag, followed by a space, the end of the line, `>` or `/>`.
fn block_tag(rest: &str) -> bool {
    let Some(r) = rest.strip_prefix('<') else { return false };
    let r = r.strip_prefix('/').unwrap_or(r).to_ascii_lowercase();
    let name_len = r.bytes().take_while(|b| b.is_ascii_alphanumeric()).count();
    let after = &r[name_len..];
    BLOCK_TAGS.contains(&&r[..name_len])
        && (after.is_empty() || after.starts_with([' ', '\n', '>']) || after.starts_with("/>"))
}

/// An HTML block that runs to a blank line: a block tag, or a lone complete tag on its line.
fn html_block(line: &str) -> bool {
    let Some(rest) = lead(line) else { return false };
    if block_tag(rest) {
        return true;
    }
    let t = rest.trim_end_matches(['\n', ' ', '\t']);
    let Some(inner) = t.strip_prefix('<').and_then(|r| r.strip_suffix('>')) else { return false };
    let inner = inner.strip_prefix('/').unwrap_or(inner);
    inner.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) && !inner.contains(['<', '>'])
}

#[cfg(test)]
mod tests {
    use super::hide_block_comments as hide;

    // Each expectation was observed in what Claude Code 2.1.332 sends (tests/it/agents.rs compares
    // the same shapes with the real agent).
    #[test]
    fn comments_on_their_own_lines_go_and_the_others_stay() {
        assert_eq!(hide("before\n\n<!-- hidden -->\n\nafter\n"), "before\n\nafter\n");
        assert_eq!(hide("text <!-- inline --> more\n"), "text <!-- inline --> more\n");
        assert_eq!(hide("<!-- at start -->\nrules\n"), "rules\n");
        assert_eq!(hide("one\n<!--\nmulti\n\nline\n-->\ntwo\n"), "one\ntwo\n");
        assert_eq!(hide("x\n\n    <!-- four -->\ny\n"), "x\n\n    <!-- four -->\ny\n");
        assert_eq!(hide("x\n\n<!-- c --> tail\ny\n"), "x\n\n tail\ny\n");
        assert_eq!(hide("x\n\n<!-- a --> <!-- b -->\ny\n"), "x\n\ny\n");
        assert_eq!(hide("x\n\n<!-- never closed\ny\n"), "x\n\n<!-- never closed\ny\n");
        assert_eq!(hide("x\n```\n<!-- in -->\n```\ny\n"), "x\n```\n<!-- in -->\n```\ny\n");
        assert_eq!(hide("x\r\n\r\n<!-- crlf -->\r\ny\r\n"), "x\n\ny\n");
        assert_eq!(hide("x <!-- in --> y\r\nz\r\n"), "x <!-- in --> y\r\nz\r\n");
        assert_eq!(hide("para\n<!-- right after -->\nnext\n"), "para\nnext\n");
        assert_eq!(hide("- item\n  <!-- in item -->\n- two\n"), "- item\n  <!-- in item -->\n- two\n");
        assert_eq!(hide("- item\n<!-- c -->\n- two\n"), "- item\n- two\n");
        assert_eq!(hide("a\n\n<!-- c -->  \n  \nb\n"), "a\n\n  \nb\n");
        assert_eq!(hide("<div>\n<!-- in div -->\n</div>\n\nz\n"), "<div>\n<!-- in div -->\n</div>\n\nz\n");
        assert_eq!(hide("x\n\n<!-->\ny\n"), "x\n\n<!-->\ny\n");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Any text: no panic, and hiding only ever removes comments and what stands beside them
        /// on their lines (the result, line endings aside, is never longer).
        #[test]
        fn any_text_is_handled(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "<!--", "-->", "<!-->", " ", "    ", "\t", "\n", "\r\n", "\r", "x", "é", "```", "~~~", "- ", "1. ",
                    "> ", "# ", "<div>", "</div>", "<script>", "</script>", "<?", "?>", "<!X", "---",
                ]),
                0..40,
            ),
        ) {
            let text = parts.concat();
            let shown = hide(&text);
            proptest::prop_assert!(shown.len() <= text.len());
            if !text.contains("<!--") {
                proptest::prop_assert_eq!(shown.as_ref(), text.as_str());
            }
        }
    }
}
