//! What every layer speaks of a run: implementations, outcomes, causes, rules and mistakes.
//!
//! The interface of an implementation under test, what it wrote while it ran, the outcome of a
//! spec and its cause, the rules specs check and the classic mistakes.
//!
//! The `Implementation` interface (`implementation.rs`), the languages of the shims
//! (`language.rs`), captured output (`captured.rs`), `Outcome` (`outcome.rs`: passed, mismatch,
//! errored, spec error, skipped, not attempted, expected failure, stale, divergence, world
//! fault), a failure's cause (`cause.rs`), rules, classic mistakes, and the world a run acts on
//! (`world.rs`, `--world`). It may use only the two crates below it, `text` and `amqp`.

pub(crate) mod cache_dir;
pub mod captured;
pub mod cause;
pub mod implementation;
pub mod language;
pub mod mistake;
pub mod outcome;
pub mod rule;
pub mod world;
