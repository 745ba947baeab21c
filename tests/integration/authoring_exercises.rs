//! docs/authoring-exercises.md, followed literally: every file it shows under a `file=` name
//! is written into an empty folder, and the commands it shows are run there, in Python,
//! JavaScript and TypeScript, with no change to dlqspec. Its exercise is the repository's
//! `exercises/bounded-buffer/`, whose files it shows must be the repository's own.

use std::path::Path;

use crate::common::{dlqspec, node_tests, ran, root};

/// The files the page shows: each fenced block whose info string names a `file=`.
fn shown_files(page: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in page.lines() {
        match &mut open {
            None => {
                if let Some(info) = line.strip_prefix("```")
                    && let Some(name) = info
                        .split_whitespace()
                        .find_map(|w| w.strip_prefix("file="))
                {
                    open = Some((name.to_owned(), String::new()));
                }
            }
            Some((name, text)) => {
                if line == "```" {
                    files.push((name.clone(), std::mem::take(text)));
                    open = None;
                } else {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    files
}

fn dlqspec_in(folder: &Path, args: &[&str]) -> crate::common::Ran {
    ran(dlqspec()
        .current_dir(folder)
        .args(args)
        .output()
        .expect("dlqspec runs"))
}

#[test]
fn the_page_is_followed_from_an_empty_folder_to_a_graded_class() {
    let page =
        std::fs::read_to_string(root().join("docs/authoring-exercises.md")).expect("the page");
    let files = shown_files(&page);
    assert!(files.len() >= 6, "{files:?}");
    let folder = tempfile::tempdir().expect("a temp dir");
    for (name, text) in &files {
        let path = folder.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("the folder");
        std::fs::write(&path, text).expect("writes");
        // What the page shows of the repository's exercise is the repository's exercise.
        if let Some(rest) = name.strip_prefix("bounded-buffer/")
            && !rest.starts_with("specs/")
        {
            let own = std::fs::read_to_string(root().join("exercises/bounded-buffer").join(rest))
                .unwrap_or_else(|e| panic!("exercises/bounded-buffer/{rest}: {e}"));
            assert_eq!(&own, text, "{name} differs from the repository's");
        }
    }
    let dir = folder.path();
    let run = dlqspec_in(dir, &["run", "bounded-buffer"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for args in [
        &["explain", "bounded-buffer/specs/take-oldest-first.yaml"][..],
        &["lint", "bounded-buffer"],
        &["rules", "bounded-buffer"],
        &["strength", "bounded-buffer", "--explore-cases", "0"],
    ] {
        let ran = dlqspec_in(dir, args);
        assert_eq!(ran.code, 0, "{args:?}: {}{}", ran.stdout, ran.stderr);
    }
    let mistake = dlqspec_in(
        dir,
        &[
            "run",
            "bounded-buffer",
            "--impl",
            "bounded-buffer/mistakes/takes-newest.py",
        ],
    );
    assert_eq!(mistake.code, 1);
    assert!(
        mistake.stdout.contains(
            "cause: at step 5 `{take: {returns: a}}`: take: the reference returns a; yours returns b"
        ) && mistake
            .stdout
            .contains("a known mistake: take hands out the newest item"),
        "{}",
        mistake.stdout
    );
    let explore = dlqspec_in(
        dir,
        &[
            "explore",
            "--exercise",
            "bounded-buffer",
            "--contract",
            "bounded-buffer",
            "--impl",
            "bounded-buffer/mistakes/takes-newest.py",
            "--seed",
            "1",
        ],
    );
    assert_eq!(explore.code, 1, "{}{}", explore.stdout, explore.stderr);
    if !node_tests() {
        return;
    }
    let smoke = dlqspec_in(
        dir,
        &[
            "smoke",
            "--exercise",
            "bounded-buffer",
            "--impl",
            "solutions/buffer.mjs",
        ],
    );
    assert_eq!(smoke.code, 0, "{}{}", smoke.stdout, smoke.stderr);
    assert!(
        smoke.stdout.contains("\n  ok    put(\"a\") -> true  ("),
        "{}",
        smoke.stdout
    );
    for solution in ["solutions/buffer.mjs", "solutions/buffer.ts"] {
        let ran = dlqspec_in(dir, &["run", "bounded-buffer", "--impl", solution]);
        assert_eq!(ran.code, 0, "{solution}: {}{}", ran.stdout, ran.stderr);
    }
    let graded = dlqspec_in(
        dir,
        &[
            "grade",
            "solutions/buffer.mjs",
            "solutions/buffer.ts",
            "bounded-buffer/mistakes/takes-newest.py",
            "--specs",
            "bounded-buffer",
            "--output",
            "grades",
        ],
    );
    assert_eq!(graded.code, 1, "{}{}", graded.stdout, graded.stderr);
    assert!(
        graded
            .stdout
            .contains("3 submissions graded: 2 pass, 1 fail"),
        "{}",
        graded.stdout
    );
    assert!(dir.join("grades/summary.html").is_file());
}
