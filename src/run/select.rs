//! Choosing which specs a run executes: `--filter` (name, path glob, rule id) and `--partition`.
//!
//! Both are pure functions of the spec list, so N CI jobs given the same paths and filters
//! and partitions 1/N..N/N together run every spec exactly once.

use std::str::FromStr;

use globset::{GlobBuilder, GlobMatcher};

use crate::contracts::contract::SpecHeader;

/// One `--filter` value. A spec is selected when any filter matches it.
#[derive(Debug, Clone)]
pub struct SpecFilter {
    text: String,
    /// Set when the text has glob characters: then it is matched against the spec path only.
    glob: Option<GlobMatcher>,
}

impl std::fmt::Display for SpecFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl SpecFilter {
    /// Plain text matches a name or path containing it, or a rule id equal to it or starting
    /// with it (`dlq-consumer/` selects every rule of that contract). Text with `*`, `?`, `[`
    /// or `{` is a path glob, matched against the whole path or any tail of it that starts at
    /// a folder boundary; `*` stays within one folder, `**` crosses folders.
    pub(crate) fn new(text: &str) -> Result<SpecFilter, String> {
        if text.is_empty() {
            return Err("a filter cannot be empty".into());
        }
        let glob = if text.contains(['*', '?', '[', '{']) {
            let anchored = if text.starts_with('/') || text.starts_with("**") {
                text.to_owned()
            } else {
                format!("**/{text}")
            };
            let glob = GlobBuilder::new(&anchored)
                .literal_separator(true)
                .build()
                .map_err(|error| format!("invalid path glob `{text}`: {}", error.kind()))?;
            Some(glob.compile_matcher())
        } else {
            None
        };
        Ok(SpecFilter {
            text: text.to_owned(),
            glob,
        })
    }

    /// `header` is `None` for a spec that could not be loaded: only its path can match.
    pub(crate) fn matches(&self, path: &str, header: Option<&SpecHeader>) -> bool {
        if let Some(glob) = &self.glob {
            return glob.is_match(path);
        }
        let text = self.text.as_str();
        path.contains(text)
            || header.is_some_and(|header| {
                header.name.contains(text) || header.rule_ids().any(|rule| rule.starts_with(text))
            })
    }
}

/// How `--partition` splits the selected specs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartitionStrategy {
    /// The i-th spec in path order goes to partition (i mod N) + 1: even sizes.
    Count,
    /// A spec goes to partition (hash(path) mod N) + 1: adding a spec moves no other spec.
    Hash,
}

/// `--partition K/N`: run only the K-th of N shares of the selected specs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    pub(crate) strategy: PartitionStrategy,
    /// 1-based: K in K/N.
    pub(crate) index: usize,
    /// N in K/N.
    pub(crate) count: usize,
}

impl FromStr for Partition {
    type Err = String;

    fn from_str(text: &str) -> Result<Partition, String> {
        let (strategy, share) = match text.split_once(':') {
            None => (PartitionStrategy::Count, text),
            Some(("count", share)) => (PartitionStrategy::Count, share),
            Some(("hash", share)) => (PartitionStrategy::Hash, share),
            Some((other, _)) => {
                return Err(format!(
                    "unknown partition strategy `{other}`; expected `count` or `hash`"
                ));
            }
        };
        let Some((index, count)) = share.split_once('/') else {
            return Err(format!(
                "expected K/N such as 1/3 (or count:K/N, hash:K/N); got `{text}`"
            ));
        };
        let number = |part: &str, what: &str| {
            part.trim().parse::<usize>().map_err(|_| {
                format!("{what} must be a whole number in K/N such as 1/3; got `{part}`")
            })
        };
        let index = number(index, "K")?;
        let count = number(count, "N")?;
        if count == 0 {
            return Err("N must be at least 1 in K/N such as 1/3".into());
        }
        if index == 0 || index > count {
            return Err(format!(
                "K must be between 1 and {count} in K/N; got {index}/{count}"
            ));
        }
        Ok(Partition {
            strategy,
            index,
            count,
        })
    }
}

impl Partition {
    /// Which of `paths` belong to this partition, as a mask in the given order.
    pub(crate) fn mask(&self, paths: &[&str]) -> Vec<bool> {
        let wanted = self.index - 1;
        match self.strategy {
            PartitionStrategy::Hash => paths
                .iter()
                .map(|path| fnv1a(path.as_bytes()) % self.count as u64 == wanted as u64)
                .collect(),
            PartitionStrategy::Count => {
                // By position in path order, so the order paths were given in does not matter.
                let mut order: Vec<usize> = (0..paths.len()).collect();
                order.sort_by(|&a, &b| paths[a].cmp(paths[b]).then(a.cmp(&b)));
                let mut mask = vec![false; paths.len()];
                for (rank, &index) in order.iter().enumerate() {
                    mask[index] = rank % self.count == wanted;
                }
                mask
            }
        }
    }
}

/// FNV-1a, 64 bits: a hash fixed by its definition, unlike std's, so partitions never move
/// between dlqspec builds or platforms.
fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_more(FNV1A_START, bytes)
}

/// Where FNV-1a starts, before any byte.
pub(crate) const FNV1A_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64 bits, from `hash` on over `bytes`: a hash of many pieces, fed one by one.
pub(crate) fn fnv1a_more(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::source::Position;

    fn header(name: &str, rules: &[&str]) -> SpecHeader {
        SpecHeader {
            name: name.into(),
            description: String::new(),
            rules: rules
                .iter()
                .map(|r| (r.to_string(), Position::START))
                .collect(),
            grading: Default::default(),
            allow: Vec::new(),
        }
    }

    #[test]
    fn plain_text_matches_name_path_or_rule_prefix() {
        let h = header("poison pill", &["dlq-consumer/poison"]);
        let path = "specs/dlq-consumer/a.yaml";
        assert!(SpecFilter::new("pill").unwrap().matches(path, Some(&h)));
        assert!(SpecFilter::new("a.yaml").unwrap().matches(path, Some(&h)));
        assert!(
            SpecFilter::new("dlq-consumer/poison")
                .unwrap()
                .matches("x", Some(&h))
        );
        assert!(
            SpecFilter::new("dlq-consumer/")
                .unwrap()
                .matches("x", Some(&h))
        );
        // A rule id is matched from its start, not anywhere inside it.
        assert!(
            !SpecFilter::new("poison")
                .unwrap()
                .matches("x", Some(&header("n", &["dlq-consumer/poison"])))
        );
        assert!(!SpecFilter::new("pill").unwrap().matches(path, None));
    }

    #[test]
    fn globs_match_the_path_at_folder_boundaries() {
        let path = "specs/dlq-consumer/poison-cycle.yaml";
        let h = header("poison", &[]);
        assert!(
            SpecFilter::new("poison-*.yaml")
                .unwrap()
                .matches(path, None)
        );
        assert!(
            SpecFilter::new("specs/**/poison*")
                .unwrap()
                .matches(path, None)
        );
        assert!(
            SpecFilter::new("dlq-consumer/*.yaml")
                .unwrap()
                .matches(path, None)
        );
        assert!(!SpecFilter::new("specs/*.yaml").unwrap().matches(path, None));
        assert!(!SpecFilter::new("ison-*.yaml").unwrap().matches(path, None));
        // A glob is about paths: it does not match names.
        assert!(
            !SpecFilter::new("pois*")
                .unwrap()
                .matches("specs/a.yaml", Some(&h))
        );
    }

    #[test]
    fn a_bad_glob_or_empty_filter_is_refused() {
        assert_eq!(
            SpecFilter::new("specs/[a").unwrap_err(),
            "invalid path glob `specs/[a`: unclosed character class; missing ']'"
        );
        assert_eq!(SpecFilter::new("").unwrap_err(), "a filter cannot be empty");
    }

    #[test]
    fn partitions_parse_with_or_without_a_strategy() {
        let p: Partition = "2/3".parse().unwrap();
        assert_eq!(
            (p.strategy, p.index, p.count),
            (PartitionStrategy::Count, 2, 3)
        );
        let p: Partition = "count:1/1".parse().unwrap();
        assert_eq!(
            (p.strategy, p.index, p.count),
            (PartitionStrategy::Count, 1, 1)
        );
        let p: Partition = "hash:3/4".parse().unwrap();
        assert_eq!(
            (p.strategy, p.index, p.count),
            (PartitionStrategy::Hash, 3, 4)
        );
    }

    #[test]
    fn bad_partitions_say_what_is_wrong() {
        let error = |text: &str| text.parse::<Partition>().unwrap_err();
        assert_eq!(
            error("3"),
            "expected K/N such as 1/3 (or count:K/N, hash:K/N); got `3`"
        );
        assert_eq!(
            error("a/3"),
            "K must be a whole number in K/N such as 1/3; got `a`"
        );
        assert_eq!(
            error("1/-2"),
            "N must be a whole number in K/N such as 1/3; got `-2`"
        );
        assert_eq!(error("1/0"), "N must be at least 1 in K/N such as 1/3");
        assert_eq!(error("0/3"), "K must be between 1 and 3 in K/N; got 0/3");
        assert_eq!(error("4/3"), "K must be between 1 and 3 in K/N; got 4/3");
        assert_eq!(
            error("slice:1/3"),
            "unknown partition strategy `slice`; expected `count` or `hash`"
        );
    }

    #[test]
    fn every_spec_lands_in_exactly_one_partition() {
        let paths: Vec<String> = (0..23)
            .map(|i| format!("specs/s{:02}.yaml", 22 - i))
            .collect();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        for strategy in ["count", "hash"] {
            let mut hits = vec![0; paths.len()];
            let mut sizes = Vec::new();
            for k in 1..=4 {
                let mask = format!("{strategy}:{k}/4")
                    .parse::<Partition>()
                    .unwrap()
                    .mask(&paths);
                sizes.push(mask.iter().filter(|m| **m).count());
                for (i, &m) in mask.iter().enumerate() {
                    hits[i] += usize::from(m);
                }
            }
            assert!(hits.iter().all(|&h| h == 1), "{strategy}: {hits:?}");
            if strategy == "count" {
                assert_eq!(sizes, [6, 6, 6, 5]);
            }
        }
    }

    #[test]
    fn count_partitions_follow_path_order_not_argument_order() {
        let p: Partition = "1/2".parse().unwrap();
        assert_eq!(p.mask(&["b", "a", "c"]), [false, true, true]);
    }

    #[test]
    fn fnv1a_matches_its_reference_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
