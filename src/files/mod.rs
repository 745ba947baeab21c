//! File safety: the one place dlqspec writes files, and what it undoes when it is interrupted.
//!
//! A file is written whole or not at all, and never over a file that is not dlqspec's own.
//!
//! Atomic replacement (`atomic_file.rs`), files created only where nothing is (`new_file.rs`),
//! appending to the file the environment names (`append.rs`: GitHub's step summary), folders of
//! dlqspec's own reached through no link (`folders.rs`), and what an interrupt undoes: children
//! killed, temporary files removed (`interrupts.rs`).
//!
//! Only this layer writes files, so "never destroy or replace a file that is not ours" is kept in
//! one place. Writing is what clippy.toml refuses elsewhere: `File::create`, `fs::write`,
//! `File::options` and `OpenOptions`' writing builder (`write`, `append`, `create`, `create_new`,
//! `truncate`), renames, copies, links, removals, changes of mode, owner or length, tempfile's
//! named files and their `persist`, and the same through libc. Making a folder replaces nothing
//! and is not counted; nor is a file with no name (`tempfile::tempfile`), which nothing else can
//! reach and which is gone when closed; nor is opening a file to read it. It may use `external/`
//! and below.

pub(crate) mod append;
pub(crate) mod atomic_file;
pub(crate) mod folders;
pub(crate) mod interrupts;
pub(crate) mod new_file;
