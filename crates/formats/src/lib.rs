//! dlqspec's stable formats, usable without the runner, with their JSON Schemas.
//!
//! The run record (the events of `dlqspec run --format json`), the grade record
//! (`summary.json`) and the messages of the implementation protocol.
//!
//! Each format is versioned ([`record::FORMAT_VERSION`], [`grade::SUMMARY_VERSION`],
//! [`protocol::PROTOCOL_VERSION`]): within a version, fields may be added, never renamed,
//! removed or given another meaning, and a reader ignores fields it does not know. dlqspec
//! writes and reads these through the types here, so what this crate defines is what dlqspec
//! does; [`schema`] holds the same formats as JSON Schema (draft-07), for readers in other
//! languages, and the crate's tests hold the two equal.
//!
//! ```
//! use dlqspec_formats::record::{self, RunEvent};
//!
//! let report = r#"{"event":"run_finished","passed":3,"mismatched":1,"errored":0,"spec_errors":0,"skipped":0,"expected_failures":0,"stale":0,"failed":1,"total":4,"duration_ms":12.5,"exit_code":1}"#;
//! let finished = record::read_events(report).find_map(|event| match event {
//!     RunEvent::RunFinished(finished) => Some(finished),
//!     _ => None,
//! });
//! assert_eq!(finished.map(|f| f.failed), Some(1));
//! ```

pub mod captured;
pub mod grade;
mod kinds;
pub mod protocol;
pub mod record;
pub mod schema;
