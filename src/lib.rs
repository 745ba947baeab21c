//! dlqspec: the rules of dead-letter-queue handling as executable, checkable contracts.
//!
//! YAML specs describe scenarios; the runner executes them against the built-in reference
//! implementation or an external one, and reporters render the outcomes.
//!
//! Running a spec from Rust, as the `dlqspec` binary does:
//!
//! ```
//! use dlqspec::contracts::builtin::Builtin;
//! use dlqspec::contracts::contract::RunMode;
//! use dlqspec::model::outcome::Outcome;
//! use dlqspec::{load::loader, text::source::SourceFile};
//!
//! let text = "\
//! contract: dlq-consumer
//! name: a transient error is retried
//! rules: [dlq-consumer/transient-retry]
//! messages: [{id: a, body: order-1}]
//! handler: {a: [transient: db timeout, ok]}
//! steps:
//!   - process: retry
//!   - process: ok
//! ";
//! let spec = loader::load(SourceFile::from_text("inline.yaml", text)).expect("a valid spec");
//! let run = spec.scenario.run(&mut Builtin::new(), RunMode::Check);
//! assert!(matches!(run.outcome, Outcome::Passed));
//! ```
//!
//! # The API
//!
//! The binary, the benchmarks and the integration tests use the library as any crate would,
//! and what they use is its API: loading a spec (`load::loader`, `load::discover`,
//! `text::source`) and running it on the built-in (`contracts::builtin::Builtin`,
//! `contracts::contract`'s `Contract`, `Scenario`, `RunMode`, `ScenarioRun`, and the opaque
//! `contracts::smoke::SmokePlan` a contract hands `smoke`;
//! `contracts::BUILT_IN`, `contracts::find`), as the example above does; a run of many
//! (`run::runner`: `RunConfig` and the types its fields name, `run`, `prepare`, `run_one`;
//! `run::events`: `Event`, `Reporter`, `SpecReport`, `Summary`); the outcomes and the
//! `Implementation` interface (`model::*`); exploring (`explore`, `explore::crashes`,
//! `generate`), authoring (`authoring::{bless, explain, lint}`, `text::yaml::edit`), an
//! external implementation (`external::launch`, `external::entry`), the dlq-consumer world the
//! external benchmark hands one (`contracts::dlq_consumer::world`), and the command line
//! (`commands::cli::Cli`, `commands::execute`).
//!
//! Everything else is `pub(crate)`: a `pub` in `src/` says "this is the API". The compiler
//! holds it (`workspace.lints.rust` in Cargo.toml, which every crate of the workspace
//! inherits): `unreachable_pub` refuses a `pub` the crate root does not reach, and
//! `unnameable_types` a type the API hands out that a user could not name. In `crates/`, a
//! `pub` is what dlqspec's own crate uses of the layer (make an item `pub(crate)` and the root
//! stops building where it used it). So `dlqspec::text` (the `dlqspec-text` crate, re-exported
//! whole) is wider than the rest of the API: it also offers what dlqspec's other layers use of
//! it (`listing`, `suggest`, `truncate`, `yaml::locate`, the fields of `SpecError` and
//! `SourceFile`). That is the price of the boundary: a crate cannot keep an item to one
//! dependant, and a facade re-exporting only some modules would still hand out the types'
//! fields.
//!
//! # The workspace
//!
//! The two layers that use nothing of dlqspec are crates of the workspace: `crates/text/`
//! (`dlqspec-text`) and `crates/amqp/` (`dlqspec-amqp`). A crate boundary is the strongest form
//! of the layer table: the compiler, not a text reader, refuses an import against it (neither
//! crate depends on dlqspec), and a crate's `pub` is its API where a module's is the whole
//! crate's. These two were the cheap ones: neither named anything of dlqspec and each has its
//! own tests. The other layers stay folders of one crate: they use each other down the table in
//! hundreds of places, and a crate per layer would trade `tests/architecture.rs` for a dozen
//! manifests without catching anything it does not.
//!
//! - The root `Cargo.toml` is the `dlqspec` package and the workspace: the crates are members
//!   and default members (so `cargo test` and `cargo clippy` cover them without
//!   `--workspace`); versions several crates use are written once in
//!   `workspace.dependencies`, the version and edition in `workspace.package` (the AMQP client
//!   tells the broker dlqspec's version), the lints in `workspace.lints`. `Cargo.lock`,
//!   `clippy.toml` and the profiles are the root's, so the build stays one. Every crate is
//!   `publish = false`: dlqspec is installed from a checkout, a git URL, the wheel or the npm
//!   package, and `cargo package` refuses path dependencies without a published version; none
//!   of those needs anything new, path dependencies being built from the same checkout.
//! - Below, the crates are named as modules (`pub use dlqspec_text as text;`): `crate::text::...`
//!   inside dlqspec and `dlqspec::text::...` outside read as if they were folders of `src/`.
//!   Inside a crate, `crate::` is the layer.
//! - `text::yaml::agreement` (the fast load and serde-saphyr's agree over a folder of specs) is
//!   behind the crate's `agreement` feature, which only dlqspec's dev-dependency turns on; it
//!   is handed the folders to read, the crate knowing no project's layout.
//! - `tests/architecture.rs` reads a crate's `src/` as its layer's folder (`lib.rs` as its
//!   `mod.rs`), and the planted violations of `tests/integration/rules.rs` go into both crates:
//!   clippy.toml's rules hold there as in `src/`.
//!
//! A clean build costs the same as the one crate did, a change to dlqspec no longer recompiles
//! the text and AMQP layers (about a tenth off the edit-build loop), and the program is 1.7 %
//! larger (docs/performance.md, "The workspace"). `cargo test -p dlqspec-text` builds and runs
//! that layer's tests without the engine.

// The unit tests beside the code set their cases up by writing files, starting programs and
// printing what they found: clippy.toml's rules hold the library, which the build without
// `cfg(test)` (the one `cargo clippy --all-targets` also checks) lints in full.
#![cfg_attr(
    test,
    allow(
        clippy::disallowed_methods,
        clippy::disallowed_macros,
        clippy::disallowed_types,
        reason = "tests: unit tests set their cases up with files, processes and prints"
    )
)]

pub mod authoring;
pub mod commands;
pub mod contracts;
pub mod explore;
pub mod external;
pub(crate) mod files;
pub mod generate;
pub mod load;
pub mod model;
pub mod report;
pub mod run;
pub(crate) mod strength;

// The bottom layers are crates of the workspace (ARCHITECTURE.md, "Crates"), named here as
// modules, so every `crate::text::...` and `dlqspec::text::...` path holds. `formats` is the
// stable formats (run record, grade record, protocol), which a reader uses without the runner.
pub(crate) use dlqspec_amqp as amqp;
pub use dlqspec_formats as formats;
pub use dlqspec_text as text;
