//! The one list of contracts. Adding a contract is adding its line here.

use super::dlq_consumer::DlqConsumerContract;
use super::outcome_queue::OutcomeQueueContract;
use serde_json::Value;

use crate::contracts::builtin::{Builtin, Subject};
use crate::contracts::contract::Contract;
use crate::model::implementation::{ImplInfo, Reply};

pub static CONTRACTS: &[&dyn Contract] = &[&DlqConsumerContract, &OutcomeQueueContract];

pub fn find(name: &str) -> Option<&'static dyn Contract> {
    CONTRACTS.iter().copied().find(|c| c.name() == name)
}

pub(crate) fn names() -> Vec<&'static str> {
    CONTRACTS.iter().map(|c| c.name()).collect()
}

/// The reference subject of the named contract.
pub(crate) fn reference_subject(contract: &str, args: &Value) -> Result<Box<dyn Subject>, Reply> {
    match find(contract) {
        Some(contract) => contract.create_builtin(args),
        None => Err(Reply::Skipped(format!(
            "no built-in implementation of `{contract}`"
        ))),
    }
}

// The reference is made here, where the contracts are listed: `builtin.rs` knows none of them.
impl Builtin {
    /// The built-in reference implementation: each contract's own reference subject.
    pub fn new() -> Self {
        let info = ImplInfo {
            label: "builtin".into(),
            language: "rust".into(),
            is_reference: true,
        };
        Self::from_subjects(info, Box::new(reference_subject))
    }
}

impl Default for Builtin {
    fn default() -> Self {
        Self::new()
    }
}
