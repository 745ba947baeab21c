//! A contract's explore side: random cases, their smaller variants and crash schedules.
//!
//! A contract generates random cases from its vocabulary (the `Explorer` trait) and offers
//! their smaller variants and crash schedules; the random numbers are `rng.rs`, and the one
//! writer of a case's spec text `writer.rs`. Driving the search, blessing and judging cases is
//! `explore`, a layer above, so a contract never depends on how it is explored. It may use
//! `model/` and below.

pub mod case;
pub mod crashes;
pub mod rng;
pub(crate) mod variants;
pub(crate) mod writer;

use crate::text::source::SourceFile;
use case::Case;
use rng::Rng;

/// A contract's side of exploring: its scenario generator and its crash schedules.
pub trait Explorer: Sync {
    /// A random scenario of the contract, drawn from `rng` alone. It must make a spec the
    /// built-in implementation passes once blessed (an invalid case is counted and skipped,
    /// but it is a bug of the generator).
    fn generate(&self, rng: &mut Rng) -> Box<dyn Case>;

    /// The crash schedules of the scenario in `file` (a spec of this contract), or why this
    /// contract has none.
    fn crash_schedules(&self, file: &SourceFile) -> Result<Box<dyn crashes::Schedules>, String>;
}
