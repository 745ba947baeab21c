//! Every command's `--help` as a snapshot (`tests/integration/snapshots/help_*.snap`): the
//! command line's vocabulary, each flag's name, value, default and words, and the examples, in
//! one reviewable place, so that a change to any is seen whole. `INSTA_UPDATE=always` writes
//! them anew (docs/testing.md, Snapshots).

use crate::common::{run, snapshot_settings};

/// The subcommands `dlqspec --help` lists, but `help`.
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|command| *command != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_commands_help_is_its_snapshot() {
    let top = run(&["--help"]);
    assert_eq!(top.code, 0, "{}", top.stderr);
    let commands = commands(&top.stdout);
    assert!(commands.len() >= 10, "{commands:?}");
    snapshot_settings().bind(|| {
        insta::assert_snapshot!("help", top.stdout);
        for command in &commands {
            let ran = run(&[command, "--help"]);
            assert_eq!(ran.code, 0, "{command}: {}", ran.stderr);
            insta::assert_snapshot!(format!("help_{command}"), ran.stdout);
        }
    });
}
