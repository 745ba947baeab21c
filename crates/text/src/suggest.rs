//! Did-you-mean: the valid word nearest to a mistyped one, when one is near enough.

/// The candidate nearest to `word` by edit distance, if it is within a third of the word's
/// length (at least 1 edit, at most 3): near enough to be a typo, not a different word. A
/// candidate the word starts with (`expectations` for `expect`) is near too.
pub fn nearest<'c, I, S>(word: &str, candidates: I) -> Option<&'c str>
where
    I: IntoIterator<Item = &'c S>,
    S: AsRef<str> + ?Sized + 'c,
{
    let limit = (word.chars().count() / 3).clamp(1, 3);
    let candidates: Vec<&str> = candidates.into_iter().map(AsRef::as_ref).collect();
    let by_distance = candidates
        .iter()
        .filter(|candidate| **candidate != word)
        .map(|candidate| (strsim::levenshtein(word, candidate), *candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate);
    by_distance.or_else(|| {
        candidates
            .iter()
            .filter(|candidate| {
                **candidate != word && candidate.len() >= 4 && word.starts_with(**candidate)
            })
            .max_by_key(|candidate| candidate.len())
            .copied()
    })
}

/// What to say after an invalid word: ` (did you mean `X`?)` for a typo, else ` (the nearest
/// valid one is `X`)`, so that every invalid word gets the valid one closest to it. Empty
/// when there is no candidate.
pub fn hint<'c, I, S>(word: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'c S>,
    S: AsRef<str> + ?Sized + 'c,
{
    let candidates: Vec<&str> = candidates.into_iter().map(AsRef::as_ref).collect();
    if let Some(near) = nearest(word, &candidates) {
        return format!(" (did you mean `{near}`?)");
    }
    closest(word, &candidates).map_or_else(String::new, |c| {
        format!(" (the nearest valid one is `{c}`)")
    })
}

/// The candidate closest to `word`, however far: a typo's word first, then one it starts with
/// or that starts with it, then the fewest edits. Ties go to the candidate listed first: the
/// lists put the common words first. `None` only when there is no other candidate.
pub fn closest<'c, I, S>(word: &str, candidates: I) -> Option<&'c str>
where
    I: IntoIterator<Item = &'c S>,
    S: AsRef<str> + ?Sized + 'c,
{
    let candidates: Vec<&str> = candidates.into_iter().map(AsRef::as_ref).collect();
    let typo = nearest(word, &candidates).map(str::to_owned);
    let typo = typo.and_then(|typo| candidates.iter().copied().find(|c| *c == typo));
    typo.or_else(|| {
        candidates
            .iter()
            .filter(|candidate| **candidate != word)
            .min_by_key(|candidate| closeness(word, candidate))
            .copied()
    })
}

/// How far `word` is from `candidate`: a candidate it starts with or that starts with it
/// (`ok` for `okay`) before one a few edits away.
fn closeness(word: &str, candidate: &str) -> (bool, usize) {
    let prefix = !word.is_empty()
        && !candidate.is_empty()
        && (word.starts_with(candidate) || candidate.starts_with(word));
    (!prefix, strsim::levenshtein(word, candidate))
}

#[cfg(test)]
mod tests {
    use super::{hint, nearest};

    #[test]
    fn a_typo_finds_its_word_and_a_stranger_finds_none() {
        let words = ["process", "recover", "restart", "replay"];
        assert_eq!(nearest("proces", &words), Some("process"));
        assert_eq!(nearest("restrat", &words), Some("restart"));
        assert_eq!(nearest("banana", &words), None);
        assert_eq!(
            nearest("expectations", &["expect", "steps"]),
            Some("expect")
        );
        assert_eq!(nearest("process", &words), None);
    }

    #[test]
    fn every_invalid_word_gets_the_nearest_valid_one() {
        let outcomes = ["ok", "retry", "dead", "none", "crash", "any"];
        assert_eq!(hint("okay", &outcomes), " (the nearest valid one is `ok`)");
        assert_eq!(hint("rety", &outcomes), " (did you mean `retry`?)");
        assert_eq!(hint("x", &[] as &[&str]), "");
    }
}
