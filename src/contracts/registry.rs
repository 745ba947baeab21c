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

#[cfg(test)]
mod tests {
    use super::CONTRACTS;

    /// `dlqspec rules` heads each contract with its title: it names the class a solution
    /// writes and where the contract is stated, never a lesson's internal number.
    #[test]
    fn a_contracts_title_names_its_class_and_where_it_is_stated() {
        for contract in CONTRACTS {
            let title = contract.title();
            assert!(
                title.contains(&format!("the class {}", contract.subject())),
                "{title}"
            );
            assert!(title.contains("docs/contracts.md"), "{title}");
            assert!(!title.contains("lesson 0"), "{title}");
        }
    }
}
