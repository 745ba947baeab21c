//! The nine violations of ARCHITECTURE.md's rules that the text reader of old let through, for
//! the tests that plant them in a low layer's code: tests/architecture.rs inside a function no
//! build compiles (`#[cfg(any())]`), tests/integration/rules.rs in live code of a copy of the
//! crate, through clippy. Each is a function's body, compilable where it is planted.

/// One planted violation: what it is, the body of the function that holds it, and the lint
/// clippy reports it by (`None`: a rule of the layers, which clippy does not hold).
pub(crate) struct Plant {
    pub name: &'static str,
    pub body: &'static str,
    pub lint: Option<&'static str>,
}

pub(crate) const PLANTS: [Plant; 9] = [
    Plant {
        name: "fs::remove_dir_all",
        body: "let _ = std::fs::remove_dir_all(\"planted\");",
        lint: Some("clippy::disallowed_methods"),
    },
    Plant {
        name: "File::options().write",
        body: "let _ = std::fs::File::options().write(true).open(\"planted\");",
        lint: Some("clippy::disallowed_methods"),
    },
    Plant {
        name: "libc::execve",
        body: "unsafe { libc::execve(std::ptr::null(), std::ptr::null(), std::ptr::null()) };",
        lint: Some("clippy::disallowed_methods"),
    },
    Plant {
        name: "libc::posix_spawnp",
        body: "unsafe { libc::posix_spawnp(std::ptr::null_mut(), std::ptr::null(), \
               std::ptr::null(), std::ptr::null(), std::ptr::null(), std::ptr::null()) };",
        lint: Some("clippy::disallowed_methods"),
    },
    Plant {
        name: "Command as Cmd",
        body: "use std::process::Command as Cmd;\n    let _ = Cmd::new(\"sh\");",
        lint: Some("clippy::disallowed_methods"),
    },
    Plant {
        name: "contracts as c",
        body: "use crate::contracts as c;\n    let _ = c::dlq_consumer::contract::NAME;",
        lint: None,
    },
    Plant {
        name: "tempfile's persist",
        body: "let _ = tempfile::NamedTempFile::new().map(|temp| temp.persist(\"planted\"));",
        lint: Some("clippy::disallowed_methods"),
    },
    Plant {
        name: "libc::write(1, ..)",
        body: "unsafe { libc::write(1, b\"x\".as_ptr().cast(), 1) };",
        lint: Some("clippy::disallowed_methods"),
    },
    Plant {
        name: "stdout()",
        body: "let _ = std::io::stdout();",
        lint: Some("clippy::disallowed_methods"),
    },
];

/// Markup written by hand in a reporter: refused by tests/architecture.rs (HTML and SVG are
/// maud's `html!` only), which tests/integration/rules.rs runs on a copy planted in live code.
pub(crate) const MARKUP: Plant = Plant {
    name: "format!(\"<td>{}</td>\", name)",
    body: "let name = \"x\";\n    let _ = format!(\"<td>{}</td>\", name);",
    lint: None,
};
