//! One CLI vocabulary: every command's `--help` spells output, wall time, format and the limits
//! one way, and each old spelling still works for one release, with a note on stderr.

use std::path::Path;

use clap::CommandFactory;

use crate::common::{dlqspec, path_arg, ran, run};

/// The subcommands a user can name (not the hidden `init`).
fn subcommands() -> Vec<String> {
    dlqspec::commands::cli::Cli::command()
        .get_subcommands()
        .filter(|command| !command.is_hide_set())
        .map(|command| command.get_name().to_owned())
        .collect()
}

/// Whether `help` names the option `--name` itself (not `--name-more` or `--named`).
fn names_option(help: &str, name: &str) -> bool {
    let option = format!("--{name}");
    help.match_indices(&option).any(|(at, _)| {
        help[at + option.len()..]
            .chars()
            .next()
            .is_none_or(|next| !(next.is_ascii_alphanumeric() || next == '-'))
    })
}

#[test]
fn every_help_spells_output_wall_time_and_format_one_way() {
    let commands = subcommands();
    assert!(commands.len() > 10, "{commands:?}");
    for command in &commands {
        let ran = run(&[command, "--help"]);
        assert_eq!(ran.code, 0, "{command} --help\n{}", ran.stderr);
        for old in ["out", "time", "warm"] {
            assert!(
                !names_option(&ran.stdout, old),
                "`{command} --help` names --{old}:\n{}",
                ran.stdout
            );
        }
    }
    let help = |command: &str| run(&[command, "--help"]).stdout;
    for (command, what) in [
        ("run", "<FILE>"),
        ("explain", "<FILE>"),
        ("matrix", "<FILE>"),
        ("grade", "<DIR>"),
        ("explore", "<DIR>"),
        ("strength", "<DIR>"),
    ] {
        let text = help(command);
        assert!(
            text.contains(&format!("-o, --output {what}")),
            "{command}: no `-o, --output {what}`:\n{text}"
        );
    }
    for command in ["run", "explain", "matrix"] {
        let text = help(command);
        assert!(text.contains("--format <FORMAT>"), "{command}:\n{text}");
    }
    for command in ["run", "grade", "explore"] {
        let text = help(command);
        assert!(text.contains("--budget <SECS>"), "{command}:\n{text}");
    }
    // The limits, from the one struct that defines them.
    for command in [
        "run", "grade", "watch", "explore", "explain", "smoke", "matrix",
    ] {
        let text = help(command);
        for limit in [
            "--timeout <SECS>",
            "--memory <SIZE>",
            "--cpu <SECS>",
            "--processes <N>",
            "--disk <SIZE>",
            "--sandbox <ON|OFF>",
        ] {
            assert!(text.contains(limit), "{command}: no {limit}:\n{text}");
        }
    }
}

/// The note an old spelling prints.
fn note(old: &str, new: &str) -> String {
    format!("note: {old} is now {new}; {old} will go in the next release\n")
}

/// The spec files in `dir`.
fn specs_in(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.path().extension().is_some_and(|x| x == "yaml"))
                .count()
        })
        .unwrap_or(0)
}

/// `dlqspec ARGS --out DIR`, DIR a folder still to make, for a command that finds specs (it
/// exits 1): its stdout, after checking the note on `--out`, and how many specs it wrote in DIR.
fn written_with_old_out(args: &[&str]) -> (String, usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let written = dir.path().join("written");
    let ran = ran(dlqspec()
        .args(args)
        .arg("--out")
        .arg(&written)
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains(&note("--out", "--output")),
        "{}",
        ran.stderr
    );
    (ran.stdout, specs_in(&written))
}

#[test]
fn explore_out_still_writes_into_the_folder_with_a_note() {
    let (stdout, specs) = written_with_old_out(&[
        "explore",
        "--impl",
        "python:tests/solutions/dlq_no_poison.py",
        "--seed",
        "1",
    ]);
    assert_eq!(specs, 1, "{stdout}");
}

#[test]
fn explore_time_is_still_the_budget_with_a_note() {
    let ran = run(&[
        "explore",
        "--contract",
        "outcome-queue",
        "--cases",
        "1000000",
        "--time",
        "0.5",
        "--seed",
        "2",
    ]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("for at most 0.5 s"), "{}", ran.stdout);
    assert!(
        ran.stderr.contains(&note("--time", "--budget")),
        "{}",
        ran.stderr
    );
}

#[test]
fn strength_out_still_writes_into_the_folder_with_a_note() {
    let (stdout, specs) = written_with_old_out(&[
        "strength",
        "specs/outcome-queue/replay-twice-returns-false.yaml",
        "--explore-cases",
        "400",
    ]);
    assert!(specs > 0, "{stdout}");
}

#[test]
fn grade_warm_still_grades_and_says_it_does_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let grades = dir.path().join("grades");
    let ran = ran(dlqspec()
        .args([
            "grade",
            "--warm",
            "--specs",
            "specs/outcome-queue/success-moves-to-done.yaml",
            "--output",
        ])
        .arg(&grades)
        .arg("examples/python/solution.py")
        .output()
        .expect("dlqspec runs"));
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains(
            "note: --warm does nothing: a warm start is the default (--cold asks for a cold one); --warm will go in the next release\n"
        ),
        "{}",
        ran.stderr
    );
    assert!(grades.join("summary.csv").is_file());
}

#[test]
fn an_old_spelling_and_its_new_one_together_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = path_arg(dir.path()).to_owned();
    for args in [
        vec!["explore", "--out", &a, "--output", &a],
        vec!["explore", "--time", "1", "--budget", "1"],
        vec!["strength", "--out", &a, "--output", &a],
        vec!["grade", "--warm", "--cold", "x.py"],
    ] {
        let ran = run(&args);
        assert_eq!(ran.code, 2, "{args:?}\n{}", ran.stderr);
        assert!(ran.stderr.contains("cannot be used with"), "{}", ran.stderr);
    }
}

#[test]
fn matrix_writes_the_format_asked_for_to_stdout_or_to_output() {
    let spec = "specs/outcome-queue/success-moves-to-done.yaml";
    let markdown = run(&["matrix", spec, "--format", "markdown"]);
    assert_eq!(markdown.code, 0, "{}", markdown.stderr);
    assert!(
        markdown
            .stdout
            .starts_with("# dlqspec conformance matrix\n"),
        "{}",
        markdown.stdout
    );
    let text = run(&["matrix", spec]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(!text.stdout.starts_with('#'), "{}", text.stdout);

    // --format names the file's format whatever its extension; the terminal keeps its table.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("matrix.txt");
    let ran = run(&["matrix", spec, "--format", "html", "-o", path_arg(&file)]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let page = std::fs::read_to_string(&file).expect("the page is written");
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    // The table up to its closing count, which carries the run's time.
    let table = |stdout: &str| -> Vec<String> {
        stdout
            .lines()
            .take_while(|line| !line.starts_with("1 spec x "))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(table(&ran.stdout), table(&text.stdout), "{}", ran.stdout);
    assert!(ran.stdout.contains("written to "), "{}", ran.stdout);
}

#[test]
fn completions_and_man_pages_offer_no_old_spelling() {
    for shell in ["bash", "zsh", "fish"] {
        let ran = run(&["completions", shell]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        for old in [
            "--warm", "--out ", "--time ", "'--out=", "'--time=", "-l warm", "-l out ", "-l time ",
        ] {
            assert!(!ran.stdout.contains(old), "{shell} completions offer {old}");
        }
    }
    for command in ["explore", "strength", "grade"] {
        let ran = run(&["man", command]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        for old in [
            "\\-\\-warm",
            "\\-\\-out\\fR",
            "\\-\\-out ",
            "\\-\\-time\\fR",
            "\\-\\-time ",
        ] {
            assert!(!ran.stdout.contains(old), "man {command} names {old}");
        }
    }
}
