//! From the generic [`Document`] to the typed [`Snapshot`].
//!
//! Only the known paths are walked (snapshot → segments → blocks → frames, and the
//! traces), so a cyclic or deeply shared document cannot make the walk recurse. A
//! budget counts every entry visited: shared lists read as often as they are
//! referenced, and the budget bounds that too. Frame lists are converted once per node.
//! A second budget counts the bytes the typed snapshot takes (each record plus every
//! string copied into it): a small pickle that shares one long string among millions of
//! entries is refused at that budget, with the path it had reached, instead of growing
//! to gigabytes.

use crate::ReadError;
use crate::model::{
    Action, Block, BlockState, Frame, Frames, Segment, SegmentType, Snapshot, TraceEntry,
};
use crate::value::{Document, Node, NodeId};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// Where in the document a value sits, printed like `segments[3].blocks[0].size`.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'static str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Path::Root => f.write_str("(raíz)"),
            Path::Key(Path::Root, key) => f.write_str(key),
            Path::Key(parent, key) => write!(f, "{parent}.{key}"),
            Path::Index(Path::Root, i) => write!(f, "[{i}]"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// Reads a snapshot, visiting at most `budget` entries and building at most
/// `byte_budget` bytes of typed snapshot.
pub fn read(doc: &Document, budget: usize, byte_budget: usize) -> Result<Snapshot, ReadError> {
    let mut reader = Reader {
        doc,
        budget,
        cap: budget,
        bytes_left: byte_budget,
        byte_cap: byte_budget,
        frames: HashMap::new(),
        lists: HashSet::new(),
        texts: HashMap::new(),
    };
    reader.snapshot()
}

struct Reader<'d> {
    doc: &'d Document,
    budget: usize,
    cap: usize,
    bytes_left: usize,
    byte_cap: usize,
    /// Frame lists already converted, by node (pickle memo sharing).
    frames: HashMap<NodeId, Frames>,
    /// Every distinct frame list, so equal lists from different nodes are one (JSON
    /// writes each traceback out in full).
    lists: HashSet<Frames>,
    /// Frame texts, by node: the JSON decoder gives equal strings one node.
    texts: HashMap<NodeId, Arc<str>>,
}

type Fields<'d> = Vec<(&'d str, NodeId)>;

impl<'d> Reader<'d> {
    fn charge(&mut self, n: usize) -> Result<(), ReadError> {
        self.budget = self
            .budget
            .checked_sub(n)
            .ok_or(ReadError::Budget { cap: self.cap })?;
        Ok(())
    }

    /// Counts `n` bytes of typed snapshot about to be built at `path`.
    fn charge_bytes(&mut self, n: usize, path: Path) -> Result<(), ReadError> {
        self.bytes_left = self
            .bytes_left
            .checked_sub(n)
            .ok_or_else(|| ReadError::Bytes {
                cap: self.byte_cap,
                path: path.to_string(),
            })?;
        Ok(())
    }

    fn type_error(&self, id: NodeId, path: Path, expected: &'static str) -> ReadError {
        ReadError::Type {
            path: path.to_string(),
            expected,
            found: self.doc.get(id).kind(),
        }
    }

    /// A dict's string-keyed entries (other keys are ignored).
    fn dict(&mut self, id: NodeId, path: Path) -> Result<Fields<'d>, ReadError> {
        let doc = self.doc;
        let Node::Dict(pairs) = doc.get(id) else {
            return Err(self.type_error(id, path, "un diccionario"));
        };
        self.charge(pairs.len() + 1)?;
        Ok(pairs
            .iter()
            .filter_map(|&(k, v)| match doc.get(k) {
                Node::Str(key) => Some((key.as_str(), v)),
                _ => None,
            })
            .collect())
    }

    /// A list's (or tuple's) items.
    fn list(&mut self, id: NodeId, path: Path) -> Result<&'d [NodeId], ReadError> {
        let doc = self.doc;
        match doc.get(id) {
            Node::List(items) | Node::Tuple(items) => {
                self.charge(items.len() + 1)?;
                Ok(items)
            }
            _ => Err(self.type_error(id, path, "una lista")),
        }
    }

    fn is_none(&self, id: Option<NodeId>) -> bool {
        id.is_none_or(|id| matches!(self.doc.get(id), Node::None))
    }

    fn int(&self, id: NodeId, path: Path) -> Result<i128, ReadError> {
        match self.doc.get(id) {
            Node::Int(v) => Ok(*v),
            Node::BigInt => Err(ReadError::Range {
                path: path.to_string(),
                expected: "un entero de 64 bits",
            }),
            _ => Err(self.type_error(id, path, "un entero")),
        }
    }

    fn u64(&self, id: Option<NodeId>, path: Path) -> Result<Option<u64>, ReadError> {
        if self.is_none(id) {
            return Ok(None);
        }
        let Some(id) = id else { return Ok(None) };
        let v = self.int(id, path)?;
        u64::try_from(v).map(Some).map_err(|_| ReadError::Range {
            path: path.to_string(),
            expected: "un entero no negativo de 64 bits",
        })
    }

    fn i64(&self, id: Option<NodeId>, path: Path) -> Result<Option<i64>, ReadError> {
        if self.is_none(id) {
            return Ok(None);
        }
        let Some(id) = id else { return Ok(None) };
        let v = self.int(id, path)?;
        i64::try_from(v).map(Some).map_err(|_| ReadError::Range {
            path: path.to_string(),
            expected: "un entero de 64 bits",
        })
    }

    fn bool(&self, id: Option<NodeId>, path: Path) -> Result<Option<bool>, ReadError> {
        match id.map(|id| (id, self.doc.get(id))) {
            None | Some((_, Node::None)) => Ok(None),
            Some((_, Node::Bool(b))) => Ok(Some(*b)),
            Some((id, _)) => Err(self.type_error(id, path, "un booleano")),
        }
    }

    fn str(&self, id: Option<NodeId>, path: Path) -> Result<Option<&'d str>, ReadError> {
        let doc = self.doc;
        match id.map(|id| (id, doc.get(id))) {
            None | Some((_, Node::None)) => Ok(None),
            Some((_, Node::Str(s))) => Ok(Some(s.as_str())),
            Some((id, _)) => Err(self.type_error(id, path, "un texto")),
        }
    }

    fn required(
        &self,
        value: Option<u64>,
        parent: Path,
        key: &'static str,
    ) -> Result<u64, ReadError> {
        value.ok_or_else(|| ReadError::Missing {
            path: parent.to_string(),
            key,
        })
    }

    fn snapshot(&mut self) -> Result<Snapshot, ReadError> {
        let root = self.doc.root();
        // `torch.cuda.memory_snapshot()` (no history) is the bare list of segments.
        if matches!(self.doc.get(root), Node::List(_)) {
            return Ok(Snapshot {
                segments: self.segments(root, Path::Root)?,
                device_traces: Vec::new(),
            });
        }
        let fields = self.dict(root, Path::Root)?;
        let mut snapshot = Snapshot::default();
        for (key, id) in fields {
            match key {
                "segments" => {
                    snapshot.segments = self.segments(id, Path::Key(&Path::Root, "segments"))?;
                }
                "device_traces" => {
                    let path = Path::Key(&Path::Root, "device_traces");
                    snapshot.device_traces = self.traces(id, path)?;
                }
                _ => {}
            }
        }
        Ok(snapshot)
    }

    fn segments(&mut self, id: NodeId, path: Path) -> Result<Vec<Segment>, ReadError> {
        let items = self.list(id, path)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, &item) in items.iter().enumerate() {
            out.push(self.segment(item, Path::Index(&path, i))?);
        }
        Ok(out)
    }

    fn segment(&mut self, id: NodeId, path: Path) -> Result<Segment, ReadError> {
        self.charge_bytes(size_of::<Segment>(), path)?;
        let fields = self.dict(id, path)?;
        let get = |name: &str| fields.iter().rev().find(|(k, _)| *k == name).map(|f| f.1);
        let key = |k: &'static str| Path::Key(&path, k);
        let address = self.u64(get("address"), key("address"))?.unwrap_or(0);
        let segment_type = match self.str(get("segment_type"), key("segment_type"))? {
            Some("small") => Some(SegmentType::Small),
            Some("large") => Some(SegmentType::Large),
            _ => None,
        };
        let segment_pool_id = match get("segment_pool_id").filter(|&id| !self.is_none(Some(id))) {
            None => None,
            Some(pool) => {
                let pool_path = key("segment_pool_id");
                let items = self.list(pool, pool_path)?;
                match items {
                    [a, b] => Some((
                        self.i64(Some(*a), Path::Index(&pool_path, 0))?.unwrap_or(0),
                        self.i64(Some(*b), Path::Index(&pool_path, 1))?.unwrap_or(0),
                    )),
                    _ => None,
                }
            }
        };
        let frames = self.frames(get("frames"), key("frames"))?;
        let blocks = match get("blocks").filter(|&id| !self.is_none(Some(id))) {
            None => Vec::new(),
            Some(list) => self.blocks(list, key("blocks"), address)?,
        };
        let total_size = match self.u64(get("total_size"), key("total_size"))? {
            Some(size) => size,
            None => blocks
                .iter()
                .fold(0u64, |acc, b| acc.saturating_add(b.size)),
        };
        Ok(Segment {
            device: self.i64(get("device"), key("device"))?,
            address,
            total_size,
            allocated_size: self.u64(get("allocated_size"), key("allocated_size"))?,
            active_size: self.u64(get("active_size"), key("active_size"))?,
            requested_size: self.u64(get("requested_size"), key("requested_size"))?,
            stream: self.u64(get("stream"), key("stream"))?,
            segment_type,
            segment_pool_id,
            is_expandable: self.bool(get("is_expandable"), key("is_expandable"))?,
            frames,
            blocks,
        })
    }

    fn blocks(&mut self, id: NodeId, path: Path, start: u64) -> Result<Vec<Block>, ReadError> {
        let items = self.list(id, path)?;
        let mut out = Vec::with_capacity(items.len());
        let mut next = start;
        for (i, &item) in items.iter().enumerate() {
            let path = Path::Index(&path, i);
            let fields = self.dict(item, path)?;
            let get = |name: &str| fields.iter().rev().find(|(k, _)| *k == name).map(|f| f.1);
            let key = |k: &'static str| Path::Key(&path, k);
            let size = self.u64(get("size"), key("size"))?;
            let size = self.required(size, path, "size")?;
            // Before PyTorch 2.0 blocks had no address: they tile the segment in order.
            let address = self.u64(get("address"), key("address"))?.unwrap_or(next);
            next = address.saturating_add(size);
            let state = match self.str(get("state"), key("state"))? {
                Some(name) => BlockState::from_name(name),
                None => BlockState::Other(String::new()),
            };
            let text = match &state {
                BlockState::Other(name) => name.len(),
                _ => 0,
            };
            self.charge_bytes(size_of::<Block>() + text, path)?;
            let mut requested_size = self.u64(get("requested_size"), key("requested_size"))?;
            let mut frames = self.frames(get("frames"), key("frames"))?;
            if get("frames").is_none() {
                // PyTorch ≤ 2.0 kept them in `history[0]` (`frames`, `real_size`).
                if let Some((f, real)) = self.legacy_history(get("history"), key("history"))? {
                    frames = f;
                    requested_size = requested_size.or(real);
                }
            }
            out.push(Block {
                address,
                size,
                requested_size,
                state,
                frames,
            });
        }
        Ok(out)
    }

    /// `history[0]`'s frames and `real_size`, if the block has a history.
    fn legacy_history(
        &mut self,
        id: Option<NodeId>,
        path: Path,
    ) -> Result<Option<(Frames, Option<u64>)>, ReadError> {
        let Some(id) = id.filter(|&id| !self.is_none(Some(id))) else {
            return Ok(None);
        };
        let Some(&first) = self.list(id, path)?.first() else {
            return Ok(None);
        };
        let path = Path::Index(&path, 0);
        let fields = self.dict(first, path)?;
        let get = |name: &str| fields.iter().rev().find(|(k, _)| *k == name).map(|f| f.1);
        let frames = self.frames(get("frames"), Path::Key(&path, "frames"))?;
        let real = self.u64(get("real_size"), Path::Key(&path, "real_size"))?;
        Ok(Some((frames, real)))
    }

    fn traces(&mut self, id: NodeId, path: Path) -> Result<Vec<Vec<TraceEntry>>, ReadError> {
        let devices = self.list(id, path)?;
        let mut out = Vec::with_capacity(devices.len());
        for (d, &device) in devices.iter().enumerate() {
            let path = Path::Index(&path, d);
            let entries = self.list(device, path)?;
            let mut trace = Vec::with_capacity(entries.len());
            for (i, &entry) in entries.iter().enumerate() {
                trace.push(self.entry(entry, Path::Index(&path, i))?);
            }
            out.push(trace);
        }
        Ok(out)
    }

    fn entry(&mut self, id: NodeId, path: Path) -> Result<TraceEntry, ReadError> {
        let fields = self.dict(id, path)?;
        let get = |name: &str| fields.iter().rev().find(|(k, _)| *k == name).map(|f| f.1);
        let key = |k: &'static str| Path::Key(&path, k);
        let action = self
            .str(get("action"), key("action"))?
            .ok_or_else(|| ReadError::Missing {
                path: path.to_string(),
                key: "action",
            })?;
        // Counted per entry: this is where one shared string multiplies.
        let action = Action::from_name(action);
        let copied = match &action {
            Action::Other(name) => name.len(),
            _ => 0,
        };
        self.charge_bytes(size_of::<TraceEntry>() + copied, path)?;
        Ok(TraceEntry {
            action,
            addr: self.u64(get("addr"), key("addr"))?,
            size: self.u64(get("size"), key("size"))?,
            stream: self.u64(get("stream"), key("stream"))?,
            frames: self.frames(get("frames"), key("frames"))?,
            time_us: self.i64(get("time_us"), key("time_us"))?,
            device_free: self.u64(get("device_free"), key("device_free"))?,
        })
    }

    fn frames(&mut self, id: Option<NodeId>, path: Path) -> Result<Frames, ReadError> {
        let Some(id) = id.filter(|&id| !self.is_none(Some(id))) else {
            return Ok(Arc::from(Vec::new()));
        };
        if let Some(frames) = self.frames.get(&id) {
            let frames = frames.clone();
            self.charge(1)?;
            return Ok(frames);
        }
        let items = self.list(id, path)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, &item) in items.iter().enumerate() {
            let path = Path::Index(&path, i);
            let fields = self.dict(item, path)?;
            let get = |name: &str| fields.iter().rev().find(|(k, _)| *k == name).map(|f| f.1);
            let key = |k: &'static str| Path::Key(&path, k);
            out.push(Frame {
                filename: self.text(get("filename"), key("filename"))?,
                line: self.i64(get("line"), key("line"))?,
                name: self.text(get("name"), key("name"))?,
            });
        }
        // Only a list not seen before costs memory (its texts were counted by `text`).
        let frames = match self.lists.get(out.as_slice()) {
            Some(same) => same.clone(),
            None => {
                self.charge_bytes(size_of::<Frame>() * out.len(), path)?;
                let frames: Frames = Arc::from(out);
                self.lists.insert(frames.clone());
                frames
            }
        };
        self.frames.insert(id, frames.clone());
        Ok(frames)
    }

    /// A frame's text, shared with every other use of the same node ("" when absent);
    /// its bytes are counted the first time.
    fn text(&mut self, id: Option<NodeId>, path: Path) -> Result<Arc<str>, ReadError> {
        let Some(node) = id else {
            return Ok(Arc::from(""));
        };
        if let Some(text) = self.texts.get(&node) {
            return Ok(text.clone());
        }
        let text: Arc<str> = Arc::from(self.str(Some(node), path)?.unwrap_or(""));
        self.charge_bytes(text.len(), path)?;
        self.texts.insert(node, text.clone());
        Ok(text)
    }
}
