//! The generic value both input forms decode to: an arena of nodes.
//!
//! Pickles share objects through the memo (PyTorch reuses one frame list for every
//! allocation with the same traceback), and a container is memoized while still empty
//! and filled afterwards. An arena of nodes addressed by [`NodeId`] keeps both exact:
//! a memo hit is the same id, never a copy, so shared lists cost nothing and a
//! "billion laughs" pickle cannot make the decoder allocate more than its node cap.

/// Index of a node in a [`Document`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeId(pub(crate) u32);

/// One decoded value. Containers hold ids, so a value may be shared (or even cyclic).
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    None,
    Bool(bool),
    Int(i128),
    /// An integer outside `i128`: kept as a marker, an error only where a number is needed.
    BigInt,
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<NodeId>),
    Tuple(Vec<NodeId>),
    /// Entries in insertion order; a repeated key keeps both (the last one wins on lookup).
    Dict(Vec<(NodeId, NodeId)>),
}

impl Node {
    /// The Spanish name of the value's type, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Node::None => "None",
            Node::Bool(_) => "un booleano",
            Node::Int(_) | Node::BigInt => "un entero",
            Node::Float(_) => "un número decimal",
            Node::Str(_) => "un texto",
            Node::Bytes(_) => "bytes",
            Node::List(_) => "una lista",
            Node::Tuple(_) => "una tupla",
            Node::Dict(_) => "un diccionario",
        }
    }
}

/// A decoded pickle or JSON document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    pub(crate) nodes: Vec<Node>,
    pub(crate) root: Option<NodeId>,
}

static NONE: Node = Node::None;

impl Document {
    /// The top-level value (a `None` node for an empty document).
    pub fn root(&self) -> NodeId {
        self.root.unwrap_or(NodeId(u32::MAX))
    }

    /// The node behind `id`; an id from another document reads as `None`.
    pub fn get(&self, id: NodeId) -> &Node {
        self.nodes.get(id.0 as usize).unwrap_or(&NONE)
    }

    /// How many nodes the document holds.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the document holds no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Appends a node, failing past `cap` nodes.
    pub(crate) fn push(&mut self, node: Node, cap: usize) -> Result<NodeId, usize> {
        if self.nodes.len() >= cap {
            return Err(cap);
        }
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(node);
        Ok(id)
    }

    pub(crate) fn get_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        self.nodes.get_mut(id.0 as usize)
    }
}
