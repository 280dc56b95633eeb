//! A minimal reader for the data-only subset of Python's pickle format that
//! `pickle.dump` writes for a CUDA memory snapshot (protocols 2 to 5): dicts,
//! lists, tuples, sets, strings, bytes, ints, floats, `None` and booleans,
//! with the memo. Opcodes that would import or call code (`GLOBAL`,
//! `STACK_GLOBAL`, `REDUCE`, `BUILD`, `NEWOBJ`, `INST`, `OBJ`, persistent
//! ids, extension codes, out-of-band buffers) are refused, so reading an
//! untrusted file can never run anything.
//!
//! Opcode values and argument layouts are those of CPython's
//! `Lib/pickletools.py` (the opcode table) and `Lib/pickle.py` (`_Unpickler`).
//!
//! Values live in one arena ([`Pickle::nodes`]); containers hold indices into
//! it, and a memo lookup (`BINGET`) pushes the remembered index again rather
//! than a copy, so a snapshot whose stack frames repeat the same strings
//! thousands of times costs one node per distinct value, as in Python.

use super::MeasuredError;

/// An index into [`Pickle::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeId(u32);

/// One unpickled value.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// `None`.
    None,
    /// `True` or `False`.
    Bool(bool),
    /// An integer (pickle's `LONG1` carries at most 16 bytes here).
    Int(i128),
    /// A float.
    Float(f64),
    /// A `str`.
    Str(String),
    /// `bytes` or `bytearray` (their length; the contents are never needed).
    Bytes(usize),
    /// A list, tuple, set or frozenset, in order.
    List(Vec<NodeId>),
    /// A dict's items in insertion order.
    Dict(Vec<(NodeId, NodeId)>),
}

/// A parsed pickle: the arena and the top-level value.
#[derive(Clone, Debug)]
pub struct Pickle {
    nodes: Vec<Node>,
    /// The value `pickle.load` would return.
    pub root: NodeId,
}

/// The deepest nesting of `MARK`s accepted: a snapshot nests about six deep.
pub const MAX_MARK_DEPTH: usize = 256;

/// How many of a dict's items [`Pickle::get`] looks at.
pub const MAX_DICT_SCAN: usize = 64;

impl Pickle {
    /// The value at `id` (`Node::None` for an id from another pickle).
    pub fn node(&self, id: NodeId) -> &Node {
        self.nodes.get(id.0 as usize).unwrap_or(&Node::None)
    }

    /// The value of `key` in the dict at `id`, where the key is a string,
    /// looked for among the dict's last [`MAX_DICT_SCAN`] items (the last
    /// one set wins, as in Python): a snapshot's dicts have a dozen keys,
    /// and a forged dict of millions, shared by every entry of a list,
    /// cannot make the lookups quadratic.
    pub fn get(&self, id: NodeId, key: &str) -> Option<NodeId> {
        match self.node(id) {
            Node::Dict(items) => items
                .iter()
                .rev()
                .take(MAX_DICT_SCAN)
                .find(|(k, _)| matches!(self.node(*k), Node::Str(s) if s == key))
                .map(|&(_, v)| v),
            _ => None,
        }
    }

    /// The elements of the list or tuple at `id` (empty for anything else).
    pub fn items(&self, id: NodeId) -> &[NodeId] {
        match self.node(id) {
            Node::List(items) => items,
            _ => &[],
        }
    }

    /// The integer at `id`, if it is one (a bool counts, as in Python).
    pub fn int(&self, id: NodeId) -> Option<i128> {
        match self.node(id) {
            Node::Int(v) => Some(*v),
            Node::Bool(b) => Some(i128::from(*b)),
            _ => None,
        }
    }

    /// The string at `id`, if it is one.
    pub fn str(&self, id: NodeId) -> Option<&str> {
        match self.node(id) {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// What sits on the unpickler's stack.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Value(NodeId),
    Mark,
}

/// Reads `data` as a pickle of plain data.
///
/// # Errors
/// [`MeasuredError::NotPickle`] when the data does not start as a pickle of
/// protocol 2 or later does, [`MeasuredError::Truncated`] when it ends
/// before `STOP`, [`MeasuredError::UnsupportedOpcode`] for an opcode outside
/// the data-only subset, [`MeasuredError::Malformed`] for a stack the
/// opcodes do not fit (with the byte offset).
pub fn parse(data: &[u8]) -> Result<Pickle, MeasuredError> {
    if data.first() != Some(&0x80) {
        return Err(MeasuredError::NotPickle);
    }
    Reader {
        data,
        pos: 0,
        nodes: Vec::new(),
        stack: Vec::new(),
        marks: 0,
        memo: Vec::new(),
    }
    .run()
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    nodes: Vec<Node>,
    stack: Vec<Slot>,
    marks: usize,
    memo: Vec<Option<NodeId>>,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], MeasuredError> {
        let end = self.pos.checked_add(n).ok_or(MeasuredError::Truncated)?;
        let bytes = self
            .data
            .get(self.pos..end)
            .ok_or(MeasuredError::Truncated)?;
        self.pos = end;
        Ok(bytes)
    }

    fn u8(&mut self) -> Result<u8, MeasuredError> {
        Ok(self.take(1)?.first().copied().unwrap_or(0))
    }

    fn le(&mut self, n: usize) -> Result<u64, MeasuredError> {
        let bytes = self.take(n)?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// A length prefix of `n` bytes; one past the end of the data is a truncation.
    fn len(&mut self, n: usize) -> Result<usize, MeasuredError> {
        let len = usize::try_from(self.le(n)?).map_err(|_| MeasuredError::Truncated)?;
        if len > self.data.len().saturating_sub(self.pos) {
            return Err(MeasuredError::Truncated);
        }
        Ok(len)
    }

    fn malformed(&self, at: usize, what: &'static str) -> MeasuredError {
        MeasuredError::Malformed { at, what }
    }

    fn push(&mut self, node: Node) {
        let id = NodeId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        self.nodes.push(node);
        self.stack.push(Slot::Value(id));
    }

    fn pop(&mut self, at: usize) -> Result<NodeId, MeasuredError> {
        match self.stack.pop() {
            Some(Slot::Value(id)) => Ok(id),
            Some(Slot::Mark) => Err(self.malformed(at, "a value expected, a mark found")),
            None => Err(self.malformed(at, "stack underflow")),
        }
    }

    fn top(&self, at: usize) -> Result<NodeId, MeasuredError> {
        match self.stack.last() {
            Some(Slot::Value(id)) => Ok(*id),
            _ => Err(self.malformed(at, "a value expected on the stack")),
        }
    }

    /// The values above the topmost mark, which is removed.
    fn pop_mark(&mut self, at: usize) -> Result<Vec<NodeId>, MeasuredError> {
        let Some(m) = self.stack.iter().rposition(|s| matches!(s, Slot::Mark)) else {
            return Err(self.malformed(at, "no mark on the stack"));
        };
        let items = self
            .stack
            .split_off(m)
            .into_iter()
            .filter_map(|s| match s {
                Slot::Value(id) => Some(id),
                Slot::Mark => None,
            })
            .collect();
        self.marks = self.marks.saturating_sub(1);
        Ok(items)
    }

    fn node_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        self.nodes.get_mut(id.0 as usize)
    }

    fn extend_list(
        &mut self,
        at: usize,
        target: NodeId,
        items: Vec<NodeId>,
    ) -> Result<(), MeasuredError> {
        match self.node_mut(target) {
            Some(Node::List(list)) => {
                list.extend(items);
                Ok(())
            }
            _ => Err(self.malformed(at, "APPEND to something not a list")),
        }
    }

    fn set_items(
        &mut self,
        at: usize,
        target: NodeId,
        kv: Vec<NodeId>,
    ) -> Result<(), MeasuredError> {
        if !kv.len().is_multiple_of(2) {
            return Err(self.malformed(at, "odd number of dict keys and values"));
        }
        let pairs = kv.chunks_exact(2).filter_map(|p| match p {
            [k, v] => Some((*k, *v)),
            _ => None,
        });
        match self.node_mut(target) {
            Some(Node::Dict(items)) => {
                items.extend(pairs);
                Ok(())
            }
            _ => Err(self.malformed(at, "SETITEM on something not a dict")),
        }
    }

    /// Remembers the top of the stack at `index`. Python's pickler numbers
    /// memo entries in order (`len(self.memo)`), once per value, so an index
    /// beyond the values read so far is refused: a forged `LONG_BINPUT`
    /// cannot make the table larger than the values themselves.
    fn memo_put(&mut self, index: usize, at: usize) -> Result<(), MeasuredError> {
        if index > self.nodes.len() {
            return Err(self.malformed(at, "memo index beyond the values read"));
        }
        let id = self.top(at)?;
        if self.memo.len() <= index {
            self.memo.resize(index + 1, None);
        }
        if let Some(slot) = self.memo.get_mut(index) {
            *slot = Some(id);
        }
        Ok(())
    }

    fn memo_get(&mut self, index: usize, at: usize) -> Result<(), MeasuredError> {
        match self.memo.get(index).copied().flatten() {
            Some(id) => {
                self.stack.push(Slot::Value(id));
                Ok(())
            }
            None => Err(self.malformed(at, "memo key not found")),
        }
    }

    fn string(&mut self, n: usize) -> Result<(), MeasuredError> {
        let len = self.len(n)?;
        let bytes = self.take(len)?;
        // Python writes UTF-8 with surrogates escaped ("surrogatepass"); a
        // lossy read keeps the rare unpaired surrogate from failing a file.
        let s = String::from_utf8_lossy(bytes).into_owned();
        self.push(Node::Str(s));
        Ok(())
    }

    fn bytes(&mut self, n: usize) -> Result<(), MeasuredError> {
        let len = self.len(n)?;
        self.take(len)?;
        self.push(Node::Bytes(len));
        Ok(())
    }

    fn long(&mut self, n: usize, at: usize) -> Result<(), MeasuredError> {
        let len = self.len(n)?;
        if len > 16 {
            return Err(self.malformed(at, "integer wider than 128 bits"));
        }
        let bytes = self.take(len)?;
        let mut buf = [0u8; 16];
        if let Some(dst) = buf.get_mut(..len) {
            dst.copy_from_slice(bytes);
        }
        // Two's complement, little-endian: sign-extend from the last byte.
        if bytes.last().is_some_and(|b| b & 0x80 != 0)
            && let Some(rest) = buf.get_mut(len..)
        {
            rest.fill(0xff);
        }
        self.push(Node::Int(i128::from_le_bytes(buf)));
        Ok(())
    }

    fn run(mut self) -> Result<Pickle, MeasuredError> {
        loop {
            let at = self.pos;
            let op = self.u8()?;
            match op {
                0x80 => {
                    let proto = self.u8()?;
                    if !(2..=5).contains(&proto) {
                        return Err(MeasuredError::UnsupportedProtocol(proto));
                    }
                }
                0x95 => {
                    self.le(8)?;
                }
                b'.' => {
                    let root = self.pop(at)?;
                    return Ok(Pickle {
                        nodes: self.nodes,
                        root,
                    });
                }
                b'(' => {
                    self.marks += 1;
                    if self.marks > MAX_MARK_DEPTH {
                        return Err(MeasuredError::TooDeep(MAX_MARK_DEPTH));
                    }
                    self.stack.push(Slot::Mark);
                }
                b'}' => self.push(Node::Dict(Vec::new())),
                b']' => self.push(Node::List(Vec::new())),
                b')' => self.push(Node::List(Vec::new())),
                0x8f => self.push(Node::List(Vec::new())),
                b'N' => self.push(Node::None),
                0x88 => self.push(Node::Bool(true)),
                0x89 => self.push(Node::Bool(false)),
                b'J' => {
                    let v = self.le(4)? as u32 as i32;
                    self.push(Node::Int(i128::from(v)));
                }
                b'K' => {
                    let v = self.le(1)?;
                    self.push(Node::Int(i128::from(v)));
                }
                b'M' => {
                    let v = self.le(2)?;
                    self.push(Node::Int(i128::from(v)));
                }
                0x8a => self.long(1, at)?,
                0x8b => self.long(4, at)?,
                b'G' => {
                    let bits = self.take(8)?;
                    let mut b = [0u8; 8];
                    b.copy_from_slice(bits);
                    self.push(Node::Float(f64::from_be_bytes(b)));
                }
                0x8c => self.string(1)?,
                b'X' => self.string(4)?,
                0x8d => self.string(8)?,
                b'C' => self.bytes(1)?,
                b'B' => self.bytes(4)?,
                0x8e | 0x96 => self.bytes(8)?,
                b't' | b'l' | 0x91 => {
                    let items = self.pop_mark(at)?;
                    self.push(Node::List(items));
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    if self.stack.len() < n {
                        return Err(self.malformed(at, "stack underflow"));
                    }
                    let mut items = Vec::with_capacity(n);
                    for _ in 0..n {
                        items.push(self.pop(at)?);
                    }
                    items.reverse();
                    self.push(Node::List(items));
                }
                b'd' => {
                    let kv = self.pop_mark(at)?;
                    self.push(Node::Dict(Vec::new()));
                    let target = self.top(at)?;
                    self.set_items(at, target, kv)?;
                }
                b'a' => {
                    let v = self.pop(at)?;
                    let target = self.top(at)?;
                    self.extend_list(at, target, vec![v])?;
                }
                b'e' | 0x90 => {
                    let items = self.pop_mark(at)?;
                    let target = self.top(at)?;
                    self.extend_list(at, target, items)?;
                }
                b's' => {
                    let v = self.pop(at)?;
                    let k = self.pop(at)?;
                    let target = self.top(at)?;
                    self.set_items(at, target, vec![k, v])?;
                }
                b'u' => {
                    let kv = self.pop_mark(at)?;
                    let target = self.top(at)?;
                    self.set_items(at, target, kv)?;
                }
                0x94 => {
                    let index = self.memo.len();
                    self.memo_put(index, at)?;
                }
                b'q' => {
                    let i = self.le(1)? as usize;
                    self.memo_put(i, at)?;
                }
                b'r' => {
                    let i = self.le(4)? as usize;
                    self.memo_put(i, at)?;
                }
                b'h' => {
                    let i = self.le(1)? as usize;
                    self.memo_get(i, at)?;
                }
                b'j' => {
                    let i = self.le(4)? as usize;
                    self.memo_get(i, at)?;
                }
                b'0' => {
                    self.stack.pop();
                }
                b'1' => {
                    self.pop_mark(at)?;
                }
                b'2' => {
                    let id = self.top(at)?;
                    self.stack.push(Slot::Value(id));
                }
                _ => {
                    return Err(MeasuredError::UnsupportedOpcode {
                        opcode: opcode_name(op),
                        at,
                    });
                }
            }
        }
    }
}

/// The name `pickletools` gives an opcode this reader refuses.
fn opcode_name(op: u8) -> String {
    let name = match op {
        b'c' => "GLOBAL (imports code)",
        0x93 => "STACK_GLOBAL (imports code)",
        b'R' => "REDUCE (calls code)",
        b'b' => "BUILD (calls code)",
        b'i' => "INST (calls code)",
        b'o' => "OBJ (calls code)",
        0x81 => "NEWOBJ (calls code)",
        0x92 => "NEWOBJ_EX (calls code)",
        b'P' | b'Q' => "persistent id (needs the writer's code)",
        0x82..=0x84 => "EXT (imports code)",
        0x97 | 0x98 => "out-of-band buffer",
        b'I' | b'L' | b'S' | b'V' | b'F' | b'g' | b'p' => "a protocol-0 text opcode",
        _ => "",
    };
    if name.is_empty() {
        format!("0x{op:02x}")
    } else {
        format!("0x{op:02x} {name}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.
    use super::*;

    /// `pickle.dumps(v, protocol=p)` from CPython 3.11 for
    /// `v = {'segments': [{'total_size': 2097152, 'allocated_size': 512,
    /// 'segment_type': 'small'}], 'device_traces': [[{'action': 'alloc',
    /// 'addr': 1, 'size': 512}]], 'x': (1, -2, 2**40, -2**70, 1.5, None,
    /// True, b'ab', 'é')}`.
    const PROTOCOL_3: &str = "80037d71002858080000007365676d656e747371015d71027d710328580a000000746f74616c5f73697a6571044a00002000580e000000616c6c6f63617465645f73697a6571054d0002580c0000007365676d656e745f7479706571065805000000736d616c6c71077561580d0000006465766963655f74726163657371085d71095d710a7d710b285806000000616374696f6e710c5805000000616c6c6f63710d580400000061646472710e4b01580400000073697a65710f4d00027561615801000000787110284b014afeffffff8a060000000000018a090000000000000000c0473ff80000000000004e884302616271115802000000c3a97112747113752e";
    const PROTOCOL_5: &str = "800595c8000000000000007d94288c087365676d656e7473945d947d94288c0a746f74616c5f73697a65944a000020008c0e616c6c6f63617465645f73697a65944d00028c0c7365676d656e745f74797065948c05736d616c6c9475618c0d6465766963655f747261636573945d945d947d94288c06616374696f6e948c05616c6c6f63948c0461646472944b018c0473697a65944d00027561618c017894284b014afeffffff8a060000000000018a090000000000000000c0473ff80000000000004e8843026162948c02c3a9947494752e";
    /// The same value at protocol 2, which pickles `bytes` through
    /// `_codecs.encode` (a `GLOBAL` and a `REDUCE`).
    const PROTOCOL_2: &str = "80027d71002858080000007365676d656e747371015d71027d710328580a000000746f74616c5f73697a6571044a00002000580e000000616c6c6f63617465645f73697a6571054d0002580c0000007365676d656e745f7479706571065805000000736d616c6c71077561580d0000006465766963655f74726163657371085d71095d710a7d710b285806000000616374696f6e710c5805000000616c6c6f63710d580400000061646472710e4b01580400000073697a65710f4d00027561615801000000787110284b014afeffffff8a060000000000018a090000000000000000c0473ff80000000000004e88635f636f646563730a656e636f64650a711158020000006162711258060000006c6174696e3171138671145271155802000000c3a97116747117752e";
    /// `pickle.dumps(os.system, protocol=2)`.
    const OS_SYSTEM: &str = "800263706f7369780a73797374656d0a71002e";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn check_value(p: &Pickle) {
        let segs = p.get(p.root, "segments").unwrap();
        let seg = p.items(segs)[0];
        assert_eq!(p.int(p.get(seg, "total_size").unwrap()), Some(2_097_152));
        assert_eq!(p.str(p.get(seg, "segment_type").unwrap()), Some("small"));
        let traces = p.get(p.root, "device_traces").unwrap();
        let entry = p.items(p.items(traces)[0])[0];
        assert_eq!(p.str(p.get(entry, "action").unwrap()), Some("alloc"));
        let x = p.items(p.get(p.root, "x").unwrap()).to_vec();
        let got: Vec<&Node> = x.iter().map(|&i| p.node(i)).collect();
        assert_eq!(
            got,
            vec![
                &Node::Int(1),
                &Node::Int(-2),
                &Node::Int(1 << 40),
                &Node::Int(-(1i128 << 70)),
                &Node::Float(1.5),
                &Node::None,
                &Node::Bool(true),
                &Node::Bytes(2),
                &Node::Str("é".into()),
            ]
        );
    }

    #[test]
    fn protocols_three_and_five_read_as_python_wrote_them() {
        check_value(&parse(&hex(PROTOCOL_3)).unwrap());
        check_value(&parse(&hex(PROTOCOL_5)).unwrap());
    }

    #[test]
    fn code_is_refused_with_the_opcode_and_its_offset() {
        let err = parse(&hex(OS_SYSTEM)).unwrap_err();
        assert_eq!(
            err,
            MeasuredError::UnsupportedOpcode {
                opcode: "0x63 GLOBAL (imports code)".into(),
                at: 2
            }
        );
        let err = parse(&hex(PROTOCOL_2)).unwrap_err();
        assert!(
            matches!(&err, MeasuredError::UnsupportedOpcode { opcode, .. } if opcode.contains("GLOBAL")),
            "{err}"
        );
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let full = hex(PROTOCOL_5);
        for n in 0..full.len() {
            let err = parse(&full[..n]).unwrap_err();
            assert!(
                matches!(
                    err,
                    MeasuredError::Truncated
                        | MeasuredError::NotPickle
                        | MeasuredError::Malformed { .. }
                ),
                "prefix of {n} bytes: {err}"
            );
        }
    }

    #[test]
    fn nesting_beyond_the_limit_is_refused() {
        let mut data = vec![0x80, 4];
        data.extend(std::iter::repeat_n(b'(', MAX_MARK_DEPTH + 1));
        assert_eq!(
            parse(&data).unwrap_err(),
            MeasuredError::TooDeep(MAX_MARK_DEPTH)
        );
    }

    #[test]
    fn a_forged_memo_index_is_refused_without_allocating_it() {
        // EMPTY_LIST, LONG_BINPUT 0xffffffff.
        let data = [0x80, 4, b']', b'r', 0xff, 0xff, 0xff, 0xff, b'.'];
        assert!(matches!(
            parse(&data),
            Err(MeasuredError::Malformed { at: 3, .. })
        ));
    }
}
