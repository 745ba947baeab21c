//! The contracts dlqspec checks, one folder each, listed in `registry`.

pub mod builtin;
pub mod contract;
pub mod dlq_consumer;
pub mod exercise;
pub(crate) mod recorder;
pub(crate) mod registry;
pub(crate) mod smell;
pub(crate) mod timeline;

pub use registry::{
    BUILT_IN, EXERCISE_FILE, Launcher, all, exercise_folder_of, find, register_exercise,
};
