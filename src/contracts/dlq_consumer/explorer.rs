//! The dlq-consumer contract's explore side, behind `Explorer`: cases generated (`explore.rs`)
//! and a spec's crash schedules (`crashes.rs`).

use crate::generate::Explorer;
use crate::generate::case::Case;
use crate::generate::crashes::Schedules;
use crate::generate::rng::Rng;
use crate::text::source::SourceFile;

/// What `dlqspec explore` asks of the dlq-consumer contract.
pub(crate) struct DlqExplorer;

impl Explorer for DlqExplorer {
    fn generate(&self, rng: &mut Rng) -> Box<dyn Case> {
        Box::new(super::explore::generate(rng))
    }

    fn crash_schedules(&self, file: &SourceFile) -> Result<Box<dyn Schedules>, String> {
        let scenario = super::loading::load(file).map_err(|error| error.to_string())?;
        Ok(Box::new(super::crashes::DlqSchedules::new(&scenario)))
    }
}
