//! The smaller variants a contract's `Case::shrinks` offers, built the same way by every
//! contract, and the placeholder spec text a case makes while it is explored.

use super::case::{self, Case, Header};

/// `steps` with chunks left out, from half of them down to one at a time, as delta debugging
/// cuts: the step lists every contract's shrinking tries first.
pub(crate) fn chunks_removed<T: Clone>(steps: &[T]) -> Vec<Vec<T>> {
    let mut smaller = Vec::new();
    let n = steps.len();
    let mut size = n / 2;
    while size >= 1 {
        let mut start = 0;
        while start + size <= n {
            let mut fewer = steps.to_vec();
            fewer.drain(start..start + size);
            smaller.push(fewer);
            start += size;
        }
        size /= 2;
    }
    smaller
}

/// `steps` with the step at `index` replaced by each of `variants`.
pub(crate) fn with_step_replaced<T: Clone>(
    steps: &[T],
    index: usize,
    variants: Vec<T>,
) -> Vec<Vec<T>> {
    variants
        .into_iter()
        .map(|variant| {
            let mut changed = steps.to_vec();
            changed[index] = variant;
            changed
        })
        .collect()
}

/// The variants but those equal to `case`, boxed as cases: what `Case::shrinks` returns.
pub(crate) fn boxed_except<C: Case + PartialEq + 'static>(
    variants: Vec<C>,
    case: &C,
) -> Vec<Box<dyn Case>> {
    variants
        .into_iter()
        .filter(|variant| variant != case)
        .map(|variant| Box::new(variant) as Box<dyn Case>)
        .collect()
}

/// The spec text of `case` while exploring: a placeholder header, which blessing leaves alone.
pub(crate) fn draft(contract: &str, case: &dyn Case) -> String {
    let header = Header {
        contract,
        name: "explored case",
        description: "",
        rules: &[],
        schema_line: false,
    };
    case::spec_text(&header, &case.body())
}
