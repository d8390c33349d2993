//! `-o tree`: upstream clusteradm's tree layout (`<Kind>` at the root, `<name>` per object, then
//! `<Field> value` lines), drawn with the box characters its printer uses, in sorted order
//! (upstream's follows Go's map order, which changes from run to run).
use std::fmt::Write as _;

/// A node: its label and children.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Node {
    /// What the line says after the branch.
    pub label: String,
    /// The lines under it.
    pub children: Vec<Node>,
}

impl Node {
    /// `<name> value` (upstream's line for a field or an object).
    #[must_use]
    pub fn field(name: &str, value: impl std::fmt::Display) -> Self {
        Self {
            label: format!("<{name}> {value}"),
            children: Vec::new(),
        }
    }

    /// `<name> ` with `children`.
    #[must_use]
    pub fn branch(name: &str, children: Vec<Node>) -> Self {
        Self {
            label: format!("<{name}> "),
            children,
        }
    }

    /// The tree as text, one line per node.
    #[must_use]
    pub fn render(&self) -> String {
        let mut out = format!("{}\n", self.label);
        render_children(&self.children, "", &mut out);
        out
    }
}

fn render_children(children: &[Node], prefix: &str, out: &mut String) {
    for (i, child) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        let (branch, next) = if last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        let _ = writeln!(out, "{prefix}{branch}{}", child.label);
        render_children(&child.children, &format!("{prefix}{next}"), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_upstreams_branches() {
        let tree = Node::branch(
            "ManagedCluster",
            vec![
                Node::branch(
                    "c1",
                    vec![
                        Node::field("Accepted", true),
                        Node::field("Available", "True"),
                    ],
                ),
                Node::branch("c2", vec![Node::field("Accepted", false)]),
            ],
        );
        assert_eq!(
            tree.render(),
            "<ManagedCluster> \n├── <c1> \n│   ├── <Accepted> true\n│   └── <Available> True\n└── <c2> \n    └── <Accepted> false\n"
        );
    }
}
