//! A spec's YAML as a tree of positioned nodes, built straight from parser events: the fast
//! path of loading, which gives up (`None`) on anything it does not read exactly as serde-saphyr.
//!
//! Why it exists: serde-saphyr's typed load costs about 2.5 times the parser's events, and a
//! run of a corpus is mostly loading. The tree keeps only what a spec uses (plain, quoted and
//! block scalars, lists, mappings with text keys) and says `None` for everything else: a
//! syntax error, a second document, a directive, a tag, an anchor or alias, a merge key, a
//! repeated key, a limit reached. The caller then loads with serde-saphyr, which stays the one
//! judge of what is wrong and how to say it.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_saphyr::granit_parser::{Event, Options, Parser, ScalarStyle, Span};

use super::locate::Located;
use crate::source::Position;

/// One YAML value and where it starts.
#[derive(Debug)]
pub(crate) enum TreeNode<'a> {
    Scalar {
        text: Cow<'a, str>,
        /// Plain (unquoted, not a block scalar): only plain text can mean null, a number or a
        /// boolean.
        plain: bool,
        at: Position,
    },
    List {
        items: Vec<TreeNode<'a>>,
        at: Position,
    },
    Map {
        /// Keys are text, each once.
        pairs: Vec<(TreeNode<'a>, TreeNode<'a>)>,
        at: Position,
    },
}

impl TreeNode<'_> {
    pub(crate) fn at(&self) -> Position {
        match self {
            TreeNode::Scalar { at, .. } | TreeNode::List { at, .. } | TreeNode::Map { at, .. } => {
                *at
            }
        }
    }
}

impl Located for TreeNode<'_> {
    fn position(&self) -> Position {
        self.at()
    }

    fn key_name(&self) -> Option<&str> {
        match self {
            TreeNode::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    fn entries(&self) -> Option<&[(Self, Self)]> {
        match self {
            TreeNode::Map { pairs, .. } => Some(pairs),
            _ => None,
        }
    }

    fn items(&self) -> Option<&[Self]> {
        match self {
            TreeNode::List { items, .. } => Some(items),
            _ => None,
        }
    }
}

/// The limits the tree stops short of: those of the serde-saphyr load it stands in for, with
/// a margin, so that a spec near a limit is judged (and told) by serde-saphyr alone.
pub(crate) struct TreeLimits {
    pub(crate) max_nodes: usize,
    pub(crate) max_events: usize,
    pub(crate) max_depth: usize,
    pub(crate) max_scalar_bytes: usize,
}

/// Mappings with more keys than this check for repeats through a set, not by scanning.
const SCANNED_KEYS: usize = 16;

/// Builds the tree of a one-document text, or `None` when serde-saphyr should read it.
pub(crate) fn build<'a>(
    text: &'a str,
    options: Options,
    limits: &TreeLimits,
) -> Option<TreeNode<'a>> {
    let mut builder = TreeBuilder {
        open: Vec::new(),
        root: None,
        nodes: 0,
        scalar_bytes: 0,
    };
    let mut documents = 0;
    for (events, event) in Parser::new_from_str_with_options(text, options).enumerate() {
        if events >= limits.max_events {
            return None;
        }
        let (event, span) = event.ok()?;
        match event {
            Event::StreamStart | Event::DocumentEnd => {}
            Event::StreamEnd => break,
            Event::DocumentStart(_, version) => {
                documents += 1;
                if documents > 1 || version.is_some() {
                    return None;
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                builder.scalar_bytes += text.len();
                if builder.scalar_bytes > limits.max_scalar_bytes {
                    return None;
                }
                let node = TreeNode::Scalar {
                    plain: style == ScalarStyle::Plain,
                    text,
                    at: position(&span),
                };
                builder.add(node, limits)?;
            }
            Event::SequenceStart(_, anchor, tag) => {
                builder.open(anchor, tag.is_some(), limits)?;
                builder.open.push(Open::List(Vec::new(), position(&span)));
            }
            Event::MappingStart(_, anchor, tag) => {
                builder.open(anchor, tag.is_some(), limits)?;
                builder
                    .open
                    .push(Open::Map(Vec::new(), None, position(&span)));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let node = match builder.open.pop()? {
                    Open::List(items, at) => TreeNode::List { items, at },
                    Open::Map(pairs, None, at) => {
                        if pairs.len() > SCANNED_KEYS && !keys_unique(&pairs) {
                            return None;
                        }
                        TreeNode::Map { pairs, at }
                    }
                    Open::Map(_, Some(_), _) => return None,
                };
                builder.add(node, limits)?;
            }
            // Aliases, anchors and anything newer are serde-saphyr's to read.
            _ => return None,
        }
    }
    if documents != 1 || !builder.open.is_empty() {
        return None;
    }
    builder.root
}

/// A list or mapping whose end has not come yet (a mapping may hold a key awaiting its value).
enum Open<'a> {
    List(Vec<TreeNode<'a>>, Position),
    Map(
        Vec<(TreeNode<'a>, TreeNode<'a>)>,
        Option<TreeNode<'a>>,
        Position,
    ),
}

struct TreeBuilder<'a> {
    open: Vec<Open<'a>>,
    root: Option<TreeNode<'a>>,
    nodes: usize,
    scalar_bytes: usize,
}

impl<'a> TreeBuilder<'a> {
    /// Checks a list or mapping about to open.
    fn open(&mut self, anchor: usize, tagged: bool, limits: &TreeLimits) -> Option<()> {
        let deep_enough = self.open.len() + 1 >= limits.max_depth;
        (anchor == 0 && !tagged && !deep_enough).then_some(())
    }

    /// Puts a finished node where it belongs: the root, a list's next item, a mapping's key or
    /// the value of its pending key.
    fn add(&mut self, node: TreeNode<'a>, limits: &TreeLimits) -> Option<()> {
        self.nodes += 1;
        if self.nodes > limits.max_nodes {
            return None;
        }
        match self.open.last_mut() {
            None if self.root.is_none() => self.root = Some(node),
            None => return None,
            Some(Open::List(items, _)) => items.push(node),
            Some(Open::Map(pairs, pending, _)) => match pending.take() {
                Some(key) => pairs.push((key, node)),
                None => {
                    let TreeNode::Scalar { text, plain, .. } = &node else {
                        return None;
                    };
                    // `<<` merges another mapping in: serde-saphyr's to read.
                    if *plain && text == "<<" {
                        return None;
                    }
                    if pairs.len() < SCANNED_KEYS
                        && pairs.iter().any(|(k, _)| k.key_name() == Some(&**text))
                    {
                        return None;
                    }
                    *pending = Some(node);
                }
            },
        }
        Some(())
    }
}

/// Whether no key of a mapping repeats (keys compared as text, whatever their quoting: a
/// stricter test than serde-saphyr's, which only sends more specs its way).
fn keys_unique(pairs: &[(TreeNode<'_>, TreeNode<'_>)]) -> bool {
    let mut seen = HashSet::with_capacity(pairs.len());
    pairs.iter().all(|(key, _)| seen.insert(key.key_name()))
}

/// Where an event starts, as serde-saphyr tells it: lines and columns from 1.
fn position(span: &Span) -> Position {
    Position::new(span.start.line(), span.start.col() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: TreeLimits = TreeLimits {
        max_nodes: 1000,
        max_events: 2000,
        max_depth: 8,
        max_scalar_bytes: 1000,
    };

    fn tree(text: &str) -> Option<TreeNode<'_>> {
        let mut options = Options::default();
        options.set_emit_comments(false);
        build(text, options, &LIMITS)
    }

    #[test]
    fn a_spec_shaped_text_becomes_a_positioned_tree() {
        let node = tree("name: x\nsteps:\n  - process: ok\n  - 'q'\n").unwrap();
        let TreeNode::Map { pairs, at } = node else {
            panic!("a mapping")
        };
        assert_eq!(at, Position::new(1, 1));
        assert_eq!(pairs.len(), 2);
        let TreeNode::List { items, at } = &pairs[1].1 else {
            panic!("a list")
        };
        assert_eq!(*at, Position::new(3, 3));
        assert!(
            matches!(&items[1], TreeNode::Scalar { text, plain: false, at } if text == "q" && *at == Position::new(4, 5))
        );
    }

    #[test]
    fn what_serde_saphyr_must_judge_is_left_to_it() {
        let many_keys: String = (0..40).map(|n| format!("k{n}: 1\n")).collect();
        let hands_over = [
            "a: [1\n".to_owned(),
            "a: 1\na: 2\n".to_owned(),
            format!("{many_keys}k7: 2\n"),
            "a: 1\n---\nb: 2\n".to_owned(),
            "%YAML 1.2\n---\na: 1\n".to_owned(),
            "a: !!str 1\n".to_owned(),
            "a: &x 1\nb: *x\n".to_owned(),
            "base: {a: 1}\nother:\n  <<: {b: 2}\n".to_owned(),
            "{[a]: 1}\n".to_owned(),
            "a: [[[[[[[[[1]]]]]]]]]\n".to_owned(),
            format!("a: {}\n", "z".repeat(2000)),
            "".to_owned(),
        ];
        for text in &hands_over {
            assert!(tree(text).is_none(), "{text:?}");
        }
        assert!(tree(&many_keys).is_some());
        assert!(tree("a: 1\n# a comment\nb: [x, 'y']\n").is_some());
    }
}
