//! File safety: the one place dlqspec writes files (whole or not at all, never over a file that
//! is not its own), and what it undoes when it is interrupted.

pub(crate) mod append;
pub(crate) mod atomic_file;
pub(crate) mod folders;
pub(crate) mod interrupts;
pub(crate) mod new_file;
