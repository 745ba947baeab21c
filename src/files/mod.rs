//! File safety: the one place dlqspec writes files (whole or not at all, never over a file that
//! is not its own), and what it undoes when it is interrupted.

pub mod atomic_file;
pub mod folders;
pub mod interrupts;
pub mod new_file;
