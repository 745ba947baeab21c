//! ARCHITECTURE.md, held: the layers of its code map, read from its table, against the
//! `crate::` paths in `src/`, and the invariants it states (who starts processes, who writes
//! files, who prints, every module saying what it is for).
//!
//! The code is read as text: comments and string literals are blanked first (a path in a doc
//! comment is no import), and so is every item under `#[cfg(test)]` (tests may reach any
//! layer to set a case up). A failure names the file, the line and the import or call.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One file of the crate: its path from the repository root, and its code with comments,
/// string contents and test-only items blanked (lines kept, so line numbers hold).
struct Code {
    path: String,
    code: String,
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

/// Comments blanked, and the contents of string and char literals; newlines stay.
fn blank_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
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
        } else if c == 'r' && matches!(next, Some('"') | Some('#')) && !ident_before(&chars, i) {
            // A raw string: r"..." or r#"..."#.
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
            out.push('"');
            out.extend(std::iter::repeat_n(' ', j - i));
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                out.push(blank(chars[j]));
                j += 1;
            }
            out.push('"');
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
            out.push('"');
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
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// `code` (comments and strings already blanked) with every item under `#[cfg(test)]`
/// blanked: a `mod tests { ... }`, a test-only `use`, fn or `mod name;`.
fn blank_test_items(code: &str) -> String {
    let mut out: Vec<char> = code.chars().collect();
    let attribute: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut i = 0;
    while i + attribute.len() <= out.len() {
        if out[i..i + attribute.len()] != attribute[..] {
            i += 1;
            continue;
        }
        // The item runs to its first `;` outside brackets, or to the end of its first block.
        let mut j = i;
        let mut depth = 0usize;
        while j < out.len() {
            match out[j] {
                '{' | '(' | '[' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                ';' if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        for c in &mut out[i..(j + 1).min(code.chars().count())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        i = j + 1;
    }
    out.into_iter().collect()
}

/// The top-level module a file of `src/` belongs to: `src/run/runner.rs` is `run`, `src/x.rs`
/// is `x`; the crate roots `lib.rs` and `main.rs` belong to none.
fn top_module(path: &str) -> Option<String> {
    let rest = path.strip_prefix("src/")?;
    let first = rest.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_owned())
}

/// The module path of a file of `src/`: `src/run/runner.rs` is `[run, runner]`, a `mod.rs` is
/// its folder's.
fn module_path(path: &str) -> Vec<String> {
    let rest = path.strip_prefix("src/").unwrap_or(path);
    let mut parts: Vec<String> = rest.split('/').map(str::to_owned).collect();
    if let Some(last) = parts.pop() {
        let stem = last.strip_suffix(".rs").unwrap_or(&last).to_owned();
        if !matches!(stem.as_str(), "mod" | "lib" | "main") {
            parts.push(stem);
        }
    }
    parts
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The path that starts at byte `at` of `code`: `a::b::C`, stopping at a group's `{`.
fn path_at(code: &str, at: usize) -> &str {
    let rest = &code[at..];
    let mut end = 0;
    let bytes = rest.as_bytes();
    while end < bytes.len() {
        let c = bytes[end] as char;
        if is_ident(c) {
            end += 1;
        } else if rest[end..].starts_with("::") && rest[end + 2..].starts_with(is_ident) {
            end += 2;
        } else {
            break;
        }
    }
    &rest[..end]
}

/// The items of a `{...}` group that starts at byte `at` (just after its `{`), each with its
/// byte offset: only the first level, whose first segment names a module.
fn group_items(code: &str, at: usize) -> Vec<(usize, String)> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut start = at;
    for (offset, c) in code[at..].char_indices() {
        let here = at + offset;
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push((start, code[start..here].to_owned()));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push((start, code[start..here].to_owned()));
                start = here + 1;
            }
            _ => {}
        }
    }
    items
        .into_iter()
        .map(|(start, item)| {
            let lead = item.len() - item.trim_start().len();
            (start + lead, item.trim().to_owned())
        })
        .filter(|(_, item)| !item.is_empty())
        .collect()
}

fn line_of(code: &str, at: usize) -> usize {
    code[..at].matches('\n').count() + 1
}

/// Every arrow from the file's top-level module to another: `crate::x...`, `$crate::x...`,
/// each item of `crate::{x::A, y}`, and `super::` paths that climb out of the module.
/// Macros called by path (`crate::mistakes!`) are the crate root's, not a module's.
fn arrows(file: &Code) -> Vec<Arrow> {
    let Some(from) = top_module(&file.path) else {
        return Vec::new();
    };
    let code = &file.code;
    let mut found = Vec::new();
    let mut push = |at: usize, to: &str, import: String| {
        if to != from && !to.is_empty() && to != "self" && to != "super" {
            found.push(Arrow {
                file: file.path.clone(),
                line: line_of(code, at),
                from: from.clone(),
                to: to.to_owned(),
                import,
            });
        }
    };
    for (at, _) in code.match_indices("crate::") {
        if at > 0 && is_ident(code[..at].chars().next_back().unwrap_or(' ')) {
            continue;
        }
        let after = at + "crate::".len();
        if code[after..].starts_with('{') {
            for (item_at, item) in group_items(code, after + 1) {
                let first = item.split("::").next().unwrap_or("").trim();
                push(item_at, first, format!("crate::{{{item}}}"));
            }
            continue;
        }
        let path = path_at(code, after);
        if code[after + path.len()..].starts_with('!') {
            continue;
        }
        let first = path.split("::").next().unwrap_or("");
        push(at, first, format!("crate::{path}"));
    }
    let depth = module_path(&file.path).len();
    for (at, _) in code.match_indices("super::") {
        if at > 0 && is_ident(code[..at].chars().next_back().unwrap_or(' ')) {
            continue;
        }
        let path = path_at(code, at);
        let segments: Vec<&str> = path.split("::").collect();
        let climbs = segments.iter().take_while(|s| **s == "super").count();
        if climbs >= depth && (at == 0 || !code[..at].ends_with("::")) {
            let to = segments.get(climbs).copied().unwrap_or("");
            push(at, to, path.to_owned());
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
            .and_then(|f| f.strip_suffix('/'))
        {
            layers.insert(name.to_owned(), layer);
        }
    }
    layers
}

/// The cycles between top-level modules (strongly connected components of more than one),
/// each told by the arrows that close it: one file and import per arrow.
fn cycles(arrows: &[Arrow]) -> Vec<String> {
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for arrow in arrows {
        graph.entry(&arrow.from).or_default().insert(&arrow.to);
        graph.entry(&arrow.to).or_default();
    }
    // Two modules are in one cycle when each reaches the other.
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
    let mut messages = Vec::new();
    for node in graph.keys() {
        if told.contains(node) || !reached[node].contains(node) {
            continue;
        }
        let component: BTreeSet<&str> = reached[node]
            .iter()
            .copied()
            .filter(|other| reached[other].contains(node))
            .collect();
        told.extend(component.iter().copied());
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

/// An invariant of ARCHITECTURE.md: the calls that only the folders in `only_in` may make.
struct Only {
    what: &'static str,
    calls: &'static [&'static str],
    only_in: &'static [&'static str],
}

/// Starting a process, with the standard library or libc.
const STARTS_PROCESSES: Only = Only {
    what: "only src/external/ starts processes",
    calls: &[
        "Command::new",
        "libc::fork",
        "libc::vfork",
        "libc::execv",
        "libc::execvp",
        "posix_spawn",
    ],
    only_in: &["src/external/"],
};

/// Creating, writing, renaming or removing files. Making a folder replaces nothing, so it is
/// not among them.
const WRITES_FILES: Only = Only {
    what: "only src/files/ writes files",
    calls: &[
        "File::create",
        "fs::write",
        "OpenOptions",
        "fs::rename",
        "fs::copy",
        "fs::remove_file",
        "fs::hard_link",
        "libc::rename",
    ],
    only_in: &["src/files/"],
};

/// Printing: the report layer and the layers above it may; nothing below them does.
const PRINTS: &[&str] = &[
    "println!",
    "eprintln!",
    "print!",
    "eprint!",
    "dbg!",
    "stdout()",
    "stderr()",
];

/// The honest exceptions to the invariants, each named in ARCHITECTURE.md: (file, call).
const EXCEPTIONS: &[(&str, &str)] = &[
    // grade starts `dlqspec run` itself, one child per submission; that child's external/
    // starts the implementation.
    ("src/commands/grade.rs", "Command::new"),
    // Spec files are opened for reading only, with no link followed and no FIFO waited on.
    ("src/text/source.rs", "OpenOptions"),
    // `DLQSPEC_PROTOCOL_LOG`: a debugging log the user names, appended to, never replaced.
    ("src/external/process.rs", "OpenOptions"),
    // A report of an earlier grading is removed so it cannot pass for this one's.
    ("src/commands/grade.rs", "fs::remove_file"),
    // The box's pids cgroup is set by writing its `pids.max`: a kernel control file in a
    // cgroup folder dlqspec made for that one implementation process (or for the zygote),
    // not a user's file.
    ("src/external/sandbox.rs", "fs::write"),
    // The shims built into the program are written into a folder of dlqspec's own cache,
    // under a temporary name then renamed into place; only its own leftovers are removed.
    ("src/external/shims_cache.rs", "OpenOptions"),
    ("src/external/shims_cache.rs", "fs::rename"),
    ("src/external/shims_cache.rs", "fs::remove_file"),
    // `--output -` (or /dev/stdout): a report goes to the stream through the same commit.
    ("src/files/atomic_file.rs", "stdout()"),
    ("src/files/atomic_file.rs", "stderr()"),
    // smoke drives a few calls of each contract's world, so it builds the dlq-consumer one.
    ("src/external/smoke.rs", "contracts::dlq_consumer"),
];

/// Where `call` stands in `code` as a call, not as part of a longer name (`print!` is not
/// `eprint!`, `fs::write` is not `fs::write_all`).
fn calls_of(code: &str, call: &str) -> Vec<usize> {
    code.match_indices(call)
        .map(|(at, _)| at)
        .filter(|&at| {
            let before = code[..at].chars().next_back().unwrap_or(' ');
            let after = code[at + call.len()..].chars().next().unwrap_or(' ');
            // `fs::write` in `fs::write_all` is part of a longer name.
            let longer_name = call.ends_with(is_ident) && is_ident(after);
            !is_ident(before) && !longer_name
        })
        .collect()
}

fn excepted(path: &str, call: &str) -> bool {
    EXCEPTIONS.contains(&(path, call))
}

/// The calls `only` allows elsewhere only, made outside its folders and not excepted.
fn broken_only(only: &Only, files: &[Code]) -> Vec<String> {
    let mut messages = Vec::new();
    for file in files {
        if only.only_in.iter().any(|dir| file.path.starts_with(dir)) {
            continue;
        }
        for call in only.calls {
            if excepted(&file.path, call) {
                continue;
            }
            for at in calls_of(&file.code, call) {
                messages.push(format!(
                    "{}:{} calls `{call}`, but {}: move it there, or name the exception in \
                     ARCHITECTURE.md and in this test's EXCEPTIONS",
                    file.path,
                    line_of(&file.code, at),
                    only.what
                ));
            }
        }
    }
    messages
}

/// The printing done below the report layer.
fn prints_below(report: u32, layers: &BTreeMap<String, u32>, files: &[Code]) -> Vec<String> {
    let mut messages = Vec::new();
    for file in files {
        let Some(module) = top_module(&file.path) else {
            continue;
        };
        if layers.get(&module).is_none_or(|layer| *layer >= report) {
            continue;
        }
        for call in PRINTS {
            if excepted(&file.path, call) {
                continue;
            }
            for at in calls_of(&file.code, call) {
                messages.push(format!(
                    "{}:{} calls `{call}`, but nothing below the reporters prints: return what \
                     to tell, and let a reporter or a command print it",
                    file.path,
                    line_of(&file.code, at)
                ));
            }
        }
    }
    messages
}

/// The places outside `src/contracts/` that name one contract's folder (`contracts::NAME`, or
/// `NAME` in a `contracts::{...}` group): everything else reaches contracts through the
/// registry, so adding a contract is adding its folder and its line there.
fn contracts_named_outside(contract_folders: &[String], files: &[Code]) -> Vec<String> {
    let mut messages = Vec::new();
    for file in files {
        if file.path.starts_with("src/contracts/") || top_module(&file.path).is_none() {
            continue;
        }
        for (at, _) in file.code.match_indices("contracts::") {
            let after = at + "contracts::".len();
            let named = if file.code[after..].starts_with('{') {
                let end = file.code[after..]
                    .find('}')
                    .map_or(file.code.len(), |e| after + e);
                file.code[after + 1..end].to_owned()
            } else {
                path_at(&file.code, after).to_owned()
            };
            for contract in contract_folders {
                let call = format!("contracts::{contract}");
                let names_it = named
                    .split(|c: char| !is_ident(c))
                    .next()
                    .is_some_and(|first| first == contract)
                    || named
                        .split(|c: char| c == ',' || c.is_whitespace())
                        .any(|item| item.split("::").next() == Some(contract.as_str()));
                if names_it && !excepted(&file.path, &call) {
                    messages.push(format!(
                        "{}:{} names the contract folder `{contract}`: reach it through \
                         `contracts::registry` (ARCHITECTURE.md), or name the exception",
                        file.path,
                        line_of(&file.code, at)
                    ));
                }
            }
        }
    }
    messages
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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

/// The files of `src/`, read and blanked.
fn crate_code() -> Vec<Code> {
    let mut paths = Vec::new();
    rust_files(&root().join("src"), &mut paths);
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("a source file");
            Code {
                path: path
                    .strip_prefix(root())
                    .expect("below the root")
                    .to_string_lossy()
                    .replace('\\', "/"),
                code: blank_test_items(&blank_comments_and_strings(&text)),
            }
        })
        .collect()
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

fn all_arrows(files: &[Code]) -> Vec<Arrow> {
    files.iter().flat_map(arrows).collect()
}

fn assert_none(what: &str, messages: Vec<String>) {
    assert!(messages.is_empty(), "{what}:\n{}", messages.join("\n"));
}

#[test]
fn the_code_map_names_every_top_level_module_and_only_those() {
    let layers = layers(&architecture());
    let mut modules = BTreeSet::new();
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
        "ARCHITECTURE.md's code map has no row `| LAYER | `src/NAME/` | ...` for {unplaced:?} \
         (a loose file at src/ belongs in a folder)"
    );
    let gone: Vec<_> = layers.keys().filter(|l| !modules.contains(*l)).collect();
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md's code map names folders src/ does not have: {gone:?}"
    );
}

#[test]
fn no_cycle_between_top_level_modules() {
    assert_none(
        "the top-level modules form cycles",
        cycles(&all_arrows(&crate_code())),
    );
}

#[test]
fn every_arrow_points_down_the_layers() {
    assert_none(
        "imports against the layers of ARCHITECTURE.md",
        against_layers(&layers(&architecture()), &all_arrows(&crate_code())),
    );
}

#[test]
fn only_external_starts_processes() {
    assert_none(
        "processes started outside src/external/",
        broken_only(&STARTS_PROCESSES, &crate_code()),
    );
}

#[test]
fn only_the_file_safety_folder_writes_files() {
    assert_none(
        "files written outside src/files/",
        broken_only(&WRITES_FILES, &crate_code()),
    );
}

#[test]
fn nothing_below_the_reporters_prints() {
    let layers = layers(&architecture());
    let report = *layers.get("report").expect("the code map places report");
    assert_none(
        "printing below the reporters",
        prints_below(report, &layers, &crate_code()),
    );
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

#[test]
fn only_the_registry_knows_the_contracts_by_name() {
    let folders = contract_folders();
    assert!(folders.len() >= 2, "{folders:?}");
    assert_none(
        "contracts named outside src/contracts/",
        contracts_named_outside(&folders, &crate_code()),
    );
}

#[test]
fn every_exception_is_named_in_architecture_md_and_still_needed() {
    let doc = architecture();
    let files = crate_code();
    for (path, call) in EXCEPTIONS {
        assert!(
            doc.contains(&format!("`{path}`")),
            "the exception ({path}, {call}) is not named in ARCHITECTURE.md"
        );
        let file = files
            .iter()
            .find(|f| f.path == *path)
            .unwrap_or_else(|| panic!("the exception names {path}, which is gone"));
        assert!(
            !calls_of(&file.code, call).is_empty(),
            "{path} no longer calls `{call}`: drop the exception here and in ARCHITECTURE.md"
        );
    }
}

#[test]
fn every_rust_file_says_what_it_is_for() {
    let mut paths = Vec::new();
    for dir in ["src", "tests", "benches", "examples"] {
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

/// The checker on made-up crates, so it is seen to fail where it must.
mod checker {
    use super::*;

    fn code(path: &str, text: &str) -> Code {
        Code {
            path: path.to_owned(),
            code: blank_test_items(&blank_comments_and_strings(text)),
        }
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
| 2 | `src/middle/` | the run | base |
| 1 | `src/base/` | spec text | nothing |
| 1 | `src/peer/` | a peer of base | nothing |
";

    #[test]
    fn the_layers_are_read_from_the_code_map_table() {
        let layers = layers(MAP);
        assert_eq!(layers.get("top"), Some(&3));
        assert_eq!(layers.get("base"), Some(&1));
        assert_eq!(layers.get("peer"), Some(&1));
        assert_eq!(layers.len(), 4);
    }

    #[test]
    fn a_deliberate_cycle_fails_naming_each_file_and_import() {
        let files = [
            code(
                "src/base/text.rs",
                "//! t\nuse crate::middle::runner::Run;\n",
            ),
            code(
                "src/middle/runner.rs",
                "//! r\n\nuse crate::{base::text::Text, top};\n",
            ),
        ];
        let messages = cycles(&all_arrows(&files));
        assert_eq!(messages.len(), 1, "{messages:?}");
        let message = &messages[0];
        assert!(message.contains("base, middle"), "{message}");
        assert!(
            message.contains("src/base/text.rs:2 uses `crate::middle::runner::Run`"),
            "{message}"
        );
        assert!(
            message.contains("src/middle/runner.rs:3 uses `crate::{base::text::Text}`"),
            "{message}"
        );
    }

    #[test]
    fn an_upward_arrow_fails_naming_the_file_and_the_import() {
        let files = [code(
            "src/base/text.rs",
            "//! t\nfn f() {\n    crate::top::main();\n}\n",
        )];
        let messages = against_layers(&layers(MAP), &all_arrows(&files));
        let message = the_one(messages);
        assert!(
            message.starts_with("src/base/text.rs:3 uses `crate::top::main`: `base` (layer 1)"),
            "{message}"
        );
    }

    #[test]
    fn peers_do_not_use_each_other_and_unplaced_modules_fail() {
        let files = [
            code("src/base/a.rs", "use crate::peer::B;\n"),
            code("src/stray.rs", "use crate::base::a;\n"),
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
            code(
                "src/top/x.rs",
                "use crate::{middle::{self, Run}, base};\nuse crate::top::y;\nuse super::y::Z;\n",
            ),
            code("src/middle/mod.rs", "pub fn f() { crate::base::g() }\n"),
        ];
        let arrows = all_arrows(&files);
        assert_eq!(arrows.len(), 3, "{arrows:?}");
        assert_none("", against_layers(&layers(MAP), &arrows));
        assert_none("", cycles(&arrows));
    }

    #[test]
    fn comments_strings_macros_and_test_modules_are_no_arrows() {
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
#[cfg(test)]
use crate::top::more;
pub fn after() { crate::base::g(); }
"##;
        let arrows = all_arrows(&[code("src/middle/m.rs", text)]);
        let targets: Vec<_> = arrows.iter().map(|a| (a.to.as_str(), a.line)).collect();
        assert_eq!(targets, [("base", 15)], "{arrows:?}");
    }

    #[test]
    fn super_paths_that_climb_out_of_the_module_are_arrows() {
        let arrows = all_arrows(&[code(
            "src/middle/deep/x.rs",
            "use super::super::y;\nuse super::super::super::top::T;\n",
        )]);
        let targets: Vec<_> = arrows.iter().map(|a| a.to.as_str()).collect();
        assert_eq!(targets, ["top"], "{arrows:?}");
    }

    #[test]
    fn a_process_started_outside_external_fails_naming_file_and_line() {
        let files = [
            code(
                "src/middle/run.rs",
                "fn f() {\n    std::process::Command::new(\"sh\");\n}\n",
            ),
            code("src/external/launch.rs", "fn f() { Command::new(p); }\n"),
        ];
        let messages = broken_only(&STARTS_PROCESSES, &files);
        let message = the_one(messages);
        assert!(
            message.starts_with("src/middle/run.rs:2 calls `Command::new`"),
            "{message}"
        );
    }

    #[test]
    fn a_file_written_outside_files_fails() {
        let files = [code(
            "src/base/save.rs",
            "fn f() { std::fs::write(p, b); let _ = w.write_all(b); }\n",
        )];
        let messages = broken_only(&WRITES_FILES, &files);
        let message = the_one(messages);
        assert!(message.contains("calls `fs::write`"), "{message}");
    }

    #[test]
    fn a_contract_named_outside_its_folder_fails_and_the_registry_passes() {
        let folders = ["dlq_consumer".to_owned(), "outcome_queue".to_owned()];
        let files = [
            code(
                "src/run/a.rs",
                "use crate::contracts::dlq_consumer::World;\n",
            ),
            code(
                "src/run/b.rs",
                "use crate::contracts::{CONTRACTS, outcome_queue};\n",
            ),
            code(
                "src/run/c.rs",
                "use crate::contracts::{CONTRACTS, registry::names};\n",
            ),
            code(
                "src/contracts/x.rs",
                "use crate::contracts::dlq_consumer::World;\n",
            ),
        ];
        let messages = contracts_named_outside(&folders, &files);
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].starts_with("src/run/a.rs:1 names the contract folder `dlq_consumer`"));
        assert!(
            messages[1].starts_with("src/run/b.rs:1 names the contract folder `outcome_queue`")
        );
    }

    #[test]
    fn printing_below_the_reporters_fails_and_above_them_passes() {
        let layers = layers(MAP);
        let files = [
            code("src/base/a.rs", "fn f() { eprintln!(\"x\"); }\n"),
            code("src/top/b.rs", "fn f() { println!(\"x\"); }\n"),
        ];
        let messages = prints_below(2, &layers, &files);
        let message = the_one(messages);
        assert!(
            message.starts_with("src/base/a.rs:1 calls `eprintln!`"),
            "{message}"
        );
    }
}
