//! What every layer speaks of a run: the interface of an implementation under test, what it
//! wrote while it ran, the outcome of a spec and its cause, the rules specs check and the classic mistakes.

pub(crate) mod cache_dir;
pub mod captured;
pub mod cause;
pub mod implementation;
pub mod language;
pub mod mistake;
pub mod outcome;
pub mod rule;
pub mod world;
