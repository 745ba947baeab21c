//! External implementations: programs checked through the JSON-lines protocol (docs/protocol.md).
//!
//! What lives here: `--impl` values (`launch.rs`, `entry.rs`); the shims built into the program
//! and written to a cache (`shims_cache.rs`); what one implementation may use and whether it is
//! boxed (`limits.rs`); starting and bounding child processes (`children.rs`); `grade`'s own
//! children, a `dlqspec run` per submission and a `dlqspec explain` per picture, run to their end
//! within a wall-clock budget, their report read back through a pipe and each stopped with all it
//! started at its deadline (`supervisor.rs`); the box around each implementation (`sandbox/`,
//! docs/security.md: its minimal root, copies, user namespace, cgroups, Landlock rules,
//! system-call filter, and a warm start's side of it); the warm start that forks a class's Python
//! submissions from one boxed zygote (`zygote.rs`) and how a run asks it for one
//! (`warm_request.rs`); descriptors handed to a child at fixed numbers (`descriptors.rs`); what
//! dlqspec keeps from them (`hardening.rs`); a program run as an implementation (`process.rs`,
//! its lifecycle in `process/lifecycle.rs` and its protocol client in `process/client.rs`); the
//! protocol's serde types (`protocol.rs`) and its channel (`pipes.rs`); smoke checks
//! (`smoke.rs`); and how a TypeScript solution runs and what of its project the box shows it
//! (`typescript.rs`).
//!
//! The only layer that starts processes (clippy.toml refuses `Command::new`, `fork`, `clone`, the
//! `exec` family, `posix_spawn`, `system` and `popen` elsewhere). Every implementation process
//! starts in the box unless `--sandbox off`: `Process::spawn` (`process/lifecycle.rs`) is the one
//! place an implementation starts, cold or through the zygote, whose child enters the same box
//! `sandbox::prepare` made; `tests/integration/adversarial/` holds each attack the box and the
//! verdict's second wall (report writing, `grade`'s pipe, nothing green for nothing) stop. Other
//! layers reach programs only through what this one offers: the exercise machinery of
//! `contracts/` runs an exercise's programs through a launcher the command line hands it, which
//! starts them here. It may use `contracts/` and below.

pub(crate) mod children;
#[cfg(unix)]
pub(crate) mod descriptors;
pub mod entry;
pub(crate) mod hardening;
pub mod launch;
pub(crate) mod limits;
pub(crate) mod lines;
pub(crate) mod pipes;
pub(crate) mod process;
pub(crate) mod protocol;
pub(crate) mod sandbox;
pub(crate) mod shims_cache;
pub(crate) mod smoke;
pub(crate) mod supervisor;
pub(crate) mod typescript;
pub(crate) mod warm_request;
pub(crate) mod zygote;
