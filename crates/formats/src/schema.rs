//! The JSON Schemas (draft-07) of the formats, as the files `crates/formats/schema/` holds:
//! for a reader in another language, the definition of what each line or file may hold.

/// Every line of a run's JSON-lines report: a [`crate::record::RunEvent`].
pub const RUN_RECORD: &str = include_str!("../schema/run-record.schema.json");

/// Every message dlqspec writes to an implementation: a [`crate::protocol::Outgoing`].
pub const REQUEST: &str = include_str!("../schema/request.schema.json");

/// Every message an implementation writes to dlqspec: a [`crate::protocol::Incoming`].
pub const REPLY: &str = include_str!("../schema/reply.schema.json");

/// The `summary.json` a `dlqspec grade --output DIR` leaves: a [`crate::grade::SummaryFile`].
pub const GRADE_SUMMARY: &str = include_str!("../schema/grade-summary.schema.json");
