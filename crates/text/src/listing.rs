//! Long lists told to a person by their ends and a count, so a timeline line of a big
//! scenario stays short and takes time linear in what it shows; and a place in a series as
//! an ordinal (`2nd`).

/// The most items a line lists; a longer list is told by its ends and a count.
pub const MAX_LISTED: usize = 20;

/// `items` as `name` writes them, or, past `MAX_LISTED`, the first and last few around
/// `... (N more)`: what a person reads, in time and space linear in a big scenario.
///
/// A view is never longer than `MAX_LISTED`, so showing a view again leaves it as it is: a
/// world may keep views of long lists and tell them later without losing the count.
pub fn shown<T>(items: &[T], name: impl Fn(&T) -> String) -> Vec<String> {
    let ends = (MAX_LISTED - 1) / 2;
    if items.len() <= MAX_LISTED {
        return items.iter().map(name).collect();
    }
    let mut view: Vec<String> = items[..ends].iter().map(&name).collect();
    view.push(format!("... ({} more)", items.len() - 2 * ends));
    view.extend(items[items.len() - ends..].iter().map(&name));
    view
}

/// `1 submission`, `3 submissions`: a count and its noun, the noun in the plural (`noun`
/// with an `s`) for any count but one.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `1st`, `2nd`, `3rd`, `11th`: a place in a series as a person reads it.
pub fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// `a, b`, or `nothing`, long lists by their ends.
pub fn list(ids: &[String]) -> String {
    if ids.is_empty() {
        "nothing".to_owned()
    } else {
        shown(ids, String::clone).join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_read_naturally() {
        let shown: Vec<_> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal).to_vec();
        assert_eq!(
            shown,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
            ]
        );
    }

    #[test]
    fn a_count_of_one_takes_the_singular() {
        assert_eq!(count(1, "submission"), "1 submission");
        assert_eq!(count(0, "submission"), "0 submissions");
        assert_eq!(count(2, "spec"), "2 specs");
    }

    #[test]
    fn a_long_list_is_told_by_its_ends_and_a_count() {
        let ids: Vec<String> = (1..=25).map(|n| format!("m{n}")).collect();
        assert_eq!(
            list(&ids),
            "m1, m2, m3, m4, m5, m6, m7, m8, m9, ... (7 more), m17, m18, m19, m20, m21, m22, m23, m24, m25"
        );
        assert_eq!(list(&ids[..20]), ids[..20].join(", "));
        // The world keeps views; telling one again keeps its count.
        assert_eq!(list(&shown(&ids, String::clone)), list(&ids));
    }

    #[test]
    fn a_view_is_short_and_showing_it_again_changes_nothing() {
        let items: Vec<u32> = (1..=100).collect();
        let view = shown(&items, u32::to_string);
        assert_eq!(view.len(), MAX_LISTED - 1);
        assert_eq!(view[9], "... (82 more)");
        assert_eq!(shown(&view, String::clone), view);
        assert_eq!(shown(&items[..20], u32::to_string).len(), 20);
    }
}
