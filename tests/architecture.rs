//! ARCHITECTURE.md, held: the layers of its code map, read from its table, against the paths
//! into the crate that `src/` names; no circle between the files of a folder; the invariants
//! it states (who starts processes, who writes files, who prints, who reads YAML, who names a
//! contract), each exception where its table says; every module saying what it is for.
//!
//! Clippy holds the process, file and print rules for the code it compiles (`clippy.toml`);
//! this test reads the code as text, so it also sees what no build on this machine compiles
//! (an item under `#[cfg(...)]` that is off here), and it holds what clippy cannot: the layers,
//! the folders, and that each `#[expect(clippy::disallowed_...)]` is one ARCHITECTURE.md names.
//! Comments and string contents are blanked first (a path in a doc comment is no import), and
//! so is every item that only a test build has (`#[cfg(test)]`, `#[cfg(all(test, unix))]`,
//! a file declared by `#[cfg(test)] mod name;`): tests may reach any layer to set a case up.
//! Every other `cfg` is code. Names are resolved through the file's `use ... as` and `type`
//! aliases, so `use crate::contracts as c; c::dlq_consumer` names a contract. A failure names
//! the file, the line and the import or call.
//!
//! An item (a function, or a single statement) that makes a refused call carries
//! `#[expect(clippy::disallowed_methods, reason = "RULE: why")]` (or `disallowed_macros`,
//! `disallowed_types`), its reason starting with the rule's words: `starts a process`, `writes a
//! file`, `prints`, or `writes to a descriptor` (a raw `write(2)`: a print on 1 and 2, a file
//! write on a file). Inside the rule's home (`src/external/`, `src/files/`, the reporters and
//! above) that is all; anywhere else the file has a row in ARCHITECTURE.md's table of
//! exceptions. This test fails on an exception the table does not name, on a row no code
//! needs, on a refused call outside the item its `#[expect]` covers or under the `#[expect]` of
//! another rule; clippy fails on an `#[expect]` that covers no call. Tests and benchmarks set
//! their cases up with files, processes and prints: their crates, and the unit tests
//! (`cfg(test)`, in `src/lib.rs` and in each workspace crate's `lib.rs`, a crate attribute being
//! one crate's), allow the three lints as a whole; the build without `cfg(test)` lints all the
//! rest. clippy.toml at the root holds the workspace's crates as it holds `src/`.
//!
//! It also keeps ARCHITECTURE.md a map: at most `MOST_BYTES` bytes, a paragraph for each folder
//! of its layer table, and each folder's details in the `//!` docs of its own file.

// clippy.toml's rules hold the library; tests set their cases up by writing files, starting
// programs and printing what they found.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_macros,
    clippy::disallowed_types,
    reason = "tests: files, processes and prints set cases up and tell what was found"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "support/plants.rs"]
mod plants;

// ---------------------------------------------------------------------------------------------
// Reading the code

/// One file of the crate: its path from the repository root, its text, and its code: one
/// ASCII byte per character of the text (so a byte offset of the code is a character offset
/// of the text), with comments, string contents and test-only items blanked, lines kept.
#[derive(Clone)]
struct Code {
    path: String,
    text: Vec<char>,
    code: String,
    /// Where each line after the first starts.
    newlines: Vec<usize>,
}

impl Code {
    fn new(path: &str, text: &str) -> Code {
        let (code, _) = blank_test_items(&blank_comments_and_strings(text));
        let newlines = code.match_indices('\n').map(|(at, _)| at).collect();
        Code {
            path: path.to_owned(),
            text: text.chars().collect(),
            code,
            newlines,
        }
    }

    fn line(&self, at: usize) -> usize {
        self.newlines.partition_point(|newline| *newline < at) + 1
    }

    /// The text of the string literal whose opening quote is at `at` in the code.
    fn literal(&self, at: usize) -> String {
        let end = self.code[at + 1..]
            .find('"')
            .map_or(self.code.len(), |e| at + 1 + e);
        self.text[(at + 1).min(self.text.len())..end.min(self.text.len())]
            .iter()
            .collect()
    }
}

/// Comments blanked, and the contents of string and char literals; newlines stay. Every
/// character becomes one ASCII byte (a non-ASCII one in code becomes `_`), so offsets into the
/// result are character offsets into `text`.
fn blank_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(chars.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && matches!(next, Some('"') | Some('#'))
            && raw_string_can_start(&chars, i)
        {
            // A raw string: r"..." or r#"..."# (or br"...").
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            // `r`, the hashes, then the quote: as many bytes as characters.
            out.extend(std::iter::repeat_n(' ', j - i));
            out.push('"');
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    out.push('"');
                    out.extend(std::iter::repeat_n(' ', hashes));
                    j += 1 + hashes;
                    break;
                }
                out.push(blank(chars[j]));
                j += 1;
            }
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            if i < chars.len() {
                out.push('"');
            }
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1b}'), not a lifetime ('a).
            let end = if next == Some('\\') {
                (i + 3..chars.len().min(i + 12)).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push('\'');
                    out.extend(std::iter::repeat_n(' ', end - i - 1));
                    out.push('\'');
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(if c.is_ascii() { c } else { '_' });
            i += 1;
        }
    }
    out
}

/// Whether the `r` at `i` can open a raw string: it starts a token, or follows the `b` of one.
fn raw_string_can_start(chars: &[char], i: usize) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    match i.checked_sub(1).map(|p| chars[p]) {
        None => true,
        Some('b') => i < 2 || !ident(chars[i - 2]),
        Some(c) => !ident(c),
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The byte just after the bracket that closes the one opening at `open`.
fn closing(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, b) in code.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

fn skip_space(code: &[u8], mut i: usize) -> usize {
    while i < code.len() && code[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The word (identifier or keyword) at `i`, if one starts there.
fn word_at(code: &[u8], i: usize) -> &str {
    let end = (i..code.len())
        .find(|&j| !is_ident_byte(code[j]))
        .unwrap_or(code.len());
    std::str::from_utf8(&code[i..end]).unwrap_or("")
}

/// Where the item or statement that starts at `start` ends (the byte after it): its first `;`
/// outside brackets, the end of its block for an item or a block statement, the `,` that ends
/// a field or arm, or the `}` that closes what holds it. Outer attributes before it are skipped.
fn item_end(code: &[u8], start: usize) -> usize {
    let mut i = skip_space(code, start);
    // Further attributes of the same item.
    while code.get(i) == Some(&b'#') && code.get(i + 1) == Some(&b'[') {
        i = skip_space(code, closing(code, i + 1));
    }
    // Qualifiers, then the word that says what it is.
    let mut word_start = i;
    let kind = loop {
        let word = word_at(code, word_start);
        match word {
            "pub" => {
                let after = skip_space(code, word_start + 3);
                word_start = if code.get(after) == Some(&b'(') {
                    skip_space(code, closing(code, after))
                } else {
                    after
                };
            }
            "unsafe" | "async" | "default" | "extern" => {
                let mut after = skip_space(code, word_start + word.len());
                // `extern "C"`: the ABI's string, blanked to quotes and spaces.
                if code.get(after) == Some(&b'"') {
                    after = code[after + 1..]
                        .iter()
                        .position(|b| *b == b'"')
                        .map_or(code.len(), |p| skip_space(code, after + 2 + p));
                }
                if word == "unsafe" && code.get(after) == Some(&b'{') {
                    break "block";
                }
                word_start = after;
            }
            "const" => {
                let after = skip_space(code, word_start + 5);
                if matches!(word_at(code, after), "fn" | "unsafe" | "async" | "extern") {
                    word_start = after;
                } else {
                    break "const";
                }
            }
            _ => break word,
        }
    };
    let ends_at_semicolon = matches!(kind, "let" | "use" | "const" | "static" | "type");
    let is_item = matches!(
        kind,
        "fn" | "impl" | "mod" | "struct" | "enum" | "trait" | "union" | "macro_rules" | "crate"
    ) || ends_at_semicolon;
    let mut depth = 0i64;
    while i < code.len() {
        match code[i] {
            b'{' | b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'}' => {
                depth -= 1;
                if depth < 0 {
                    return i;
                }
                if depth == 0 && !ends_at_semicolon {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            b',' if depth == 0 && !is_item => return i + 1,
            _ => {}
        }
        i += 1;
    }
    code.len()
}

/// Where the block holding byte `at` ends: the `}` that closes it, or the end of the file.
fn enclosing_end(code: &[u8], at: usize) -> usize {
    let mut depth = 0i64;
    for (i, b) in code.iter().enumerate().skip(at) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth < 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Whether a `cfg` predicate holds only in a test build: `test`, `all(.., test, ..)`, or
/// `any(..)` of such.
fn cfg_implies_test(predicate: &str) -> bool {
    let predicate = predicate.trim();
    let list = |inner: &str| -> Vec<String> {
        let mut items = Vec::new();
        let mut depth = 0;
        let mut current = String::new();
        for c in inner.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(std::mem::take(&mut current));
                    continue;
                }
                _ => {}
            }
            current.push(c);
        }
        items.push(current);
        items.into_iter().filter(|i| !i.trim().is_empty()).collect()
    };
    let inner = |prefix: &str| {
        predicate
            .strip_prefix(prefix)
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix('('))
            .and_then(|rest| rest.strip_suffix(')'))
    };
    if predicate == "test" {
        true
    } else if let Some(items) = inner("all") {
        list(items).iter().any(|item| cfg_implies_test(item))
    } else if let Some(items) = inner("any") {
        let items = list(items);
        !items.is_empty() && items.iter().all(|item| cfg_implies_test(item))
    } else {
        false
    }
}

/// `code` (comments and strings already blanked) with every item that only a test build has
/// blanked, and the names of the module files declared that way (`#[cfg(test)] mod name;`).
fn blank_test_items(code: &str) -> (String, Vec<String>) {
    let bytes = code.as_bytes();
    let mut out: Vec<u8> = bytes.to_vec();
    let mut test_files = Vec::new();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while let Some(found) = code[i..].find("#") {
        let at = i + found;
        let inner = bytes.get(at + 1) == Some(&b'!');
        let open = if inner { at + 2 } else { at + 1 };
        if bytes.get(open) != Some(&b'[') {
            i = at + 1;
            continue;
        }
        let end = closing(bytes, open);
        let attribute = &code[open + 1..end.saturating_sub(1)];
        let predicate = attribute
            .trim()
            .strip_prefix("cfg")
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix('('))
            .and_then(|rest| rest.strip_suffix(')'));
        match predicate {
            Some(predicate) if cfg_implies_test(predicate) => {
                if inner {
                    // `#![cfg(test)]`: the whole module is a test's.
                    let to = enclosing_end(bytes, end);
                    blank(&mut out, at, to);
                    i = to.max(at + 1);
                    continue;
                }
                let to = item_end(bytes, end);
                let item = code[end..to].trim();
                if let Some(rest) = item.strip_prefix("mod").or_else(|| {
                    item.strip_prefix("pub")
                        .and_then(|r| r.split_once("mod").map(|(_, r)| r))
                }) && rest.trim_end().ends_with(';')
                {
                    test_files.push(rest.trim().trim_end_matches(';').trim().to_owned());
                }
                blank(&mut out, at, to);
                i = to.max(at + 1);
            }
            _ => i = end,
        }
    }
    (String::from_utf8(out).expect("ASCII"), test_files)
}

// ---------------------------------------------------------------------------------------------
// Paths, imports and aliases

/// A path the code names: `crate::run::runner::SpecReport`, `fs::write`, `println!`, the
/// `.persist(` of a method call, or a leaf of a `use` tree; with the paths it resolves to
/// through the file's imports and aliases (itself when none applies).
#[derive(Debug, Clone)]
struct Mention {
    at: usize,
    written: Vec<String>,
    resolved: Vec<(Vec<String>, bool)>,
    form: Form,
}

#[derive(Debug, Clone, PartialEq)]
enum Form {
    /// A path in code: a call, a type, a value.
    Path,
    /// A macro called by this path.
    Macro,
    /// A method called on a value: `.name(` and what follows the parenthesis.
    Method(String),
    /// A leaf of a `use` tree (of a `pub use`, when true): it binds a name, and calls nothing.
    Use(bool),
}

impl Mention {
    /// The paths it resolves to.
    fn paths(&self) -> impl Iterator<Item = &Vec<String>> {
        self.resolved.iter().map(|(path, _)| path)
    }

    /// The paths into the crate it stands for as written: itself, or what a new name
    /// (`use crate::contracts as c`) it goes through stands for when it is a path through it
    /// (`c::dlq_consumer`); never again each path a plain `use` brought in, whose `use` is the
    /// arrow, nor a lone name (`c` may be a closure's argument where the alias is not seen).
    fn arrow_paths(&self) -> impl Iterator<Item = &Vec<String>> {
        let through = self.written.len() >= 2;
        std::iter::once(&self.written).chain(
            self.resolved
                .iter()
                .filter(move |(path, renamed)| through && *renamed && *path != self.written)
                .map(|(path, _)| path),
        )
    }

    fn shown(&self) -> String {
        let written = self.written.join("::");
        match &self.form {
            Form::Macro => format!("{written}!"),
            Form::Method(_) => format!(".{written}("),
            _ => written,
        }
    }
}

/// A leaf of a `use` tree: the path, and the name it binds (`None` for a glob).
#[derive(Debug, Clone)]
struct UseLeaf {
    at: usize,
    path: Vec<String>,
    name: Option<String>,
}

/// Reads the segments of a path at `i`: `a::b::c`, stopping before `::{`, `::*`, `::<`.
fn path_segments(code: &[u8], mut i: usize) -> (Vec<String>, usize) {
    let mut segments = Vec::new();
    loop {
        let word = word_at(code, i);
        if word.is_empty() {
            break;
        }
        segments.push(word.to_owned());
        i += word.len();
        let after = skip_space(code, i);
        if code.get(after) == Some(&b':')
            && code.get(after + 1) == Some(&b':')
            && code
                .get(skip_space(code, after + 2))
                .is_some_and(|b| is_ident_byte(*b) && !b.is_ascii_digit())
        {
            i = skip_space(code, after + 2);
        } else {
            break;
        }
    }
    (segments, i)
}

/// The leaves of the `use` tree that starts at `i`, under `prefix`; returns where it ends.
fn use_tree(code: &[u8], i: usize, prefix: &[String], leaves: &mut Vec<UseLeaf>) -> usize {
    let mut i = skip_space(code, i);
    if code.get(i) == Some(&b':') && code.get(i + 1) == Some(&b':') {
        i = skip_space(code, i + 2);
    }
    let at = i;
    let (segments, after) = path_segments(code, i);
    let mut path = prefix.to_vec();
    path.extend(segments.iter().cloned());
    i = skip_space(code, after);
    if code.get(i) == Some(&b':') && code.get(i + 1) == Some(&b':') {
        i = skip_space(code, i + 2);
    }
    match code.get(i) {
        Some(b'{') => {
            i += 1;
            loop {
                i = skip_space(code, i);
                match code.get(i) {
                    Some(b'}') => return i + 1,
                    Some(b',') => i += 1,
                    None => return i,
                    _ => {
                        let next = use_tree(code, i, &path, leaves);
                        if next <= i {
                            return code.len();
                        }
                        i = next;
                    }
                }
            }
        }
        Some(b'*') => {
            leaves.push(UseLeaf {
                at,
                path,
                name: None,
            });
            i + 1
        }
        _ => {
            if path.last().is_some_and(|last| last == "self") {
                path.pop();
            }
            let mut name = path.last().cloned();
            if word_at(code, i) == "as" {
                let alias_at = skip_space(code, i + 2);
                let alias = word_at(code, alias_at);
                name = (alias != "_").then(|| alias.to_owned());
                i = alias_at + alias.len();
            }
            if !path.is_empty() {
                leaves.push(UseLeaf {
                    at,
                    path,
                    name: name.or(Some(String::new())),
                });
            }
            i
        }
    }
}

/// Every `use` declaration of `code`: its span, and its leaves.
fn use_declarations(code: &str) -> Vec<((usize, usize), Vec<UseLeaf>)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for (at, _) in code.match_indices("use") {
        let before = at.checked_sub(1).map(|p| bytes[p]);
        if before.is_some_and(|b| is_ident_byte(b) || b == b':' || b == b'.')
            || !bytes.get(at + 3).is_some_and(u8::is_ascii_whitespace)
        {
            continue;
        }
        let mut leaves = Vec::new();
        let end = use_tree(bytes, at + 3, &[], &mut leaves);
        let end = code[end..].find(';').map_or(code.len(), |e| end + e + 1);
        found.push(((at, end), leaves));
    }
    found
}

/// The names a file binds to paths: each `use` leaf's name (`as` or its last segment), and
/// each `type NAME = path;` and `extern crate a as b;`. A name bound twice keeps both.
#[derive(Clone)]
struct Names {
    bound: BTreeMap<String, Vec<Binding>>,
    globs: Vec<Vec<String>>,
}

/// What a name is bound to, and whether it is a new name for it (`as`, `type`): a path named
/// through a new name is a path into what that name stands for.
#[derive(Debug, Clone, PartialEq)]
struct Binding {
    path: Vec<String>,
    renamed: bool,
}

fn names(code: &str, uses: &[((usize, usize), Vec<UseLeaf>)]) -> Names {
    let mut bound: BTreeMap<String, Vec<Binding>> = BTreeMap::new();
    let mut globs = Vec::new();
    for (_, leaves) in uses {
        for leaf in leaves {
            match &leaf.name {
                None => globs.push(leaf.path.clone()),
                Some(name) if !name.is_empty() => {
                    let binding = Binding {
                        path: leaf.path.clone(),
                        renamed: leaf.path.last() != Some(name),
                    };
                    let bindings = bound.entry(name.clone()).or_default();
                    if !bindings.contains(&binding) {
                        bindings.push(binding);
                    }
                }
                Some(_) => {}
            }
        }
    }
    let bytes = code.as_bytes();
    for keyword in ["type", "crate"] {
        for (at, _) in code.match_indices(keyword) {
            if (at > 0 && is_ident_byte(bytes[at - 1]))
                || !bytes
                    .get(at + keyword.len())
                    .is_some_and(u8::is_ascii_whitespace)
            {
                continue;
            }
            let name_at = skip_space(bytes, at + keyword.len());
            if keyword == "crate" {
                // `extern crate a as b;`
                let (crate_name, after) = path_segments(bytes, name_at);
                let as_at = skip_space(bytes, after);
                if code[..at].trim_end().ends_with("extern") && word_at(bytes, as_at) == "as" {
                    let alias_at = skip_space(bytes, as_at + 2);
                    bound
                        .entry(word_at(bytes, alias_at).to_owned())
                        .or_default()
                        .push(Binding {
                            path: crate_name,
                            renamed: true,
                        });
                }
                continue;
            }
            let name = word_at(bytes, name_at);
            let eq = skip_space(bytes, name_at + name.len());
            if name.is_empty() || bytes.get(eq) != Some(&b'=') {
                continue;
            }
            let (target, after) = path_segments(bytes, skip_space(bytes, eq + 1));
            if !target.is_empty() && bytes.get(skip_space(bytes, after)) == Some(&b';') {
                bound.entry(name.to_owned()).or_default().push(Binding {
                    path: target,
                    renamed: true,
                });
            }
        }
    }
    Names { bound, globs }
}

/// `path` through the bound names: its first segment replaced by what it is bound to, again
/// while that binds further (at most a few steps; a name bound to itself stays). With each,
/// whether a new name (`as`, `type`) was seen through on the way.
fn resolve(path: &[String], names: &Names) -> Vec<(Vec<String>, bool)> {
    let mut done: Vec<(Vec<String>, bool)> = Vec::new();
    let mut todo = vec![(path.to_vec(), 0, false)];
    while let Some((path, steps, renamed)) = todo.pop() {
        let first = path.first().map(String::as_str).unwrap_or("");
        let bound = names.bound.get(first).filter(|_| {
            !matches!(first, "crate" | "super" | "self" | "Self" | "$crate") && steps < 4
        });
        match bound {
            Some(targets) => {
                for target in targets {
                    let mut next = target.path.clone();
                    next.extend(path[1..].iter().cloned());
                    let renamed = renamed || target.renamed;
                    if next == path {
                        if !done.iter().any(|(p, _)| *p == next) {
                            done.push((next, renamed));
                        }
                    } else {
                        todo.push((next, steps + 1, renamed));
                    }
                }
            }
            None => {
                if !done.iter().any(|(p, _)| *p == path) {
                    done.push((path, renamed));
                }
            }
        }
    }
    done
}

/// The words after which a name is defined, not used.
const DEFINING: &[&str] = &[
    "mod",
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "union",
    "const",
    "static",
    "let",
    "mut",
    "macro_rules",
];

/// Whether `pub` (or `pub(crate)`, `pub(super)`, ...) stands just before `at`.
fn pub_before(code: &[u8], at: usize) -> bool {
    let mut end = at;
    while end > 0 && code[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    if end > 0 && code[end - 1] == b')' {
        match code[..end].iter().rposition(|b| *b == b'(') {
            Some(open) => end = open,
            None => return false,
        }
    }
    word_before(code, end) == "pub"
}

/// The word that ends just before `at`, spaces between skipped.
fn word_before(code: &[u8], at: usize) -> &str {
    let mut end = at;
    while end > 0 && code[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && is_ident_byte(code[start - 1]) {
        start -= 1;
    }
    std::str::from_utf8(&code[start..end]).unwrap_or("")
}

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
    "return", "static", "struct", "trait", "true", "type", "union", "unsafe", "use", "where",
    "while",
];

/// Every path the code names, resolved; `use` declarations give their leaves.
fn mentions(code: &str) -> (Vec<Mention>, Names) {
    let bytes = code.as_bytes();
    let uses = use_declarations(code);
    let names = names(code, &uses);
    let mut found = Vec::new();
    for ((start, _), leaves) in &uses {
        let public = pub_before(bytes, *start);
        for leaf in leaves {
            let resolved = resolve(&leaf.path, &names);
            found.push(Mention {
                at: leaf.at,
                written: leaf.path.clone(),
                resolved,
                form: Form::Use(public),
            });
        }
    }
    let in_use = |at: usize| {
        uses.iter()
            .any(|((from, to), _)| (*from..*to).contains(&at))
    };
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_alphabetic() || b == b'_') {
            i += 1;
            continue;
        }
        let before = i.checked_sub(1).map(|p| bytes[p]);
        let before2 = i.checked_sub(2).map(|p| bytes[p]);
        if before.is_some_and(|c| is_ident_byte(c) || c == b'\'' || c == b'#')
            || (before == Some(b':') && before2 == Some(b':'))
            || in_use(i)
        {
            i += word_at(bytes, i).len().max(1);
            continue;
        }
        let method = before == Some(b'.') && before2 != Some(b'.');
        let (mut segments, end) = path_segments(bytes, i);
        if before == Some(b'$') && segments.first().is_some_and(|s| s == "crate") {
            segments[0] = "crate".to_owned();
        }
        let at = i;
        i = end.max(i + 1);
        if segments.len() == 1 && KEYWORDS.contains(&segments[0].as_str()) {
            continue;
        }
        // A name being defined (`mod name;`, `fn write(`) is no mention of another.
        if segments.len() == 1 && DEFINING.contains(&word_before(bytes, at)) {
            continue;
        }
        let after = skip_space(bytes, end);
        let form = if method {
            if bytes.get(after) != Some(&b'(') {
                continue;
            }
            let args = code[after + 1..(after + 16).min(code.len())]
                .trim_start()
                .to_owned();
            Form::Method(args)
        } else if bytes.get(end) == Some(&b'!') && bytes.get(end + 1) != Some(&b'=') {
            Form::Macro
        } else {
            Form::Path
        };
        let resolved = if matches!(form, Form::Method(_)) {
            vec![(segments.clone(), false)]
        } else {
            resolve(&segments, &names)
        };
        found.push(Mention {
            at,
            written: segments,
            resolved,
            form,
        });
    }
    (found, names)
}

// ---------------------------------------------------------------------------------------------
// Modules and arrows

/// The layers that are crates of the workspace: `crates/NAME/` holds layer `NAME`, whose
/// `src/lib.rs` is the folder's `mod.rs` (ARCHITECTURE.md, "Crates").
const CRATES: &str = "crates/";

/// Where a file sits in the code as one crate: `src/run/runner.rs` is `run/runner.rs`, and a file
/// of a workspace crate is its layer's, `crates/text/src/yaml.rs` being `text/yaml.rs` (its
/// `lib.rs`, `text/mod.rs`). `None` for a file of neither.
fn in_crate(path: &str) -> Option<String> {
    if let Some(rest) = path.strip_prefix("src/") {
        return Some(rest.to_owned());
    }
    let (layer, file) = path.strip_prefix(CRATES)?.split_once("/src/")?;
    Some(match file {
        "lib.rs" => format!("{layer}/mod.rs"),
        _ => format!("{layer}/{file}"),
    })
}

/// The layer a file of a workspace crate is: `crates/text/src/yaml.rs` is `text`.
fn crate_layer(path: &str) -> Option<&str> {
    path.strip_prefix(CRATES)?
        .split_once("/src/")
        .map(|(layer, _)| layer)
}

/// The top-level module a file belongs to: `src/run/runner.rs` is `run`, `src/x.rs` is `x`,
/// `crates/text/src/yaml.rs` is `text`; the crate roots `lib.rs` and `main.rs` of `src/` belong
/// to none.
fn top_module(path: &str) -> Option<String> {
    let rest = in_crate(path)?;
    let first = rest.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_owned())
}

/// The module path of a file: `src/run/runner.rs` is `[run, runner]`, a `mod.rs` is its
/// folder's, a workspace crate's `lib.rs` its layer's.
fn module_path(path: &str) -> Vec<String> {
    let rest = in_crate(path).unwrap_or_else(|| path.to_owned());
    let mut parts: Vec<String> = rest.split('/').map(str::to_owned).collect();
    if let Some(last) = parts.pop() {
        let stem = last.strip_suffix(".rs").unwrap_or(&last).to_owned();
        if !matches!(stem.as_str(), "mod" | "lib" | "main") {
            parts.push(stem);
        }
    }
    parts
}

/// The inline modules of a file (`mod name { ... }`): each one's span and name.
fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for (at, _) in code.match_indices("mod") {
        if at > 0 && is_ident_byte(bytes[at - 1])
            || !bytes.get(at + 3).is_some_and(u8::is_ascii_whitespace)
        {
            continue;
        }
        let name_at = skip_space(bytes, at + 3);
        let name = word_at(bytes, name_at);
        let open = skip_space(bytes, name_at + name.len());
        if !name.is_empty() && bytes.get(open) == Some(&b'{') {
            found.push((open, closing(bytes, open), name.to_owned()));
        }
    }
    found
}

/// The modules a file declares (`mod name;` and `mod name { ... }`), at its own level.
fn declared_modules(code: &str) -> BTreeSet<String> {
    let bytes = code.as_bytes();
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("mod") {
        if at > 0 && is_ident_byte(bytes[at - 1])
            || !bytes.get(at + 3).is_some_and(u8::is_ascii_whitespace)
        {
            continue;
        }
        let name = word_at(bytes, skip_space(bytes, at + 3));
        if !name.is_empty() {
            found.insert(name.to_owned());
        }
    }
    found
}

/// A file of the crate, read: its code, what it names, the modules it declares.
#[derive(Clone)]
struct File {
    code: Code,
    mentions: Vec<Mention>,
    globs: Vec<Vec<String>>,
    inline: Vec<(usize, usize, String)>,
    declared: BTreeSet<String>,
}

impl File {
    fn new(code: Code) -> File {
        let (mentions, names) = mentions(&code.code);
        let inline = inline_modules(&code.code);
        let declared = declared_modules(&code.code);
        File {
            code,
            mentions,
            globs: names.globs,
            inline,
            declared,
        }
    }

    fn path(&self) -> &str {
        &self.code.path
    }

    /// The module a byte of the file is in: the file's, and the inline modules around it.
    fn module_at(&self, at: usize) -> Vec<String> {
        let mut module = module_path(&self.code.path);
        for (from, to, name) in &self.inline {
            if (*from..*to).contains(&at) {
                module.push(name.clone());
            }
        }
        module
    }

    /// The module path in the crate that `path`, named at `at`, leads to, when it leads into
    /// the crate: `crate::`, `super::`, `self::`, or a module this file declares.
    fn absolute(&self, at: usize, path: &[String]) -> Option<Vec<String>> {
        let module = self.module_at(at);
        let first = path.first()?.as_str();
        match first {
            // A workspace crate's `crate` is its layer.
            "crate" => Some(
                crate_layer(self.path())
                    .map(str::to_owned)
                    .into_iter()
                    .chain(path[1..].iter().cloned())
                    .collect(),
            ),
            "self" => Some(module.iter().chain(&path[1..]).cloned().collect()),
            "super" => {
                let climbs = path.iter().take_while(|s| *s == "super").count();
                let base = module.len().checked_sub(climbs)?;
                Some(
                    module[..base]
                        .iter()
                        .chain(&path[climbs..])
                        .cloned()
                        .collect(),
                )
            }
            _ if self.declared.contains(first) && path.len() > 1 => {
                Some(module.iter().chain(path).cloned().collect())
            }
            _ => None,
        }
    }
}

/// A path into the crate named by one file: `crate::run::runner::SpecReport` in
/// `src/report/human.rs` at line 12 is an arrow from `report` to `run`.
#[derive(Debug, Clone)]
struct Arrow {
    file: String,
    line: usize,
    from: String,
    to: String,
    import: String,
}

impl std::fmt::Display for Arrow {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}:{} uses `{}`", self.file, self.line, self.import)
    }
}

/// Every module path in the crate a file names, with where and how: a macro called by path
/// (`crate::mistakes!`) is the crate root's, not a module's.
fn targets(file: &File) -> Vec<(usize, Vec<String>, String)> {
    let mut found = Vec::new();
    for mention in &file.mentions {
        if matches!(mention.form, Form::Macro | Form::Method(_)) {
            continue;
        }
        for resolved in mention.arrow_paths() {
            if let Some(absolute) = file.absolute(mention.at, resolved)
                && !absolute.is_empty()
            {
                let shown = if resolved == &mention.written {
                    mention.shown()
                } else {
                    format!("{}` (that is, `{}", mention.shown(), resolved.join("::"))
                };
                found.push((mention.at, absolute, shown));
            }
        }
    }
    found
}

/// Every arrow from the file's top-level module to another.
fn arrows(file: &File) -> Vec<Arrow> {
    let Some(from) = top_module(file.path()) else {
        return Vec::new();
    };
    let mut found: Vec<Arrow> = Vec::new();
    for (at, absolute, shown) in targets(file) {
        let to = &absolute[0];
        let line = file.code.line(at);
        if *to != from
            && !found
                .iter()
                .any(|a| a.line == line && a.to == *to && a.import == shown)
        {
            found.push(Arrow {
                file: file.path().to_owned(),
                line,
                from: from.clone(),
                to: to.clone(),
                import: shown,
            });
        }
    }
    found
}

/// The layers of the code map: the rows of ARCHITECTURE.md's table whose folder cell is
/// `` `src/NAME/` ``, with the layer number of their first cell. A module may use the modules
/// of lower layers only; modules of one layer are peers and do not use each other.
fn layers(architecture: &str) -> BTreeMap<String, u32> {
    let mut layers = BTreeMap::new();
    for line in architecture.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[0].is_empty() {
            continue;
        }
        let Ok(layer) = cells[1].parse::<u32>() else {
            continue;
        };
        let folder = cells[2].trim_matches('`');
        if let Some(name) = folder
            .strip_prefix("src/")
            .or_else(|| folder.strip_prefix(CRATES))
            .and_then(|f| f.strip_suffix('/'))
        {
            layers.insert(name.to_owned(), layer);
        }
    }
    layers
}

/// The strongly connected components of more than one node of a graph.
fn components<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<BTreeSet<&'a str>> {
    let reach = |start: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start];
        while let Some(node) = todo.pop() {
            for next in graph.get(node).into_iter().flatten() {
                if seen.insert(*next) {
                    todo.push(next);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&str, BTreeSet<&str>> =
        graph.keys().map(|node| (*node, reach(node))).collect();
    let mut told = BTreeSet::new();
    let mut found = Vec::new();
    for node in graph.keys() {
        if told.contains(node) || !reached[node].contains(node) {
            continue;
        }
        let component: BTreeSet<&str> = reached[node]
            .iter()
            .copied()
            .filter(|other| reached.get(other).is_some_and(|r| r.contains(node)))
            .collect();
        told.extend(component.iter().copied());
        if component.len() > 1 {
            found.push(component);
        }
    }
    found
}

/// The cycles between top-level modules, each told by the arrows that close it: one file and
/// import per arrow.
fn cycles(arrows: &[Arrow]) -> Vec<String> {
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for arrow in arrows {
        graph.entry(&arrow.from).or_default().insert(&arrow.to);
        graph.entry(&arrow.to).or_default();
    }
    let mut messages = Vec::new();
    for component in components(&graph) {
        let mut message = format!(
            "a cycle between top-level modules: {}",
            component.iter().copied().collect::<Vec<_>>().join(", ")
        );
        let mut shown = BTreeSet::new();
        for arrow in arrows {
            if component.contains(arrow.from.as_str())
                && component.contains(arrow.to.as_str())
                && shown.insert((&arrow.from, &arrow.to))
            {
                message.push_str(&format!("\n  {} -> {}: {arrow}", arrow.from, arrow.to));
            }
        }
        messages.push(message);
    }
    messages
}

/// The arrows that do not point down the layers, and the modules the code map does not place.
fn against_layers(layers: &BTreeMap<String, u32>, arrows: &[Arrow]) -> Vec<String> {
    let mut messages = Vec::new();
    for arrow in arrows {
        let (Some(from), Some(to)) = (layers.get(&arrow.from), layers.get(&arrow.to)) else {
            messages.push(format!(
                "{arrow}: ARCHITECTURE.md's code map does not place `{}`",
                if layers.contains_key(&arrow.from) {
                    &arrow.to
                } else {
                    &arrow.from
                }
            ));
            continue;
        };
        if to >= from {
            messages.push(format!(
                "{arrow}: `{}` (layer {from}) may not use `{}` (layer {to}); a module uses only \
                 lower layers (ARCHITECTURE.md): move what is misplaced",
                arrow.from, arrow.to
            ));
        }
    }
    messages
}

// ---------------------------------------------------------------------------------------------
// Circles inside a folder

/// A node of a folder's graph: one of its files or subfolders, or the folder's own file
/// (`mod.rs`, or `NAME.rs` beside folder `NAME/`), called `mod`.
const OWN_FILE: &str = "mod";

/// The children of each folder of `src/` (keyed by module path, `external/sandbox`), and the
/// names the folder's own file re-exports from them (`pub use child::Name`).
struct Folders {
    children: BTreeMap<String, BTreeSet<String>>,
    reexports: BTreeMap<String, BTreeMap<String, String>>,
}

fn folders(files: &[File]) -> Folders {
    let mut children: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let module = module_path(file.path());
        for depth in 1..module.len() {
            children
                .entry(module[..depth].join("/"))
                .or_default()
                .insert(module[depth].clone());
        }
    }
    let mut reexports: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in files {
        let module = module_path(file.path());
        let key = module.join("/");
        let Some(kids) = children.get(&key) else {
            continue;
        };
        for mention in &file.mentions {
            if mention.form != Form::Use(true) {
                continue;
            }
            for resolved in mention.paths() {
                let Some(absolute) = file.absolute(mention.at, resolved) else {
                    continue;
                };
                if absolute.len() > module.len() + 1
                    && absolute.starts_with(&module)
                    && kids.contains(&absolute[module.len()])
                {
                    let name = absolute.last().cloned().unwrap_or_default();
                    reexports
                        .entry(key.clone())
                        .or_default()
                        .insert(name, absolute[module.len()].clone());
                }
            }
        }
    }
    Folders {
        children,
        reexports,
    }
}

/// One arrow between two nodes of a folder.
struct Step {
    from: String,
    to: String,
    file: String,
    line: usize,
    import: String,
}

/// The arrows between the files of each folder, keyed by folder.
fn folder_steps(files: &[File], folders: &Folders) -> BTreeMap<String, Vec<Step>> {
    let mut steps: BTreeMap<String, Vec<Step>> = BTreeMap::new();
    for file in files {
        let module = module_path(file.path());
        for (at, absolute, shown) in targets(file) {
            // Every folder holding both ends, below the crate root.
            for depth in 1..=module.len().min(absolute.len()) {
                if module[..depth] != absolute[..depth] {
                    break;
                }
                let folder = module[..depth].join("/");
                let Some(kids) = folders.children.get(&folder) else {
                    continue;
                };
                let node = |path: &[String]| -> String {
                    match path.get(depth) {
                        Some(name) if kids.contains(name) => name.clone(),
                        Some(name) => folders
                            .reexports
                            .get(&folder)
                            .and_then(|names| names.get(name))
                            .cloned()
                            .unwrap_or_else(|| OWN_FILE.to_owned()),
                        None => OWN_FILE.to_owned(),
                    }
                };
                let (from, to) = (node(&module), node(&absolute));
                if from != to && from != OWN_FILE && to != OWN_FILE {
                    steps.entry(folder).or_default().push(Step {
                        from,
                        to,
                        file: file.path().to_owned(),
                        line: file.code.line(at),
                        import: shown.clone(),
                    });
                }
            }
        }
    }
    steps
}

/// Where the folder of module path `folder` is on disk, read off a file in it through
/// `in_crate`: `run` is `src/run/`, and a folder of a workspace crate's layer is under the
/// crate, `text/yaml` being `crates/text/src/yaml/`.
fn folder_on_disk(folder: &str, files: &[File]) -> String {
    files
        .iter()
        .find_map(|file| {
            let in_folder = in_crate(file.path())?;
            let name = in_folder.strip_prefix(folder)?.strip_prefix('/')?;
            // A crate's `lib.rs` is read as `mod.rs`, which no path on disk ends with.
            file.path().strip_suffix(name).map(str::to_owned)
        })
        .unwrap_or_else(|| format!("src/{folder}/"))
}

/// The circles between the files of a folder, each with the arrows that close it.
fn folder_circles(files: &[File]) -> Vec<String> {
    let folders = folders(files);
    let steps = folder_steps(files, &folders);
    let mut messages = Vec::new();
    for (folder, steps) in &steps {
        let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for step in steps {
            graph.entry(&step.from).or_default().insert(&step.to);
            graph.entry(&step.to).or_default();
        }
        for component in components(&graph) {
            let members: Vec<&str> = component.iter().copied().collect();
            let mut message = format!(
                "a circle between the files of {}: {}; move what both sides use into a module \
                 both import (or merge what is one thing)",
                folder_on_disk(folder, files),
                members.join(", ")
            );
            let mut shown = BTreeSet::new();
            for step in steps {
                if component.contains(step.from.as_str())
                    && component.contains(step.to.as_str())
                    && shown.insert((&step.from, &step.to))
                {
                    message.push_str(&format!(
                        "\n  {} -> {}: {}:{} uses `{}`",
                        step.from, step.to, step.file, step.line, step.import
                    ));
                }
            }
            messages.push(message);
        }
    }
    messages
}

// ---------------------------------------------------------------------------------------------
// The rules of clippy.toml, and their exceptions

/// The lints clippy.toml's lists feed.
const LINTS: [&str; 3] = [
    "clippy::disallowed_methods",
    "clippy::disallowed_macros",
    "clippy::disallowed_types",
];

/// The rules, in the words each clippy.toml reason starts with, an `#[expect]`'s reason too,
/// and ARCHITECTURE.md's table of exceptions.
const STARTS: &str = "starts a process";
const WRITES: &str = "writes a file";
const PRINTS: &str = "prints";
const DESCRIPTOR: &str = "writes to a descriptor";
const NAMES_CONTRACT: &str = "names a contract";
const READS_YAML: &str = "reads YAML";
const RULES: [&str; 6] = [
    STARTS,
    WRITES,
    PRINTS,
    DESCRIPTOR,
    NAMES_CONTRACT,
    READS_YAML,
];

/// One refused path of clippy.toml: its lint, its segments, its rule.
#[derive(Debug, Clone)]
struct Refused {
    lint: &'static str,
    path: Vec<String>,
    rule: String,
}

/// The entries of clippy.toml's `disallowed-methods`, `-macros` and `-types`.
fn refused(clippy_toml: &str) -> Vec<Refused> {
    let mut found = Vec::new();
    let mut lint = None;
    for line in clippy_toml.lines() {
        let line = line.trim();
        if let Some(key) = line.strip_suffix("= [").map(str::trim) {
            lint = match key {
                "disallowed-methods" => Some(LINTS[0]),
                "disallowed-macros" => Some(LINTS[1]),
                "disallowed-types" => Some(LINTS[2]),
                _ => None,
            };
            continue;
        }
        let (Some(lint), Some(path)) = (lint, quoted_after(line, "path")) else {
            continue;
        };
        let reason = quoted_after(line, "reason").unwrap_or_default();
        let rule = RULES
            .iter()
            .find(|rule| reason.starts_with(*rule))
            .map_or(reason.clone(), |rule| (*rule).to_owned());
        found.push(Refused {
            lint,
            path: path.split("::").map(str::to_owned).collect(),
            rule,
        });
    }
    found
}

/// The string after `key = ` in a TOML inline table's line.
fn quoted_after(line: &str, key: &str) -> Option<String> {
    let at = line.find(&format!("{key} = \""))? + key.len() + 4;
    let end = line[at..].find('"')? + at;
    Some(line[at..end].to_owned())
}

/// Methods the text finds by their call on a value (`.persist(`), since a text cannot know a
/// receiver's type: only names no other call of dlqspec's uses.
const METHOD_CALLS: &[&str] = &[
    "persist",
    "persist_noclobber",
    "set_permissions",
    "set_len",
    "set_times",
    "set_modified",
    "tempfile",
    "tempfile_in",
];

/// Builder methods found by their call with `true`: `OpenOptions`' `.write(true)`.
const BUILDER_CALLS: &[&str] = &["write", "append", "truncate", "create", "create_new"];

/// Whether `mention` names the refused path `refused`.
fn names_refused(mention: &Mention, refused: &Refused, globs: &[Vec<String>]) -> bool {
    let path = &refused.path;
    match &mention.form {
        Form::Use(_) => false,
        Form::Method(args) => {
            refused.lint == LINTS[0]
                && path.len() >= 2
                && path[path.len() - 2].starts_with(|c: char| c.is_ascii_uppercase())
                && mention.written.len() == 1
                && path.last() == mention.written.first()
                && (METHOD_CALLS.contains(&mention.written[0].as_str())
                    || (BUILDER_CALLS.contains(&mention.written[0].as_str())
                        && args.starts_with("true")))
        }
        form => {
            let wants_macro = refused.lint == LINTS[1];
            if (*form == Form::Macro) != wants_macro {
                return false;
            }
            mention.paths().any(|candidate| {
                candidate == path
                    || (candidate.len() >= 2 && path.ends_with(candidate))
                    // The standard library's macros are in every module's prelude.
                    || (wants_macro
                        && candidate.len() == 1
                        && path.len() == 2
                        && path[0] == "std"
                        && candidate[0] == path[1])
                    || (candidate.len() == 1
                        && globs.iter().any(|glob| {
                            path.len() == glob.len() + 1
                                && path.starts_with(glob)
                                && path.last() == candidate.first()
                        }))
            })
        }
    }
}

/// An `#[allow(...)]` or `#[expect(...)]` of clippy.toml's lints: where, which lints, the rule
/// its reason starts with, and the span of code it covers.
#[derive(Debug)]
struct Allowance {
    at: usize,
    lints: Vec<&'static str>,
    reason: Option<String>,
    scope: (usize, usize),
}

impl Allowance {
    fn rule(&self) -> Option<&'static str> {
        let reason = self.reason.as_deref()?;
        RULES.iter().copied().find(|rule| reason.starts_with(rule))
    }
}

/// The allowances of clippy.toml's lints in a file.
fn allowances(code: &Code) -> Vec<Allowance> {
    let bytes = code.code.as_bytes();
    let mut found = Vec::new();
    for (at, _) in code.code.match_indices('#') {
        let inner = bytes.get(at + 1) == Some(&b'!');
        let open = if inner { at + 2 } else { at + 1 };
        if bytes.get(open) != Some(&b'[') {
            continue;
        }
        let end = closing(bytes, open);
        let body = code.code[open + 1..end.saturating_sub(1)].trim();
        let Some(list) = body
            .strip_prefix("allow")
            .or_else(|| body.strip_prefix("expect"))
            .map(str::trim_start)
            .filter(|rest| rest.starts_with('('))
        else {
            continue;
        };
        let lints: Vec<&'static str> = LINTS
            .iter()
            .copied()
            .filter(|lint| {
                list.split([',', '(', ')', ' ', '\n'])
                    .any(|item| item.trim() == *lint)
            })
            .collect();
        if lints.is_empty() {
            continue;
        }
        let base = list.as_ptr() as usize - code.code.as_ptr() as usize;
        let reason = list.find("reason").and_then(|r| {
            let quote = code.code[base + r..].find('"')? + base + r;
            Some(code.literal(quote))
        });
        let scope = if inner {
            (at, enclosing_end(bytes, end))
        } else {
            (at, item_end(bytes, end))
        };
        found.push(Allowance {
            at,
            lints,
            reason,
            scope,
        });
    }
    found
}

/// ARCHITECTURE.md's table of exceptions: `| \`src/FILE\` | RULE | why |` rows, as (file, rule).
fn exceptions(architecture: &str) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for line in architecture.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[0].is_empty() {
            continue;
        }
        let (Some(file), rule) = (
            cells[1]
                .strip_prefix('`')
                .and_then(|c| c.strip_suffix('`'))
                .filter(|c| (c.starts_with("src/") || c.starts_with(CRATES)) && c.ends_with(".rs")),
            cells[2],
        ) else {
            continue;
        };
        if RULES.contains(&rule) {
            found.insert((file.to_owned(), rule.to_owned()));
        }
    }
    found
}

/// Whether `rule` belongs in `path` without an exception: the rule's home, as ARCHITECTURE.md's
/// invariants put it.
fn at_home(rule: &str, path: &str, layers: &BTreeMap<String, u32>) -> bool {
    match rule {
        STARTS => path.starts_with("src/external/"),
        WRITES => path.starts_with("src/files/"),
        PRINTS => {
            path == "src/main.rs"
                || top_module(path).is_some_and(|module| {
                    let report = layers.get("report").copied().unwrap_or(u32::MAX);
                    layers.get(&module).is_some_and(|layer| *layer >= report)
                })
        }
        NAMES_CONTRACT => path.starts_with("src/contracts/"),
        READS_YAML => {
            path == "crates/text/src/yaml.rs" || path.starts_with("crates/text/src/yaml/")
        }
        _ => false,
    }
}

/// Whether a call of `call_rule` may stand under an allowance of `allowed`: the same rule, or
/// a raw write (a print on 1 and 2, a file write on a file) under either.
fn covers(allowed: &str, call_rule: &str) -> bool {
    allowed == call_rule || (call_rule == DESCRIPTOR && matches!(allowed, WRITES | PRINTS))
}

/// The crates only `crates/text/src/yaml*` may use: the one door to the YAML libraries.
const YAML_CRATES: &[&str] = &["serde_saphyr", "granit_parser", "saphyr_parser", "saphyr"];

/// Everything the rules of clippy.toml, the YAML door and the contract names find wrong in
/// `files`, with ARCHITECTURE.md's layers and exceptions.
fn broken_rules(
    files: &[File],
    refused: &[Refused],
    layers: &BTreeMap<String, u32>,
    exceptions: &BTreeSet<(String, String)>,
    contract_folders: &[String],
) -> Vec<String> {
    let mut messages = Vec::new();
    let mut used: BTreeSet<(String, String)> = BTreeSet::new();
    let mut unnamed: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    // By their last segment, which any mention of one ends with.
    let mut by_name: BTreeMap<&str, Vec<&Refused>> = BTreeMap::new();
    for rule in refused {
        by_name
            .entry(rule.path.last().map_or("", String::as_str))
            .or_default()
            .push(rule);
    }
    for file in files {
        let path = file.path();
        let allowances = allowances(&file.code);
        let mut fulfilled = vec![false; allowances.len()];
        for mention in &file.mentions {
            let mut names: BTreeSet<&str> = mention
                .paths()
                .filter_map(|path| path.last().map(String::as_str))
                .collect();
            names.extend(mention.written.last().map(String::as_str));
            let candidates = names
                .iter()
                .filter_map(|name| by_name.get(name))
                .flatten()
                .copied();
            for rule in candidates {
                if !names_refused(mention, rule, &file.globs) {
                    continue;
                }
                let under = allowances.iter().enumerate().rev().find(|(_, a)| {
                    (a.scope.0..a.scope.1).contains(&mention.at) && a.lints.contains(&rule.lint)
                });
                match under {
                    Some((index, allowance))
                        if allowance.rule().is_some_and(|a| covers(a, &rule.rule)) =>
                    {
                        fulfilled[index] = true;
                    }
                    Some((_, allowance)) => messages.push(format!(
                        "{path}:{} calls `{}` ({}), under the `#[expect]` of line {} whose \
                         reason says it {}: give the call an `#[expect]` of its own rule",
                        file.code.line(mention.at),
                        mention.shown(),
                        rule.rule,
                        file.code.line(allowance.at),
                        allowance.rule().unwrap_or("keeps no rule")
                    )),
                    None => messages.push(format!(
                        "{path}:{} calls `{}`, refused by clippy.toml ({}): move it where \
                         ARCHITECTURE.md allows it, or give its item an \
                         `#[expect({}, reason = \"{}: ...\")]` and name the exception in \
                         ARCHITECTURE.md",
                        file.code.line(mention.at),
                        mention.shown(),
                        rule.rule,
                        rule.lint,
                        rule.rule
                    )),
                }
            }
            // The YAML door, and the contracts' folders.
            for resolved in mention.arrow_paths() {
                let first = resolved.first().map(String::as_str).unwrap_or("");
                let rule = if YAML_CRATES.contains(&first) {
                    Some(READS_YAML)
                } else if file.absolute(mention.at, resolved).is_some_and(|absolute| {
                    absolute.len() >= 2
                        && absolute[0] == "contracts"
                        && contract_folders.contains(&absolute[1])
                }) {
                    Some(NAMES_CONTRACT)
                } else {
                    None
                };
                let Some(rule) = rule else { continue };
                if top_module(path).is_none() || at_home(rule, path, layers) {
                    continue;
                }
                let key = (path.to_owned(), rule.to_owned());
                if exceptions.contains(&key) {
                    used.insert(key);
                    continue;
                }
                messages.push(if rule == READS_YAML {
                    format!(
                        "{path}:{} uses `{}`: crates/text/src/yaml.rs is the one door to the YAML \
                         libraries (ARCHITECTURE.md); call what it offers, or add to it",
                        file.code.line(mention.at),
                        mention.shown()
                    )
                } else {
                    format!(
                        "{path}:{} names the contract folder `{}`: reach it through \
                         `contracts::registry` (ARCHITECTURE.md), or name the exception",
                        file.code.line(mention.at),
                        file.absolute(mention.at, resolved)
                            .and_then(|a| a.get(1).cloned())
                            .unwrap_or_default()
                    )
                });
            }
        }
        for (index, allowance) in allowances.iter().enumerate() {
            let line = file.code.line(allowance.at);
            let Some(rule) = allowance.rule() else {
                messages.push(format!(
                    "{path}:{line}: an allowance of {} without a reason that starts with the \
                     rule it excepts ({})",
                    allowance.lints.join(", "),
                    RULES[..4].join(", ")
                ));
                continue;
            };
            if !fulfilled[index] {
                messages.push(format!(
                    "{path}:{line}: the allowance ({rule}) covers no call that clippy.toml \
                     refuses: drop it"
                ));
            }
            if at_home(rule, path, layers) {
                continue;
            }
            let key = (path.to_owned(), rule.to_owned());
            if exceptions.contains(&key) {
                used.insert(key);
            } else {
                unnamed.entry(key).or_default().push(line);
            }
        }
    }
    for ((path, rule), lines) in unnamed {
        let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
        messages.push(format!(
            "{path}:{}: an exception to \"{rule}\" that ARCHITECTURE.md does not name: add a \
             row `| `{path}` | {rule} | why |` to its table of exceptions, or move the code \
             where the rule allows it",
            lines.join(",")
        ));
    }
    messages.dedup();
    for (path, rule) in exceptions {
        if !used.contains(&(path.clone(), rule.clone())) {
            messages.push(format!(
                "ARCHITECTURE.md excepts {path} from \"{rule}\", which it no longer needs (no \
                 allowance or call there): drop the row"
            ));
        }
    }
    messages
}

// ---------------------------------------------------------------------------------------------
// HTML by its template engine only

/// The one file that may write markup maud does not escape: the pages' built-in style sheets
/// and script.
const RAW_MARKUP_HOME: &str = "src/report/page.rs";

/// The files that write GitHub's step summary, a Markdown page and no HTML one: its few tags
/// (`<details>`, `<br>`, `<code>`) are Markdown's own, and every text in it goes through
/// `sanitize::markdown`, which writes HTML's special characters as entities.
const MARKDOWN_HOMES: [&str; 2] = ["src/report/github.rs", "src/report/sanitize.rs"];

/// The tags of HTML and SVG the pages use, and the common others: a string literal opening or
/// closing one is markup made by hand.
const TAGS: &[&str] = &[
    "a", "b", "body", "br", "circle", "code", "defs", "details", "div", "em", "g", "h1", "h2",
    "h3", "h4", "head", "html", "i", "img", "li", "line", "link", "marker", "meta", "ol", "p",
    "path", "polyline", "pre", "rect", "script", "section", "span", "strong", "style", "summary",
    "svg", "table", "tbody", "td", "text", "th", "thead", "title", "tr", "tspan", "ul",
];

/// HTML's entities for its own special characters: written in a literal, an escape by hand.
const ENTITIES: &[&str] = &[
    "&lt;", "&gt;", "&amp;", "&quot;", "&apos;", "&#39;", "&#34;",
];

/// The string literals of the code, each at its opening quote, as written.
fn literals(code: &Code) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut open = None;
    for (at, byte) in code.code.bytes().enumerate() {
        if byte == b'"' {
            match open.take() {
                None => open = Some(at),
                Some(start) => found.push((start, code.literal(start))),
            }
        }
    }
    found
}

/// Whether `literal` (a string literal's text as written) opens or closes an HTML or SVG tag,
/// or spells one of HTML's entities.
fn holds_markup(literal: &str) -> Option<String> {
    if let Some(entity) = ENTITIES.iter().find(|e| literal.contains(**e)) {
        return Some(format!("the entity `{entity}`"));
    }
    let chars: Vec<char> = literal.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c != '<' {
            continue;
        }
        let start = if chars.get(i + 1) == Some(&'/') {
            i + 2
        } else {
            i + 1
        };
        let name: String = chars[start.min(chars.len())..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let after = chars.get(start + name.len());
        if TAGS.contains(&name.as_str()) && matches!(after, Some(' ' | '>' | '/' | '\\' | '{')) {
            return Some(format!(
                "the tag `<{}{name}`",
                if start == i + 2 { "/" } else { "" }
            ));
        }
    }
    None
}

/// Markup written by hand outside maud's `html!` (which escapes every value spliced into it):
/// a string literal holding a tag or an entity, in any file of `src/` and `crates/`; and, but
/// in `RAW_MARKUP_HOME`, maud's ways around its escaping (`PreEscaped`, an own `Render`).
fn hand_made_markup(files: &[File]) -> Vec<String> {
    let mut messages = Vec::new();
    for file in files {
        let code = &file.code;
        let bytes = code.code.as_bytes();
        for (start, literal) in literals(code) {
            if MARKDOWN_HOMES.contains(&code.path.as_str()) {
                break;
            }
            if let Some(what) = holds_markup(&literal) {
                messages.push(format!(
                    "{}:{}: a string literal holds {what}: HTML and SVG are written in maud's \
                     `html!`, which escapes what it is given (ARCHITECTURE.md, Invariants)",
                    code.path,
                    code.line(start)
                ));
            }
        }
        if code.path == RAW_MARKUP_HOME {
            continue;
        }
        for word in ["PreEscaped", "Render"] {
            for (at, _) in code.code.match_indices(word) {
                let before = at.checked_sub(1).map(|b| bytes[b]);
                let after = bytes.get(at + word.len()).copied();
                if before.is_some_and(is_ident_byte) || after.is_some_and(is_ident_byte) {
                    continue;
                }
                let own_render = word == "Render"
                    && (code.code[..at].trim_end().ends_with("impl")
                        || code.code[..at].ends_with("maud::")
                        || code.code[at..]
                            .trim_start_matches("Render")
                            .trim_start()
                            .starts_with("for "));
                if word == "PreEscaped" || own_render {
                    messages.push(format!(
                        "{}:{}: `{word}` writes markup maud does not escape: only {RAW_MARKUP_HOME} \
                         may, for the assets built into the program",
                        code.path,
                        code.line(at)
                    ));
                }
            }
        }
    }
    messages
}

// ---------------------------------------------------------------------------------------------
// Languages as a type

/// The one module that names the languages of dlqspec's shims.
const LANGUAGE_HOME: &str = "src/model/language.rs";

/// What names a language: its names, its interpreters' and its files' extensions.
const LANGUAGE_WORDS: &[&str] = &[
    "python",
    "python3",
    "node",
    "javascript",
    "typescript",
    "js",
    "ts",
    "py",
    "mjs",
    "cjs",
    "mts",
    "cts",
];

/// Every string literal outside `LANGUAGE_HOME` that is a language's name, interpreter or
/// extension (in any case): code that should ask `model::language::Language` instead.
fn language_names(files: &[File]) -> Vec<String> {
    let mut messages = Vec::new();
    for file in files {
        if file.path() == LANGUAGE_HOME {
            continue;
        }
        for (at, literal) in literals(&file.code) {
            if LANGUAGE_WORDS.contains(&literal.to_ascii_lowercase().as_str()) {
                messages.push(format!(
                    "{}:{}: \"{literal}\" names a language: ask `Language` ({LANGUAGE_HOME}), so \
                     that a new language is one variant and one shim",
                    file.path(),
                    file.code.line(at)
                ));
            }
        }
    }
    messages
}

// ---------------------------------------------------------------------------------------------
// One concern per file

/// The most lines of code a file of `src/` or `crates/` holds outside its tests.
const MOST_LINES: usize = 1_000;

/// The lines of code of a file outside its tests: those neither blank nor comment only, before
/// the first test-only item (`#[cfg(test)]`, `#[cfg(all(test, ...))]`).
fn lines_of_code(text: &str) -> usize {
    text.lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with("#[cfg(test)]") && !line.starts_with("#[cfg(all(test"))
        .filter(|line| !line.is_empty() && !line.starts_with("//"))
        .count()
}

/// ARCHITECTURE.md's files allowed more than `MOST_LINES` lines of code: the rows of the table
/// under "Files over 1,000 lines" (`| `path` | why |`).
fn long_files_allowed(architecture: &str) -> BTreeSet<String> {
    let Some(at) = architecture.find("### Files over 1,000 lines") else {
        return BTreeSet::new();
    };
    architecture[at..]
        .lines()
        .skip(1)
        .take_while(|line| !line.starts_with('#'))
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .filter_map(|line| {
            let cell = line.split('|').nth(1)?.trim();
            let path = cell.strip_prefix('`')?.strip_suffix('`')?;
            Some(path.to_owned())
        })
        .collect()
}

/// Each file of `texts` holding more than `MOST_LINES` lines of code outside its tests that
/// `allowed` does not list, and each file `allowed` lists that does not need to be.
fn too_long(texts: &[(String, String)], allowed: &BTreeSet<String>) -> Vec<String> {
    let mut messages = Vec::new();
    for (path, text) in texts {
        let lines = lines_of_code(text);
        if lines > MOST_LINES && !allowed.contains(path) {
            messages.push(format!(
                "{path}: {lines} lines of code outside its tests, more than {MOST_LINES}: split \
                 it by concern (ARCHITECTURE.md, Invariants), or list it with the reason under \
                 \"Files over 1,000 lines\""
            ));
        }
    }
    for path in allowed {
        match texts.iter().find(|(p, _)| p == path) {
            Some((_, text)) if lines_of_code(text) > MOST_LINES => {}
            _ => messages.push(format!(
                "ARCHITECTURE.md lists {path} under \"Files over 1,000 lines\", which is not \
                 there or not that long: take its row out"
            )),
        }
    }
    messages
}

// ---------------------------------------------------------------------------------------------
// The repository

/// The checkout read: this one, or the copy `DLQSPEC_ARCHITECTURE_ROOT` names
/// (tests/integration/rules.rs plants a violation in live code of a copy and runs this test
/// on it).
fn root() -> PathBuf {
    std::env::var_os("DLQSPEC_ARCHITECTURE_ROOT")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The workspace's crates: the folders of `crates/`.
fn workspace_crates() -> Vec<PathBuf> {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root().join(CRATES))
        .expect("crates/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.is_dir())
        .collect();
    crates.sort();
    crates
}

/// The texts of `src/` and of each workspace crate's `src/`, by path from the root.
fn crate_texts() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    rust_files(&root().join("src"), &mut paths);
    for krate in workspace_crates() {
        rust_files(&krate.join("src"), &mut paths);
    }
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("a source file");
            let name = path
                .strip_prefix(root())
                .expect("below the root")
                .to_string_lossy()
                .replace('\\', "/");
            (name, text)
        })
        .collect()
}

/// The files of `texts`, read: those a test build alone has (declared by a test-only `mod
/// name;`) left out.
fn read(texts: &[(String, String)]) -> Vec<File> {
    let mut files: Vec<File> = Vec::new();
    let mut test_only: BTreeSet<String> = BTreeSet::new();
    for (path, text) in texts {
        let (_, test_mods) = blank_test_items(&blank_comments_and_strings(text));
        let module = module_path(path);
        for name in test_mods {
            let mut child = module.clone();
            child.push(name);
            test_only.insert(child.join("/"));
        }
        files.push(File::new(Code::new(path, text)));
    }
    files.retain(|file| {
        let module = module_path(file.path());
        !(1..=module.len()).any(|depth| test_only.contains(&module[..depth].join("/")))
    });
    files
}

fn crate_files() -> Vec<File> {
    read(&crate_texts())
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

fn clippy_toml() -> String {
    std::fs::read_to_string(root().join("clippy.toml")).expect("clippy.toml")
}

fn all_arrows(files: &[File]) -> Vec<Arrow> {
    files.iter().flat_map(arrows).collect()
}

fn contract_folders() -> Vec<String> {
    let mut folders: Vec<String> = std::fs::read_dir(root().join("src/contracts"))
        .expect("src/contracts/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.is_dir())
        .map(|path| {
            path.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    folders.sort();
    folders
}

/// Everything this test finds wrong with `files`: the layers, the circles, the rules.
fn everything_wrong(files: &[File]) -> Vec<String> {
    let doc = architecture();
    let layers = layers(&doc);
    let arrows = all_arrows(files);
    let mut messages = cycles(&arrows);
    messages.extend(against_layers(&layers, &arrows));
    messages.extend(folder_circles(files));
    messages.extend(hand_made_markup(files));
    messages.extend(language_names(files));
    messages.extend(broken_rules(
        files,
        &refused(&clippy_toml()),
        &layers,
        &exceptions(&doc),
        &contract_folders(),
    ));
    messages
}

fn assert_none(what: &str, messages: Vec<String>) {
    assert!(messages.is_empty(), "{what}:\n{}", messages.join("\n"));
}

#[test]
fn the_code_map_names_every_top_level_module_and_only_those() {
    let layers = layers(&architecture());
    let mut modules: BTreeSet<String> = workspace_crates()
        .iter()
        .map(|krate| {
            let name = krate.file_name().expect("a name").to_string_lossy();
            assert!(
                krate.join("src/lib.rs").is_file(),
                "crates/{name}/ is no library crate (no src/lib.rs)"
            );
            name.into_owned()
        })
        .collect();
    for entry in std::fs::read_dir(root().join("src")).expect("src/") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        if path.is_dir() {
            modules.insert(name);
        } else if let Some(stem) = name.strip_suffix(".rs")
            && !matches!(stem, "lib" | "main")
        {
            modules.insert(format!("{stem}.rs"));
        }
    }
    let unplaced: Vec<_> = modules
        .iter()
        .filter(|m| !layers.contains_key(*m))
        .collect();
    assert!(
        unplaced.is_empty(),
        "ARCHITECTURE.md's code map has no row `| LAYER | `src/NAME/` | ...` (or `crates/NAME/`) \
         for {unplaced:?} (a loose file at src/ belongs in a folder)"
    );
    let gone: Vec<_> = layers.keys().filter(|l| !modules.contains(*l)).collect();
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md's code map names folders neither src/ nor crates/ has: {gone:?}"
    );
}

#[test]
fn no_cycle_between_top_level_modules() {
    assert_none(
        "the top-level modules form cycles",
        cycles(&all_arrows(&crate_files())),
    );
}

#[test]
fn every_arrow_points_down_the_layers() {
    assert_none(
        "imports against the layers of ARCHITECTURE.md",
        against_layers(&layers(&architecture()), &all_arrows(&crate_files())),
    );
}

/// The workspace crates a crate's manifest depends on (`dlqspec-NAME = ...` under a
/// `[dependencies]` table, a target's too; dev-dependencies are its tests'), by layer name.
fn crate_dependencies(manifest: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line.ends_with("dependencies]") && !line.contains("dev-dependencies");
            continue;
        }
        if in_dependencies
            && let Some((name, _)) = line.split_once('=')
            && let Some(layer) = name.trim().strip_prefix("dlqspec-")
        {
            found.push(layer.to_owned());
        }
    }
    found
}

/// A crate of the workspace is a layer too, and the compiler holds its imports to what its
/// manifest names: each workspace crate it depends on is of a lower layer (`formats`, the
/// lowest, depends on none), as a module's imports are.
#[test]
fn every_workspace_crate_depends_on_lower_layers_only() {
    let layers = layers(&architecture());
    let mut messages = Vec::new();
    for krate in workspace_crates() {
        let name = krate
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).expect("a manifest");
        for dependency in crate_dependencies(&manifest) {
            match (layers.get(&name), layers.get(&dependency)) {
                (Some(own), Some(theirs)) if theirs < own => {}
                (own, theirs) => messages.push(format!(
                    "crates/{name}/Cargo.toml (layer {own:?}) depends on dlqspec-{dependency} \
                     (layer {theirs:?}): a crate depends on lower layers only"
                )),
            }
        }
    }
    assert_none("workspace crates against the layers", messages);
    assert_eq!(
        crate_dependencies(
            "[dependencies]\nserde = \"1\"\ndlqspec-formats = { path = \"../formats\" }\n\n[dev-dependencies]\ndlqspec-text = { path = \"../text\" }\n"
        ),
        ["formats"],
        "the manifest reader"
    );
}

#[test]
fn no_circle_between_the_files_of_a_folder() {
    assert_none(
        "circles between the files of a folder",
        folder_circles(&crate_files()),
    );
}

#[test]
fn every_refused_call_stands_where_architecture_md_allows_it() {
    let doc = architecture();
    assert_none(
        "the rules of clippy.toml and ARCHITECTURE.md",
        broken_rules(
            &crate_files(),
            &refused(&clippy_toml()),
            &layers(&doc),
            &exceptions(&doc),
            &contract_folders(),
        ),
    );
}

#[test]
fn html_and_svg_are_written_by_the_template_engine_only() {
    assert_none(
        "markup made by hand (ARCHITECTURE.md, Invariants)",
        hand_made_markup(&crate_files()),
    );
}

/// A reporter writing a cell by hand is refused, at its line.
#[test]
fn markup_planted_in_a_reporter_fails() {
    let texts = crate_texts();
    let files = read(&texts);
    let before: BTreeSet<String> = everything_wrong(&files).into_iter().collect();
    plant_each(
        &texts,
        &files,
        &before,
        "src/report/tap.rs",
        &[&plants::MARKUP],
    );
}

#[test]
fn only_the_language_module_names_a_language() {
    assert_none(
        "languages named outside their type",
        language_names(&crate_files()),
    );
    // Seen where it must be: a name, an extension, in any case; not in the module itself.
    let planted = [
        File::new(Code::new(
            "src/report/x.rs",
            "//! x\nfn f(l: &str) -> bool {\n    l == \"Python\" || l.ends_with(\"mjs\")\n}\n",
        )),
        File::new(Code::new(
            LANGUAGE_HOME,
            "//! l\nconst P: &str = \"python\";\n",
        )),
    ];
    let found = language_names(&planted);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("src/report/x.rs:3: \"Python\""),
        "{found:?}"
    );
}

#[test]
fn no_file_holds_more_than_1000_lines_of_code_outside_its_tests() {
    assert_none(
        "files holding more than one concern",
        too_long(&crate_texts(), &long_files_allowed(&architecture())),
    );
}

/// The check of file lengths fails on a planted long file, and on a listed file that is short.
#[test]
fn a_planted_long_file_fails_the_length_check() {
    let line = "    let x = 1;\n";
    let long = format!(
        "//! long\n// a comment\n\nfn f() {{\n{}}}\n#[cfg(test)]\nmod tests {{\n{}}}\n",
        line.repeat(MOST_LINES - 2),
        line.repeat(5_000)
    );
    assert_eq!(lines_of_code(&long), MOST_LINES);
    let texts = vec![("src/model/long.rs".to_owned(), long.clone())];
    assert_none("", too_long(&texts, &BTreeSet::new()));
    let longer = long.replacen("fn f() {\n", "fn f() {\n    let y = 2;\n", 1);
    let texts = vec![("src/model/long.rs".to_owned(), longer)];
    let messages = too_long(&texts, &BTreeSet::new());
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("src/model/long.rs: 1001 lines of code"),
        "{messages:?}"
    );
    let allowed = long_files_allowed(
        "### Files over 1,000 lines\n\n| File | Why |\n|---|---|\n| `src/model/long.rs` | a reason |\n",
    );
    assert_none("", too_long(&texts, &allowed));
    let short = vec![("src/model/long.rs".to_owned(), "//! short\n".to_owned())];
    assert_eq!(too_long(&short, &allowed).len(), 1);
    // A section with no table lists nothing, whatever table the next section holds.
    let none = long_files_allowed(
        "### Files over 1,000 lines\n\nNone today.\n\n## Next\n\n| File | Why |\n|---|---|\n| `src/model/long.rs` | not this |\n",
    );
    assert!(none.is_empty(), "{none:?}");
}

/// The calls ARCHITECTURE.md's invariants name are among clippy.toml's, so the list cannot
/// shrink unseen.
#[test]
fn clippy_toml_refuses_what_the_invariants_name() {
    let refused = refused(&clippy_toml());
    let has = |path: &str| refused.iter().any(|r| r.path.join("::") == path);
    for path in [
        "std::process::Command::new",
        "libc::fork",
        "libc::vfork",
        "libc::execve",
        "libc::execvp",
        "libc::posix_spawn",
        "libc::posix_spawnp",
        "std::fs::File::create",
        "std::fs::File::options",
        "std::fs::OpenOptions::write",
        "std::fs::OpenOptions::append",
        "std::fs::OpenOptions::create",
        "std::fs::OpenOptions::create_new",
        "std::fs::OpenOptions::truncate",
        "std::fs::write",
        "std::fs::rename",
        "std::fs::copy",
        "std::fs::remove_file",
        "std::fs::remove_dir",
        "std::fs::remove_dir_all",
        "std::fs::set_permissions",
        "tempfile::NamedTempFile::persist",
        "tempfile::TempPath::persist",
        "libc::write",
        "std::io::stdout",
        "std::io::stderr",
        "std::println",
        "std::eprintln",
        "std::print",
        "std::eprint",
    ] {
        assert!(has(path), "clippy.toml no longer refuses `{path}`");
    }
    for rule in &refused {
        assert!(
            RULES[..4].contains(&rule.rule.as_str()),
            "clippy.toml's reason for `{}` does not start with the rule it keeps ({})",
            rule.path.join("::"),
            RULES[..4].join(", ")
        );
    }
}

#[test]
fn every_rust_file_says_what_it_is_for() {
    let mut paths = Vec::new();
    for dir in ["src", "crates", "tests", "benches", "examples"] {
        if root().join(dir).is_dir() {
            rust_files(&root().join(dir), &mut paths);
        }
    }
    let silent: Vec<_> = paths
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).expect("a source file");
            !text.starts_with("//!")
        })
        .map(|path| {
            path.strip_prefix(root())
                .unwrap_or(path)
                .display()
                .to_string()
        })
        .collect();
    assert!(
        silent.is_empty(),
        "these files do not start with a `//!` line saying what they are for: {silent:?}"
    );
}

/// The most bytes ARCHITECTURE.md holds: a map a newcomer reads in ten minutes. What a folder
/// holds file by file, and why, goes into its own file's `//!` docs.
const MOST_BYTES: usize = 15_000;

#[test]
fn architecture_md_stays_a_ten_minute_read() {
    let bytes = architecture().len();
    assert!(
        bytes <= MOST_BYTES,
        "ARCHITECTURE.md is {bytes} bytes, more than {MOST_BYTES}: keep it a map, and move the \
         details of a folder into the `//!` docs of its mod.rs (a crate's lib.rs)"
    );
}

/// The file that speaks for a folder of the code map: `src/NAME/mod.rs`, or a workspace
/// crate's `src/lib.rs`.
fn face_of(name: &str) -> PathBuf {
    let folder = root().join("src").join(name);
    if folder.is_dir() {
        folder.join("mod.rs")
    } else {
        root().join(CRATES).join(name).join("src/lib.rs")
    }
}

/// Each folder's `//!` docs, as ARCHITECTURE.md leaves its details to them: a one-line
/// summary, then more. `None` when they are as that says.
fn docs_wrong(path: &str, text: &str) -> Option<String> {
    let docs: Vec<&str> = text
        .lines()
        .take_while(|line| line.starts_with("//!"))
        .map(|line| line.trim_start_matches("//!").trim())
        .collect();
    let summary = docs.first().copied().unwrap_or("");
    if summary.is_empty() || docs.get(1).is_some_and(|line| !line.is_empty()) {
        return Some(format!(
            "{path}: its `//!` docs do not start with a one-line summary followed by a blank \
             `//!` line"
        ));
    }
    if docs.iter().skip(2).all(|line| line.is_empty()) {
        return Some(format!(
            "{path}: its `//!` docs are one line: say what the folder holds, its boundary and \
             what it may use (ARCHITECTURE.md leaves the details to them)"
        ));
    }
    None
}

/// ARCHITECTURE.md gives each folder of its layer table a paragraph under a heading naming
/// it, and the folder's own file tells the rest in its `//!` docs.
#[test]
fn each_folder_of_the_code_map_has_a_paragraph_and_docs() {
    let doc = architecture();
    let headings: Vec<&str> = doc
        .lines()
        .filter(|line| line.starts_with("### "))
        .collect();
    let mut wrong = Vec::new();
    for name in layers(&doc).keys() {
        let named = [format!("`src/{name}/`"), format!("`{CRATES}{name}/`")];
        if !headings
            .iter()
            .any(|heading| named.iter().any(|n| heading.contains(n.as_str())))
        {
            wrong.push(format!(
                "ARCHITECTURE.md has no `### ` heading naming the folder `{name}` of its code map"
            ));
        }
        let face = face_of(name);
        let text = std::fs::read_to_string(&face).expect("the folder's own file");
        let path = face
            .strip_prefix(root())
            .unwrap_or(&face)
            .display()
            .to_string();
        wrong.extend(docs_wrong(&path, &text));
    }
    assert_none("the code map's folders", wrong);
}

/// The check of a folder's docs refuses a summary of two lines and docs of one.
#[test]
fn a_folder_without_its_details_fails_the_docs_check() {
    assert_eq!(
        docs_wrong("a", "//! Summary.\n//!\n//! Details.\nmod x;\n"),
        None
    );
    assert!(docs_wrong("a", "//! Summary\n//! runs on.\n//!\n//! Details.\n").is_some());
    assert!(docs_wrong("a", "//! Summary.\nmod x;\n").is_some());
    assert!(docs_wrong("a", "//! Summary.\n//!\nmod x;\n").is_some());
    assert!(docs_wrong("a", "mod x;\n").is_some());
}

/// The nine violations of the rules that the text reader of old let through
/// (`tests/support/plants.rs`), each planted in a low layer's real file inside a function no
/// build compiles (`#[cfg(any())]`, which clippy never sees): each one alone makes this test
/// fail, naming its line. (In code that builds, tests/integration/rules.rs plants them for
/// clippy.)
#[test]
fn each_planted_violation_fails() {
    let texts = crate_texts();
    let files = read(&texts);
    let before: BTreeSet<String> = everything_wrong(&files).into_iter().collect();
    assert_none("the crate as it is", before.iter().cloned().collect());
    // A layer of `src/` and a crate of the workspace: the reader must see into both. In a
    // crate, `crate::contracts` is the crate's own (absent) module, and naming dlqspec's is
    // refused by the compiler (the crate does not depend on it), so the layers' plant is left
    // out there.
    for (host, layers_too) in [
        ("src/model/rule.rs", true),
        ("crates/text/src/suggest.rs", false),
    ] {
        let plants: Vec<&plants::Plant> = plants::PLANTS
            .iter()
            .filter(|plant| layers_too || plant.lint.is_some())
            .collect();
        plant_each(&texts, &files, &before, host, &plants);
    }
}

/// Plants each of `plants` in `host` alone, inside a function no build compiles, and checks
/// the reader reports it at its lines only.
fn plant_each(
    texts: &[(String, String)],
    files: &[File],
    before: &BTreeSet<String>,
    host: &str,
    plants: &[&plants::Plant],
) {
    let (_, original) = texts
        .iter()
        .find(|(path, _)| path == host)
        .expect("the host file");
    assert!(original.ends_with('\n'), "{host} ends with a newline");
    for plants::Plant {
        name, body: plant, ..
    } in plants
    {
        // After the file's lines: an empty one, the `cfg`, the `fn`, then the plant's.
        let first = original.lines().count() + 4;
        let lines: Vec<String> = (first..first + plant.lines().count())
            .map(|line| format!("{host}:{line}"))
            .collect();
        let text = format!("{original}\n#[cfg(any())]\nfn planted() {{\n    {plant}\n}}\n");
        let planted: Vec<File> = files
            .iter()
            .map(|file| {
                if file.path() == host {
                    File::new(Code::new(host, &text))
                } else {
                    file.clone()
                }
            })
            .collect();
        let new: Vec<String> = everything_wrong(&planted)
            .into_iter()
            .filter(|message| !before.contains(message))
            .collect();
        assert!(!new.is_empty(), "the planted `{name}` went unseen");
        for message in &new {
            assert!(
                lines
                    .iter()
                    .any(|line| message.contains(&format!("{line}:"))
                        || message.contains(&format!("{line} "))),
                "the planted `{name}` ({lines:?}) made a message elsewhere: {message}"
            );
        }
    }
}

/// The checker on made-up crates, so it is seen to fail where it must.
mod checker {
    use super::*;

    fn file(path: &str, text: &str) -> File {
        File::new(Code::new(path, text))
    }

    /// The one message of `messages`, which must hold exactly one.
    fn the_one(messages: Vec<String>) -> String {
        assert_eq!(messages.len(), 1, "{messages:?}");
        messages.into_iter().next().unwrap_or_default()
    }

    const MAP: &str = "\
| Layer | Folder | What it is | May use |
|---|---|---|---|
| 3 | `src/top/` | the commands | all below |
| 2 | `src/report/` | the reporters | base |
| 1 | `src/base/` | spec text | nothing |
| 1 | `src/peer/` | a peer of base | nothing |

| File | Does | Why |
|---|---|---|
| `src/base/exempt.rs` | writes a file | a reason |
";

    const CLIPPY: &str = r#"
disallowed-methods = [
    { path = "std::process::Command::new", reason = "starts a process: x" },
    { path = "std::fs::write", reason = "writes a file: x" },
    { path = "std::fs::remove_dir_all", reason = "writes a file: x" },
    { path = "std::fs::OpenOptions::write", reason = "writes a file: x" },
    { path = "tempfile::NamedTempFile::persist", reason = "writes a file: x" },
    { path = "libc::write", reason = "writes to a descriptor: x" },
    { path = "std::io::stdout", reason = "prints: x" },
]
disallowed-macros = [
    { path = "std::println", reason = "prints: x" },
    { path = "std::eprintln", reason = "prints: x" },
]
"#;

    /// What the rules find in `files`, with MAP's table of exceptions (or none).
    fn rules_with(files: &[File], exceptions: &BTreeSet<(String, String)>) -> Vec<String> {
        broken_rules(
            files,
            &refused(CLIPPY),
            &layers(MAP),
            exceptions,
            &["dlq_consumer".to_owned(), "outcome_queue".to_owned()],
        )
    }

    fn rules(files: &[File]) -> Vec<String> {
        rules_with(files, &BTreeSet::new())
    }

    fn rules_and_table(files: &[File]) -> Vec<String> {
        rules_with(files, &exceptions(MAP))
    }

    #[test]
    fn the_layers_and_exceptions_are_read_from_their_tables() {
        let layers = layers(MAP);
        assert_eq!(layers.get("top"), Some(&3));
        assert_eq!(layers.get("base"), Some(&1));
        assert_eq!(layers.len(), 4);
        let exceptions = exceptions(MAP);
        assert!(exceptions.contains(&("src/base/exempt.rs".to_owned(), WRITES.to_owned())));
        assert_eq!(exceptions.len(), 1);
        let refused = refused(CLIPPY);
        assert_eq!(refused.len(), 9);
        assert_eq!(refused[5].rule, DESCRIPTOR);
        assert_eq!(refused[7].lint, LINTS[1]);
    }

    #[test]
    fn a_deliberate_cycle_fails_naming_each_file_and_import() {
        let files = [
            file(
                "src/base/text.rs",
                "//! t\nuse crate::report::runner::Run;\n",
            ),
            file(
                "src/report/runner.rs",
                "//! r\n\nuse crate::{base::text::Text, top};\n",
            ),
        ];
        let messages = cycles(&all_arrows(&files));
        let message = the_one(messages);
        assert!(message.contains("base, report"), "{message}");
        assert!(
            message.contains("src/base/text.rs:2 uses `crate::report::runner::Run`"),
            "{message}"
        );
        assert!(
            message.contains("src/report/runner.rs:3 uses `crate::base::text::Text`"),
            "{message}"
        );
    }

    #[test]
    fn an_upward_arrow_fails_naming_the_file_and_the_import() {
        let files = [file(
            "src/base/text.rs",
            "//! t\nfn f() {\n    crate::top::main();\n}\n",
        )];
        let message = the_one(against_layers(&layers(MAP), &all_arrows(&files)));
        assert!(
            message.starts_with("src/base/text.rs:3 uses `crate::top::main`: `base` (layer 1)"),
            "{message}"
        );
    }

    #[test]
    fn an_alias_is_seen_through() {
        let files = [file(
            "src/base/text.rs",
            "use crate as root;\nuse crate::top as t;\ntype Up = crate::report::X;\n\
             fn f() { t::main(); root::peer::g(); Up::new(); }\n",
        )];
        let arrows = all_arrows(&files);
        let targets: Vec<_> = arrows.iter().map(|a| (a.to.as_str(), a.line)).collect();
        assert_eq!(
            targets,
            [
                ("top", 2),
                ("report", 3),
                ("top", 4),
                ("peer", 4),
                ("report", 4)
            ],
            "{arrows:?}"
        );
    }

    #[test]
    fn peers_do_not_use_each_other_and_unplaced_modules_fail() {
        let files = [
            file("src/base/a.rs", "use crate::peer::B;\n"),
            file("src/stray.rs", "use crate::base::a;\n"),
        ];
        let messages = against_layers(&layers(MAP), &all_arrows(&files));
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(
            messages[0].contains("may not use `peer`"),
            "{}",
            messages[0]
        );
        assert!(
            messages[1].contains("does not place `stray`"),
            "{}",
            messages[1]
        );
    }

    #[test]
    fn arrows_down_and_within_a_module_pass() {
        let files = [
            file(
                "src/top/x.rs",
                "use crate::{report::{self, Run}, base};\nuse crate::top::y;\nuse super::y::Z;\n",
            ),
            file("src/report/mod.rs", "pub fn f() { crate::base::g() }\n"),
        ];
        let arrows = all_arrows(&files);
        assert_eq!(arrows.len(), 4, "{arrows:?}");
        assert_none("", against_layers(&layers(MAP), &arrows));
        assert_none("", cycles(&arrows));
    }

    #[test]
    fn comments_strings_macros_and_test_only_items_are_no_arrows() {
        let text = r##"//! See `crate::top` for the commands.
/// Unlike crate::top::x, this does not.
const S: &str = "crate::top::y";
const R: &str = r#"crate::top::z"#;
const C: char = '"';
crate::mistakes! { a }
fn f<'a>(x: &'a str) -> &'a str { x }
#[cfg(test)]
mod tests {
    use crate::top::helpers;
    fn g() { let s = "}"; }
}
#[cfg(all(unix, test))]
use crate::top::more;
#[cfg(any(test, all(test, unix)))]
fn h() { crate::top::x(); }
pub fn after() { crate::base::g(); }
"##;
        let arrows = all_arrows(&[file("src/report/m.rs", text)]);
        let targets: Vec<_> = arrows.iter().map(|a| (a.to.as_str(), a.line)).collect();
        assert_eq!(targets, [("base", 17)], "{arrows:?}");
    }

    #[test]
    fn every_other_cfg_is_code() {
        let text = "#[cfg(any())]\nfn f() { crate::top::x(); }\n#[cfg(not(test))]\nfn g() { \
                    crate::top::y(); }\n#[cfg(any(test, unix))]\nfn h() { crate::top::z(); }\n";
        let arrows = all_arrows(&[file("src/report/m.rs", text)]);
        let lines: Vec<_> = arrows.iter().map(|a| a.line).collect();
        assert_eq!(lines, [2, 4, 6], "{arrows:?}");
    }

    #[test]
    fn super_paths_that_climb_out_of_the_module_are_arrows() {
        let arrows = all_arrows(&[file(
            "src/report/deep/x.rs",
            "use super::super::y;\nuse super::super::super::top::T;\n\
             mod inner { use super::super::super::super::base::B; }\n",
        )]);
        let targets: Vec<_> = arrows.iter().map(|a| a.to.as_str()).collect();
        assert_eq!(targets, ["top", "base"], "{arrows:?}");
    }

    #[test]
    fn a_circle_between_the_files_of_a_folder_fails_and_one_through_its_own_file_passes() {
        let files = [
            file("src/base/mod.rs", "mod a;\nmod b;\nmod c;\npub use c::C;\n"),
            file("src/base/a.rs", "use super::b::B;\n"),
            file("src/base/b.rs", "use crate::base::C;\n"),
            file("src/base/c.rs", "fn f() { super::a::g(); }\n"),
            file("src/peer/mod.rs", "mod x;\nmod y;\nfn h() { x::f(); }\n"),
            file("src/peer/x.rs", "use super::y;\n"),
            file("src/peer/y.rs", "use super::h;\n"),
        ];
        // One message: a circle through the folder's own file (peer's, its face) is no circle
        // between its files.
        let message = the_one(folder_circles(&files));
        assert!(
            message.starts_with("a circle between the files of src/base/: a, b, c"),
            "{message}"
        );
        assert!(
            message.contains("a -> b: src/base/a.rs:1 uses `super::b::B`"),
            "{message}"
        );
        assert!(
            message.contains("b -> c: src/base/b.rs:1 uses `crate::base::C`"),
            "{message}"
        );
        assert!(
            message.contains("c -> a: src/base/c.rs:1 uses `super::a::g`"),
            "{message}"
        );
    }

    #[test]
    fn a_circle_inside_a_crate_names_the_crate_folder() {
        let files = [
            file("crates/base/src/lib.rs", "mod a;\nmod deep;\n"),
            file("crates/base/src/a.rs", "fn f() {}\n"),
            file("crates/base/src/deep.rs", "mod x;\nmod y;\n"),
            file("crates/base/src/deep/x.rs", "use super::y::g;\n"),
            file("crates/base/src/deep/y.rs", "use crate::deep::x::h;\n"),
        ];
        let message = the_one(folder_circles(&files));
        assert!(
            message.starts_with("a circle between the files of crates/base/src/deep/: x, y"),
            "{message}"
        );
        assert!(
            message.contains("y -> x: crates/base/src/deep/y.rs:1 uses `crate::deep::x::h`"),
            "{message}"
        );
    }

    #[test]
    fn a_refused_call_fails_through_an_alias_a_glob_and_a_method() {
        let text = "use std::process::Command as Cmd;\nuse std::fs::*;\n\
                    fn f(t: tempfile::NamedTempFile) {\n    Cmd::new(\"sh\");\n    \
                    remove_dir_all(p);\n    let _ = t.persist(p);\n    \
                    let _ = std::fs::OpenOptions::new()\n        .write(true);\n    \
                    println!(\"x\");\n    let _ = w.write(b);\n}\n";
        let messages = rules(&[file("src/base/a.rs", text)]);
        let calls: Vec<&str> = messages
            .iter()
            .map(|m| {
                m.split(" calls ")
                    .nth(1)
                    .unwrap_or(m)
                    .split(',')
                    .next()
                    .unwrap_or("")
            })
            .collect();
        assert_eq!(
            calls,
            [
                "`Cmd::new`",
                "`remove_dir_all`",
                "`.persist(`",
                "`.write(`",
                "`println!`"
            ],
            "{messages:#?}"
        );
        assert!(
            messages[0].starts_with("src/base/a.rs:4 calls"),
            "{}",
            messages[0]
        );
    }

    #[test]
    fn an_exception_is_precise_to_its_item_its_rule_and_the_table() {
        let text = "#[expect(clippy::disallowed_methods, reason = \"writes a file: x\")]\n\
                    fn f() {\n    std::fs::write(p, b);\n}\n\
                    fn g() {\n    std::fs::write(p, b);\n}\n\
                    #[expect(\n    clippy::disallowed_methods,\n    reason = \"writes a file: x\"\n)]\n\
                    fn h() {\n    std::process::Command::new(\"sh\");\n}\n";
        let messages = rules_and_table(&[file("src/base/exempt.rs", text)]);
        assert_eq!(messages.len(), 3, "{messages:#?}");
        // g's call is outside f's exception.
        assert!(
            messages[0].starts_with("src/base/exempt.rs:6 calls `std::fs::write`"),
            "{}",
            messages[0]
        );
        // h's process is under an exception for writing files, which then covers nothing.
        assert!(
            messages[1].starts_with(
                "src/base/exempt.rs:13 calls `std::process::Command::new` (starts a process), \
                 under the `#[expect]` of line 8"
            ),
            "{}",
            messages[1]
        );
        assert!(
            messages[2]
                .starts_with("src/base/exempt.rs:8: the allowance (writes a file) covers no call"),
            "{}",
            messages[2]
        );

        // The same exception in a file the table does not name.
        let messages = rules_and_table(&[file(
            "src/base/other.rs",
            "#[expect(clippy::disallowed_methods, reason = \"writes a file: x\")]\nfn f() { std::fs::write(p, b); }\n",
        )]);
        assert_eq!(messages.len(), 2, "{messages:#?}");
        assert!(messages[0].starts_with("src/base/other.rs:1: an exception to \"writes a file\" that ARCHITECTURE.md does not name"), "{}", messages[0]);
        assert!(
            messages[1].contains(
                "excepts src/base/exempt.rs from \"writes a file\", which it no longer needs"
            ),
            "{}",
            messages[1]
        );
    }

    #[test]
    fn statements_take_an_exception_of_their_own() {
        let text = "fn f() {\n    unsafe {\n        \
                    #[expect(clippy::disallowed_methods, reason = \"writes to a descriptor: x\")]\n        \
                    libc::write(3, b, 1);\n        libc::write(4, b, 1);\n    }\n}\n";
        let messages = rules(&[file("src/top/a.rs", text)]);
        let message = the_one(
            messages
                .into_iter()
                .filter(|m| !m.contains("ARCHITECTURE.md does not name"))
                .collect(),
        );
        assert!(
            message.starts_with("src/top/a.rs:5 calls `libc::write`"),
            "{message}"
        );
    }

    #[test]
    fn printing_below_the_reporters_fails_and_above_them_passes() {
        let files = [
            file("src/base/a.rs", "fn f() { eprintln!(\"x\"); }\n"),
            file(
                "src/top/b.rs",
                "#[expect(clippy::disallowed_macros, reason = \"prints: the answer\")]\nfn f() { println!(\"x\"); }\n",
            ),
            file(
                "src/base/exempt.rs",
                "#[expect(clippy::disallowed_methods, reason = \"writes a file: x\")]\nfn f() { std::fs::write(p, b); }\n",
            ),
        ];
        let message = the_one(rules_and_table(&files));
        assert!(
            message.starts_with("src/base/a.rs:1 calls `eprintln!`"),
            "{message}"
        );
    }

    #[test]
    fn a_contract_or_yaml_named_outside_its_folder_fails_and_the_registry_passes() {
        let files = [
            file(
                "src/run/a.rs",
                "use crate::contracts::dlq_consumer::World;\n",
            ),
            file(
                "src/run/b.rs",
                "use crate::contracts::{CONTRACTS, outcome_queue};\n",
            ),
            file(
                "src/run/c.rs",
                "use crate::contracts::{CONTRACTS, registry::names};\n",
            ),
            file(
                "src/run/d.rs",
                "use crate::contracts as c;\nfn f() { c::dlq_consumer::go(); }\n",
            ),
            file(
                "src/contracts/x.rs",
                "use crate::contracts::dlq_consumer::World;\n",
            ),
            file("src/run/e.rs", "fn f() { serde_saphyr::from_str(t); }\n"),
            file(
                "crates/text/src/yaml.rs",
                "fn f() { serde_saphyr::from_str(t); }\n",
            ),
        ];
        let messages = rules(&files);
        assert_eq!(messages.len(), 4, "{messages:#?}");
        assert!(
            messages[0].starts_with("src/run/a.rs:1 names the contract folder `dlq_consumer`"),
            "{}",
            messages[0]
        );
        assert!(
            messages[1].starts_with("src/run/b.rs:1 names the contract folder `outcome_queue`"),
            "{}",
            messages[1]
        );
        assert!(
            messages[2].starts_with("src/run/d.rs:2 names the contract folder `dlq_consumer`"),
            "{}",
            messages[2]
        );
        assert!(
            messages[3].starts_with("src/run/e.rs:1 uses `serde_saphyr::from_str`"),
            "{}",
            messages[3]
        );
    }
}
