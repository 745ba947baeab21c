//! The language shims' own self-test (`shims/tests/run.py`), run as part of `cargo test`.

use std::process::Command;

use crate::common::{node_tests, root};

#[test]
fn the_python_and_node_shims_pass_their_self_test() {
    let mut command = Command::new("python3");
    command.arg("shims/tests/run.py").current_dir(root());
    if node_tests() {
        command.env_remove("SHIM_TESTS_SKIP_NODE");
    } else {
        command.env("SHIM_TESTS_SKIP_NODE", "1");
    }
    let output = command.output().expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let closing = stdout.lines().last().unwrap_or_default();
    assert!(
        output.status.success() && closing.ends_with(" passed, 0 failed"),
        "shim self-test failed ({}):\n{stdout}{stderr}",
        output.status
    );
}
