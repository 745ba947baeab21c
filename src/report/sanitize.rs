//! Making text from specs and implementations safe to print: the one place every renderer
//! goes through before a terminal, a CI log or a report file sees untrusted text.
//!
//! Spec names, paths, messages, stderr tails and tracebacks are written by whoever wrote the
//! spec or the solution. Printed raw, an ESC could move the cursor, retitle the terminal or
//! rewrite earlier lines, and under GitHub Actions a line starting with `::` is a workflow
//! command (`::add-mask::`, `::error::`) run on the author's behalf. Here control characters
//! become visible escapes, and [`WorkflowSafe`] keeps every line of dlqspec's own output from
//! being read as a command.

use std::borrow::Cow;
use std::io::{self, Write};

/// Whether a character is shown as an escape rather than printed: C0 and C1 controls, DEL,
/// and the Unicode characters that reorder text or break lines on their own (which can make
/// a terminal show something else than what the bytes say).
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200e}' | '\u{200f}' // left-to-right and right-to-left marks
                | '\u{2028}' | '\u{2029}' // line and paragraph separators
                | '\u{202a}'..='\u{202e}' // bidirectional embeddings and overrides
                | '\u{2066}'..='\u{2069}' // bidirectional isolates
                | '\u{feff}' // byte order mark
                | '\u{fffe}' | '\u{ffff}' // noncharacters, which XML 1.0 forbids too
        )
}

/// Whether XML 1.0 allows a character at all (its `Char` production): a document holding
/// any other does not parse, escaped or not.
fn allowed_in_xml(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

fn escape_into(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

fn escaped(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| hidden(c) && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) && !keep(c) {
            escape_into(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Multi-line text as shown to a person: newlines and tabs stay, every other control
/// character reads as an escape (`\x1b`, `\r`, `\u{202e}`).
pub(crate) fn text(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c == '\n' || c == '\t')
}

/// A value shown within one line (a name, a path, a rule id): as [`text`], with newlines and
/// tabs escaped too, so that it cannot start a line of its own.
pub(crate) fn line(text: &str) -> Cow<'_, str> {
    escaped(text, |_| false)
}

/// The escape of one character as [`text`] shows it, for code that lays text out column by
/// column (a caret under a column must count an escape's width).
pub(crate) fn shown_char(c: char) -> Cow<'static, str> {
    if hidden(c) && c != '\t' && c != '\n' {
        let mut out = String::new();
        escape_into(c, &mut out);
        Cow::Owned(out)
    } else {
        Cow::Owned(c.to_string())
    }
}

/// A line of serialized JSON with every character [`text`] would escape written as a JSON
/// escape (`\u007f`, `\u202e`), and `##[` as `##\u005b`: the same data for a JSON reader,
/// nothing raw for a terminal or a CI log. serde_json escapes only C0 controls itself.
pub(crate) fn json(serialized: &str) -> Cow<'_, str> {
    if !serialized.chars().any(hidden) && !serialized.contains("##[") {
        return Cow::Borrowed(serialized);
    }
    let mut out = String::with_capacity(serialized.len() + 8);
    for c in serialized.chars() {
        if hidden(c) {
            // Outside strings JSON has only ASCII punctuation, so these sit in strings.
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out.replace("##[", "##\\u005b"))
}

/// `text` cut to at most `max` characters (never fewer than 8), an ellipsis as the last one
/// saying it was cut. Cut what is shown, after [`line`] or [`text`], so that an escape counts
/// at its width (a page escapes it for HTML after, so that an entity is never cut in two).
pub(crate) fn cut(text: &str, max: usize) -> Cow<'_, str> {
    let max = max.max(8);
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some(_) => {
            let kept = text
                .char_indices()
                .nth(max - 1)
                .map_or(text.len(), |(at, _)| at);
            Cow::Owned(format!("{}\u{2026}", &text[..kept]))
        }
    }
}

/// Text for a Markdown page, shown as written: HTML's special characters as entities and
/// Markdown's inline markup characters backslash-escaped (and a leading punctuation
/// character, which could start a list or a heading), so that no spec or implementation can
/// add markup, links or script to the page; control characters escaped.
pub(crate) fn markdown(text: &str) -> String {
    let text = line(text);
    let mut out = String::with_capacity(text.len());
    for (index, c) in text.chars().enumerate() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c if index == 0 && c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Inline code on a Markdown page: `<code>` around escaped text, since a backtick in the text
/// would end a backtick code span early.
pub(crate) fn markdown_code(text: &str) -> String {
    format!("<code>{}</code>", markdown(text))
}

/// Whether dlqspec runs as a GitHub Actions step, where its output is scanned for workflow
/// commands.
pub(crate) fn in_github_actions() -> bool {
    std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}

/// One line of output as GitHub Actions cannot take it for a workflow command.
///
/// The runner reads a line as a command when, past leading white space, it starts with `::`,
/// or (the older syntax) when it holds `##[` anywhere. Such a line gets its first `:` or its
/// `[` shown as an escape (`\x3a`, `\x5b`): still readable, no longer a command.
pub(crate) fn workflow_safe(line: &str) -> Cow<'_, str> {
    let body = line.trim_start();
    let command = body.starts_with("::");
    if !command && !line.contains("##[") {
        return Cow::Borrowed(line);
    }
    let indent = &line[..line.len() - body.len()];
    let body = match body.strip_prefix(':') {
        Some(rest) if command => format!("\\x3a{rest}"),
        _ => body.to_owned(),
    };
    Cow::Owned(format!("{indent}{}", body.replace("##[", "##\\x5b")))
}

/// Serialized XML whose lines cannot be read as workflow commands, with the same content for
/// an XML reader: a line's leading `:` becomes `&#58;`, the `[` of `##[` becomes `&#91;`
/// (both can only sit in text or attribute values, where character references are allowed).
pub(crate) fn xml(serialized: &str) -> Cow<'_, str> {
    // What XML forbids is shown as an escape, as in any other report: the document parses.
    let serialized: Cow<'_, str> = if serialized.chars().all(allowed_in_xml) {
        Cow::Borrowed(serialized)
    } else {
        let mut out = String::with_capacity(serialized.len() + 8);
        for c in serialized.chars() {
            if allowed_in_xml(c) {
                out.push(c);
            } else {
                escape_into(c, &mut out);
            }
        }
        Cow::Owned(out)
    };
    let risky = |line: &str| line.trim_start().starts_with("::") || line.contains("##[");
    if !serialized.split('\n').any(risky) {
        return serialized;
    }
    let lines: Vec<String> = serialized
        .split('\n')
        .map(|line| {
            let body = line.trim_start();
            let indent = &line[..line.len() - body.len()];
            let body = match body.strip_prefix(':') {
                Some(rest) if rest.starts_with(':') => format!("&#58;{rest}"),
                _ => body.to_owned(),
            };
            format!("{indent}{}", body.replace("##[", "##&#91;"))
        })
        .collect();
    Cow::Owned(lines.join("\n"))
}

/// GitHub's escaping of a workflow command's message: `%`, CR and LF.
pub(crate) fn github_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub's escaping of a workflow command's property value, where `:` and `,` separate too.
pub(crate) fn github_property(text: &str) -> String {
    github_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A writer that passes each line through [`workflow_safe`] when `guard` is on, for every
/// stream a person reads (stdout and stderr) but the one that carries dlqspec's own
/// annotations. Lines are passed on whole, so a command cannot be assembled from two writes;
/// a last line without its newline is passed on when the writer is dropped.
pub(crate) struct WorkflowSafe<W: Write> {
    out: W,
    guard: bool,
    pending: Vec<u8>,
}

impl<W: Write> WorkflowSafe<W> {
    pub(crate) fn new(out: W, guard: bool) -> Self {
        WorkflowSafe {
            out,
            guard,
            pending: Vec::new(),
        }
    }

    /// Guarded when dlqspec runs under GitHub Actions.
    pub(crate) fn for_ci(out: W) -> Self {
        Self::new(out, in_github_actions())
    }

    fn pass_on(&mut self, line: &[u8]) -> io::Result<()> {
        let text = String::from_utf8_lossy(line);
        self.out.write_all(workflow_safe(&text).as_bytes())
    }
}

impl<W: Write> Write for WorkflowSafe<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if !self.guard {
            return self.out.write(bytes);
        }
        self.pending.extend_from_slice(bytes);
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            self.pass_on(&line)?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write> Drop for WorkflowSafe<W> {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            let _ = self.pass_on(&line);
        }
        let _ = self.out.flush();
    }
}

/// The guarded stdout every command prints its human-readable output to.
#[expect(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "prints: the guarded stdout every command prints its human-readable output through"
)]
pub(crate) fn stdout() -> WorkflowSafe<io::Stdout> {
    WorkflowSafe::for_ci(io::stdout())
}

/// The guarded stderr, for warnings and usage errors.
#[expect(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "prints: the guarded stderr every command warns through"
)]
pub(crate) fn stderr() -> WorkflowSafe<io::Stderr> {
    WorkflowSafe::for_ci(io::stderr())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(text("a\x1b[31mb\x07\0"), "a\\x1b[31mb\\x07\\x00");
        assert_eq!(text("one\ntwo\tthree\r"), "one\ntwo\tthree\\r");
        assert_eq!(text("\u{9b}x\u{202e}y\u{7f}"), "\\u{9b}x\\u{202e}y\\x7f");
        assert_eq!(line("a\nb\tc"), "a\\nb\\tc");
        assert!(matches!(text("plain é ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_line_that_would_be_a_workflow_command_is_defused() {
        assert_eq!(workflow_safe("::error::x"), "\\x3a:error::x");
        assert_eq!(
            workflow_safe("   ::add-mask::s\n"),
            "   \\x3a:add-mask::s\n"
        );
        assert_eq!(
            workflow_safe("\u{a0}::warning::w"),
            "\u{a0}\\x3a:warning::w"
        );
        assert_eq!(workflow_safe("x ##[error]y"), "x ##\\x5berror]y");
        assert_eq!(workflow_safe("a :: b"), "a :: b");
        assert!(matches!(workflow_safe("FAIL  x"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_guarded_writer_checks_whole_lines_however_they_are_written() {
        let mut out = WorkflowSafe::new(Vec::new(), true);
        for piece in ["  :", ":error::a\nok\n  ##", "[x]\nlast ::"] {
            out.write_all(piece.as_bytes()).unwrap();
        }
        out.flush().unwrap();
        let WorkflowSafe { ref out, .. } = out;
        assert_eq!(
            String::from_utf8_lossy(out),
            "  \\x3a:error::a\nok\n  ##\\x5bx]\n"
        );
        let mut plain = WorkflowSafe::new(Vec::new(), false);
        plain.write_all(b"::error::kept\n").unwrap();
        assert_eq!(plain.out, b"::error::kept\n");
    }

    #[test]
    fn json_keeps_the_data_and_escapes_what_serde_leaves_raw() {
        let value = serde_json::json!({"name": "a\u{7f}b\u{9b}c\u{202e}##[x]\u{1b}"});
        let line = serde_json::to_string(&value).unwrap();
        let safe = json(&line);
        assert_eq!(
            safe,
            "{\"name\":\"a\\u007fb\\u009bc\\u202e##\\u005bx]\\u001b\"}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn xml_lines_cannot_be_commands_and_read_back_the_same() {
        let serialized = "<a b=\"x\">one\n  ::error::two ##[x]\n</a>";
        let safe = xml(serialized);
        assert_eq!(safe, "<a b=\"x\">one\n  &#58;:error::two ##&#91;x]\n</a>");
        assert!(matches!(xml("<a>fine</a>"), Cow::Borrowed(_)));
    }

    #[test]
    fn xml_never_holds_a_character_xml_forbids() {
        let document = "<a>\u{fffe}\u{ffff}\u{1}\t\u{10000}</a>";
        assert_eq!(xml(document), "<a>\\u{fffe}\\u{ffff}\\x01\t\u{10000}</a>");
        assert_eq!(text("a\u{fffe}b"), "a\\u{fffe}b");
    }

    #[test]
    fn github_escapes_data_and_properties() {
        assert_eq!(github_data("100%\r\nx"), "100%25%0D%0Ax");
        assert_eq!(github_property("a:b,c"), "a%3Ab%2Cc");
    }

    #[test]
    fn cut_keeps_short_text_and_ends_long_text_with_an_ellipsis() {
        assert!(matches!(cut("12345678", 8), Cow::Borrowed("12345678")));
        assert_eq!(cut("123456789", 8), "1234567\u{2026}");
        // Never fewer than 8 characters, and characters, not bytes, are counted.
        assert_eq!(cut("ééééééééé", 3), "ééééééé\u{2026}");
        assert_eq!(cut("", 0), "");
    }
}
