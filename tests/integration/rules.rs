//! The rules clippy holds (clippy.toml), seen to hold: the violations the text reader of old
//! let through (`tests/support/plants.rs`), planted in live code of low layers of a copy of
//! the crate, each fail `cargo clippy -- -D warnings` at its own line. (The one clippy does
//! not hold, an alias to a contract's folder, and all nine inside `#[cfg(any())]`, where no
//! build looks, are tests/architecture.rs's.)
//!
//! One copy holds every plant, each in a file of its own, in `src/` and in the workspace's
//! crates, and is checked twice (`src/` planted, then the crates too): clippy reports a lint at
//! every place it is broken, so each plant fails on its own, as in a copy of its own, at the
//! cost of two check builds instead of eight. The copy shares the build folder, so the
//! dependencies are not checked again. Markup written by hand in a reporter, which no lint
//! sees, is planted the same way and fails tests/architecture.rs run on the copy. The planted
//! tier (common::Tier): CI runs it, a contributor's `cargo test` only when asked.

use std::path::Path;
use std::process::Command;

use crate::common::{Tier, root, target_dir, tier};
use crate::plants::{MARKUP, PLANTS};

/// The files of low layers the plants go into, one each, in the order of `PLANTS`: the
/// workspace's crates among them, which clippy.toml holds as it holds `src/` (a plant needing
/// libc goes where libc is a dependency, which amqp has not).
const HOSTS: [&str; 9] = [
    "crates/text/src/suggest.rs",
    "crates/text/src/source.rs",
    "src/model/rule.rs",
    "src/generate/rng.rs",
    "crates/text/src/truncate.rs",
    "crates/text/src/listing.rs",
    "src/model/captured.rs",
    "src/load/discover.rs",
    "crates/amqp/src/wire.rs",
];

/// Copies what a check build of the workspace reads into `copy`: the manifest, the lock, the
/// rules, `src/` and `crates/` (copied, to be planted in) and, linked, what it includes from
/// elsewhere.
fn copy_crate(copy: &Path) {
    for file in ["Cargo.toml", "Cargo.lock", "clippy.toml", "ARCHITECTURE.md"] {
        std::fs::copy(root().join(file), copy.join(file)).expect(file);
    }
    copy_folder(&root().join("src"), &copy.join("src"));
    copy_folder(&root().join("crates"), &copy.join("crates"));
    // The manifest names the benchmarks; the shims are included (the formats' schemas are
    // `crates/formats/`'s, copied above).
    for folder in ["benches", "shims"] {
        std::os::unix::fs::symlink(root().join(folder), copy.join(folder)).expect(folder);
    }
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder of the copy");
    for entry in std::fs::read_dir(from).expect("a folder of the crate") {
        let path = entry.expect("an entry").path();
        let target = to.join(path.file_name().expect("a name"));
        if path.is_dir() {
            copy_folder(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("a file of the crate");
        }
    }
}

/// Where clippy reported each lint it failed on: (file, line, lint).
fn reported(json_lines: &str) -> Vec<(String, u64, String)> {
    let mut found = Vec::new();
    for line in json_lines.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-message" {
            continue;
        }
        let message = &message["message"];
        let Some(lint) = message["code"]["code"].as_str() else {
            continue;
        };
        for span in message["spans"].as_array().into_iter().flatten() {
            if span["is_primary"] == true {
                found.push((
                    span["file_name"].as_str().unwrap_or_default().to_owned(),
                    span["line_start"].as_u64().unwrap_or_default(),
                    lint.to_owned(),
                ));
            }
        }
    }
    found
}

#[test]
fn each_planted_violation_fails_clippy_at_its_line() {
    if !tier(Tier::Planted) {
        return;
    }
    std::fs::create_dir_all(target_dir().join("tmp")).expect("target/tmp");
    let copy = tempfile::Builder::new()
        .prefix("planted-")
        .tempdir_in(target_dir().join("tmp"))
        .expect("a folder for the copy");
    copy_crate(copy.path());
    // Planted and checked in two rounds: `src/` first, then the workspace's crates, whose
    // failed check stops cargo before dlqspec's own code is linted (clippy lints every member
    // it builds). Each round's check must fail.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut planted = Vec::new();
    let mut reported_all = Vec::new();
    let mut stderr = String::new();
    for round in ["src/", "crates/"] {
        for (index, (plant, host)) in PLANTS.iter().zip(HOSTS).enumerate() {
            let Some(lint) = plant.lint else { continue };
            if !host.starts_with(round) {
                continue;
            }
            let path = copy.path().join(host);
            let mut text = std::fs::read_to_string(&path).expect("the host file");
            assert!(text.ends_with('\n'), "{host} ends with a newline");
            // After the file's lines: an empty one, the attribute, the `fn`, then the plant's.
            let line = text.lines().count() + 4 + plant.body.lines().count() - 1;
            text.push_str(&format!(
                "\n#[allow(dead_code)]\nfn planted_{index}() {{\n    {}\n}}\n",
                plant.body
            ));
            std::fs::write(&path, text).expect("the planted file");
            planted.push((plant.name, host, line as u64, lint));
        }
        let checked = Command::new(&cargo)
            // `--keep-going`: without it cargo starts no crate's lint after the first one
            // fails, and which crate fails first depends on the machine's scheduling.
            .args([
                "clippy",
                "--quiet",
                "--locked",
                "--keep-going",
                "--message-format=json",
            ])
            .args(["--", "-D", "warnings"])
            .current_dir(copy.path())
            .env("CARGO_TARGET_DIR", target_dir())
            .env_remove("RUSTFLAGS")
            .output()
            .expect("cargo clippy runs");
        let errors = String::from_utf8_lossy(&checked.stderr).into_owned();
        assert!(
            !checked.status.success(),
            "clippy passed the copy planted in {round}:\n{errors}"
        );
        reported_all.extend(reported(&String::from_utf8_lossy(&checked.stdout)));
        stderr.push_str(&errors);
    }
    let reported = reported_all;
    for (name, host, line, lint) in &planted {
        assert!(
            reported
                .iter()
                .any(|(file, at, by)| file == host && at == line && by == lint),
            "the planted `{name}` ({host}:{line}) did not fail {lint}; clippy reported \
             {reported:?}\n{stderr}"
        );
    }
    // Nothing else failed: the copy is the crate, which passes.
    for (file, at, lint) in &reported {
        assert!(
            planted
                .iter()
                .any(|(_, host, line, _)| host == file && line == at),
            "clippy failed {file}:{at} ({lint}), where nothing was planted"
        );
    }
}

/// Markup written by hand in a reporter's live code fails tests/architecture.rs (clippy has no
/// lint for it): the architecture test, built already, is run on a planted copy.
#[test]
fn markup_planted_in_a_reporter_fails_the_architecture_test() {
    if !tier(Tier::Planted) {
        return;
    }
    std::fs::create_dir_all(target_dir().join("tmp")).expect("target/tmp");
    let copy = tempfile::Builder::new()
        .prefix("planted-markup-")
        .tempdir_in(target_dir().join("tmp"))
        .expect("a folder for the copy");
    copy_crate(copy.path());
    let host = "src/report/tap.rs";
    let path = copy.path().join(host);
    let mut text = std::fs::read_to_string(&path).expect("the host file");
    let line = text.lines().count() + 5;
    text.push_str(&format!(
        "\n#[allow(dead_code)]\nfn planted() {{\n    {}\n}}\n",
        MARKUP.body
    ));
    std::fs::write(&path, text).expect("the planted file");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let checked = Command::new(&cargo)
        .args([
            "test",
            "--quiet",
            "--locked",
            "--test",
            "architecture",
            "--",
        ])
        .arg("html_and_svg_are_written_by_the_template_engine_only")
        .current_dir(root())
        .env("CARGO_TARGET_DIR", target_dir())
        .env("DLQSPEC_ARCHITECTURE_ROOT", copy.path())
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo test runs");
    let said = String::from_utf8_lossy(&checked.stdout);
    assert!(
        !checked.status.success(),
        "the planted markup passed:\n{said}"
    );
    assert!(
        said.contains(&format!(
            "{host}:{line}: a string literal holds the tag `<td`"
        )),
        "the planted markup failed elsewhere:\n{said}"
    );
}
