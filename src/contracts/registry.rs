//! The one list of contracts. Adding a contract is adding its line here.

use super::dlq_consumer::DlqConsumerContract;
use super::outcome_queue::OutcomeQueueContract;
use crate::contracts::contract::Contract;

pub static CONTRACTS: &[&dyn Contract] = &[&DlqConsumerContract, &OutcomeQueueContract];

pub fn find(name: &str) -> Option<&'static dyn Contract> {
    CONTRACTS.iter().copied().find(|c| c.name() == name)
}

pub fn names() -> Vec<&'static str> {
    CONTRACTS.iter().map(|c| c.name()).collect()
}
