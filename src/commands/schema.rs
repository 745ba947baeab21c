//! `dlqspec schema`: print the JSON Schema of spec files.

use std::io::Write;

use crate::authoring::schema;
use crate::run::exit;

#[expect(
    clippy::disallowed_methods,
    reason = "prints: the schema goes to stdout"
)]
pub(crate) fn schema() -> i32 {
    let mut out = std::io::stdout().lock();
    // A closed stdout (e.g. piped into `head`) must not turn into a panic.
    let _ = out.write_all(schema::spec_schema_text().as_bytes());
    let _ = out.flush();
    exit::PASSED
}
