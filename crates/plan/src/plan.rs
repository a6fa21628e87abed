//! A validated plan: every id resolved, every dtype known, nodes in an order where each comes
//! after its arguments.

use std::collections::HashMap;

use crate::format::{FORMAT_VERSION, RawPlan, RawView};
use crate::quote::{parser_message, quoted};
use crate::{DType, Op, PlanError};

/// The most items a plan may list in each of `inputs`, `constants`, `nodes` and `outputs`:
/// 200,000. Validation and compilation are linear in the plan (a chain of 200,000 nodes, about
/// 10 MB of JSON, compiles in well under a second); the cap bounds what one plan can make a
/// caller's thread do and hold.
pub const MAX_NODES: usize = 200_000;

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// The plan's input at this index (declaration order).
    Input(usize),
    /// The plan's constant at this index (declaration order).
    Constant(usize),
    /// The node at this index of [`Plan::nodes`] (evaluation order).
    Node(usize),
}

/// The largest offset, stride or length a view holds: 2^53 - 1, the largest whole number JS
/// holds exactly (a plan is JSON, often written in JS). The same on every target: a number past
/// what this target can address is not refused when the plan is read but when a run binds
/// arrays to it (a view that takes no elements binds anywhere), so every engine reads and binds
/// a plan alike.
pub const MAX_VIEW_NUMBER: u64 = (1 << 53) - 1;

/// How a plan reads or writes an array: element `i` is at `offset + i * stride`. A missing
/// length is the most elements the buffer holds from `offset` on (inputs) or the plan's length
/// (outputs). Each number is at most [`MAX_VIEW_NUMBER`], whatever the target's `usize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// The first element's index in the buffer.
    pub offset: u64,
    /// The distance between elements, at least 1.
    pub stride: u64,
    /// The number of elements, if the plan fixes it.
    pub length: Option<u64>,
}

impl View {
    /// The dense view of a whole buffer.
    pub const DENSE: View = View {
        offset: 0,
        stride: 1,
        length: None,
    };

    /// The elements this view takes from a buffer of `buffer_len` elements when the plan's
    /// length is not fixed: as many as fit.
    pub fn fitting(&self, buffer_len: usize) -> u64 {
        self.length.unwrap_or_else(|| {
            (buffer_len as u64)
                .checked_sub(self.offset)
                .map_or(0, |rest| rest.div_ceil(self.stride))
        })
    }

    /// The buffer length `len` elements of this view need: `offset + (len - 1) * stride + 1`
    /// (0 for none), or `None` if that overflows.
    pub fn span(&self, len: u64) -> Option<u64> {
        if len == 0 {
            return Some(0);
        }
        (len - 1)
            .checked_mul(self.stride)?
            .checked_add(self.offset)?
            .checked_add(1)
    }

    /// Where element `i` is, for a view bound to an array that holds it.
    ///
    /// # Panics
    /// If the index does not fit `usize`: binding checked that the view's elements lie in its
    /// array, so a bound view's do.
    pub(crate) fn index(&self, i: usize) -> usize {
        let at = self.offset + i as u64 * self.stride;
        usize::try_from(at).expect("invariant: a bound view's elements lie in its array")
    }
}

/// An input: an array the caller passes, read through a view.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// The id nodes name it by.
    pub id: String,
    /// Its elements' dtype.
    pub dtype: DType,
    /// How it is read.
    pub view: View,
}

/// A constant: one value broadcast to every element.
#[derive(Clone, Debug, PartialEq)]
pub struct Constant {
    /// The id nodes name it by.
    pub id: String,
    /// The value, as an array of one element of the constant's dtype.
    pub value: crate::Array,
}

impl Constant {
    /// The constant's dtype.
    pub fn dtype(&self) -> DType {
        self.value.dtype()
    }
}

/// A node: an op over earlier values.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Its id in the plan.
    pub id: String,
    /// The op.
    pub op: Op,
    /// Its arguments, as many as the op takes.
    pub args: Vec<Value>,
    /// The result's dtype (a cast's `to`).
    pub dtype: DType,
}

/// An output: a node's result written through a view.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The output's name.
    pub id: String,
    /// The value written.
    pub value: Value,
    /// The value's dtype.
    pub dtype: DType,
    /// How it is written.
    pub view: View,
}

/// A plan that passed validation (see [`Plan::from_json`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub(crate) inputs: Vec<Input>,
    pub(crate) constants: Vec<Constant>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) outputs: Vec<Output>,
    pub(crate) length: Option<u64>,
}

impl Plan {
    /// Reads and validates a plan in format v1 (see [`format`](crate::format)).
    ///
    /// Nodes may be listed in any order; [`Plan::nodes`] gives them in an evaluation order
    /// (arguments first, ties in listing order). A plan of any size is validated without
    /// recursion.
    ///
    /// # Errors
    /// [`PlanError::Json`] for text that is not the format's shape (unknown fields included);
    /// [`PlanError::Version`] for another version; [`PlanError::Invalid`], naming the item and
    /// the field, for: an unknown dtype or op, a wrong argument count, an undefined or duplicate
    /// id, an argument dtype the op does not take (no implicit promotion), a cycle, an input,
    /// constant or node no output uses, a constant that does not fit its dtype, a stride of 0,
    /// fixed lengths that disagree, no outputs, more than [`MAX_NODES`] items in a list. A text
    /// longer than [`MAX_PLAN_BYTES`](crate::MAX_PLAN_BYTES) is [`PlanError::Json`] unread; a
    /// parser's message echoes the plan's text escaped and cut ([`parser_message`]).
    pub fn from_json(text: &str) -> Result<Plan, PlanError> {
        if text.len() as u64 > crate::MAX_PLAN_BYTES {
            return Err(PlanError::Json(format!(
                "{} bytes, more than the {} a plan may hold",
                text.len(),
                crate::MAX_PLAN_BYTES
            )));
        }
        let raw: RawPlan = serde_json::from_str(text)
            .map_err(|error| PlanError::Json(parser_message(&error.to_string())))?;
        Self::from_raw(raw)
    }

    /// The inputs, in declaration order.
    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }

    /// The constants, in declaration order.
    pub fn constants(&self) -> &[Constant] {
        &self.constants
    }

    /// The nodes, in evaluation order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The outputs, in declaration order.
    pub fn outputs(&self) -> &[Output] {
        &self.outputs
    }

    /// The number of elements the plan fixes in its views, if any does.
    pub fn fixed_length(&self) -> Option<u64> {
        self.length
    }

    /// The dtype of `value`.
    pub fn dtype(&self, value: Value) -> DType {
        match value {
            Value::Input(i) => self.inputs[i].dtype,
            Value::Constant(i) => self.constants[i].dtype(),
            Value::Node(i) => self.nodes[i].dtype,
        }
    }

    fn from_raw(raw: RawPlan) -> Result<Plan, PlanError> {
        if raw.version != FORMAT_VERSION {
            return Err(PlanError::Version { found: raw.version });
        }
        for (field, count) in [
            ("inputs", raw.inputs.len()),
            ("constants", raw.constants.len()),
            ("nodes", raw.nodes.len()),
            ("outputs", raw.outputs.len()),
        ] {
            if count > MAX_NODES {
                return Err(invalid(
                    field.to_owned(),
                    format!("{count} items, but a plan holds at most {MAX_NODES} of each"),
                ));
            }
        }
        let mut length: Option<(u64, String)> = None;
        let mut fix_length = |at: &str, view: &View| -> Result<(), PlanError> {
            let Some(len) = view.length else {
                return Ok(());
            };
            match &length {
                Some((fixed, first)) if *fixed != len => Err(invalid(
                    format!("{at}.view.length"),
                    format!(
                        "{len} elements, but {first} fixes {fixed} (every view has one length)"
                    ),
                )),
                Some(_) => Ok(()),
                None => {
                    length = Some((len, at.to_owned()));
                    Ok(())
                }
            }
        };

        let mut ids: HashMap<String, (Value, String)> = HashMap::new();
        let mut define = |id: &str, value: Value, at: String| -> Result<(), PlanError> {
            if id.is_empty() {
                return Err(invalid(
                    format!("{at}.id"),
                    "an id cannot be empty".to_owned(),
                ));
            }
            if let Some((_, first)) = ids.get(id) {
                return Err(invalid(
                    format!("{at}.id"),
                    format!("{} is already the id of {first}", quoted(id)),
                ));
            }
            ids.insert(id.to_owned(), (value, at));
            Ok(())
        };

        let mut inputs = Vec::with_capacity(raw.inputs.len());
        for (i, input) in raw.inputs.iter().enumerate() {
            let at = format!("inputs[{i}] {}", quoted(&input.id));
            define(&input.id, Value::Input(i), at.clone())?;
            let dtype = dtype(&input.dtype, &format!("{at}.dtype"))?;
            let view = view(&input.view, &at)?;
            fix_length(&at, &view)?;
            inputs.push(Input {
                id: input.id.clone(),
                dtype,
                view,
            });
        }
        let mut constants = Vec::with_capacity(raw.constants.len());
        for (i, constant) in raw.constants.iter().enumerate() {
            let at = format!("constants[{i}] {}", quoted(&constant.id));
            define(&constant.id, Value::Constant(i), at.clone())?;
            let dtype = dtype(&constant.dtype, &format!("{at}.dtype"))?;
            let value = crate::constant::parse(dtype, &constant.value)
                .map_err(|message| invalid(format!("{at}.value"), message))?;
            constants.push(Constant {
                id: constant.id.clone(),
                value,
            });
        }
        for (i, node) in raw.nodes.iter().enumerate() {
            define(
                &node.id,
                Value::Node(i),
                format!("nodes[{i}] {}", quoted(&node.id)),
            )?;
        }

        // Resolve each node's op and arguments (values still name listing indexes).
        let mut listed: Vec<(Op, Vec<Value>, Option<DType>)> = Vec::with_capacity(raw.nodes.len());
        for (i, node) in raw.nodes.iter().enumerate() {
            let at = format!("nodes[{i}] {}", quoted(&node.id));
            let op = Op::from_name(&node.op).ok_or_else(|| {
                invalid(
                    format!("{at}.op"),
                    format!("unknown op {} (ops: {})", quoted(&node.op), op_names()),
                )
            })?;
            if node.args.len() != op.arity() {
                return Err(invalid(
                    format!("{at}.args"),
                    format!(
                        "{op} takes {} arguments, not {}",
                        op.arity(),
                        node.args.len()
                    ),
                ));
            }
            let to = match (&node.to, op) {
                (Some(name), Op::Cast) => Some(dtype(name, &format!("{at}.to"))?),
                (None, Op::Cast) => {
                    return Err(invalid(
                        format!("{at}.to"),
                        "a cast needs the dtype to cast to".to_owned(),
                    ));
                }
                (Some(_), _) => {
                    return Err(invalid(
                        format!("{at}.to"),
                        format!("only a cast takes \"to\", not {op}"),
                    ));
                }
                (None, _) => None,
            };
            let mut args = Vec::with_capacity(node.args.len());
            for (a, name) in node.args.iter().enumerate() {
                let (value, _) = ids.get(name.as_str()).ok_or_else(|| {
                    invalid(
                        format!("{at}.args[{a}]"),
                        format!(
                            "{} is not the id of an input, constant or node",
                            quoted(name)
                        ),
                    )
                })?;
                args.push(*value);
            }
            listed.push((op, args, to));
        }

        let order = evaluation_order(&raw, &listed)?;
        let mut position = vec![usize::MAX; listed.len()];
        for (p, &i) in order.iter().enumerate() {
            position[i] = p;
        }
        let renumber = |value: Value| match value {
            Value::Node(i) => Value::Node(position[i]),
            other => other,
        };

        let mut nodes: Vec<Node> = Vec::with_capacity(listed.len());
        for &i in &order {
            let (op, args, to) = &listed[i];
            let args: Vec<Value> = args.iter().map(|&v| renumber(v)).collect();
            let arg_types: Vec<DType> = args
                .iter()
                .map(|&v| match v {
                    Value::Input(k) => inputs[k].dtype,
                    Value::Constant(k) => constants[k].dtype(),
                    Value::Node(k) => nodes[k].dtype,
                })
                .collect();
            let dtype = op.result(&arg_types, *to).map_err(|message| {
                invalid(
                    format!("nodes[{i}] {}.args", quoted(&raw.nodes[i].id)),
                    message,
                )
            })?;
            nodes.push(Node {
                id: raw.nodes[i].id.clone(),
                op: *op,
                args,
                dtype,
            });
        }

        if raw.outputs.is_empty() {
            return Err(invalid(
                "outputs".to_owned(),
                "a plan needs at least one output".to_owned(),
            ));
        }
        let mut outputs: Vec<Output> = Vec::with_capacity(raw.outputs.len());
        let mut output_ids: HashMap<&str, usize> = HashMap::with_capacity(raw.outputs.len());
        for (i, output) in raw.outputs.iter().enumerate() {
            let at = format!("outputs[{i}] {}", quoted(&output.id));
            if output.id.is_empty() {
                return Err(invalid(
                    format!("{at}.id"),
                    "an id cannot be empty".to_owned(),
                ));
            }
            if let Some(&first) = output_ids.get(output.id.as_str()) {
                return Err(invalid(
                    format!("{at}.id"),
                    format!(
                        "{} is already the id of outputs[{first}]",
                        quoted(&output.id)
                    ),
                ));
            }
            let (value, _) = ids.get(output.from.as_str()).ok_or_else(|| {
                invalid(
                    format!("{at}.from"),
                    format!(
                        "{} is not the id of an input, constant or node",
                        quoted(&output.from)
                    ),
                )
            })?;
            let value = renumber(*value);
            if matches!(value, Value::Constant(_)) {
                return Err(invalid(
                    format!("{at}.from"),
                    "an output cannot be a constant (it has no length)".to_owned(),
                ));
            }
            let view = view(&output.view, &at)?;
            fix_length(&at, &view)?;
            let dtype = match value {
                Value::Input(k) => inputs[k].dtype,
                Value::Node(k) => nodes[k].dtype,
                Value::Constant(_) => unreachable!("invariant: refused just above"),
            };
            output_ids.insert(&output.id, i);
            outputs.push(Output {
                id: output.id.clone(),
                value,
                dtype,
                view,
            });
        }

        let plan = Plan {
            inputs,
            constants,
            nodes,
            outputs,
            length: length.map(|(len, _)| len),
        };
        plan.check_all_used(&raw, &order)?;
        Ok(plan)
    }

    // Every input, constant and node reaches an output (nodes come after their arguments, so one
    // backward pass marks everything used).
    fn check_all_used(&self, raw: &RawPlan, order: &[usize]) -> Result<(), PlanError> {
        let mut inputs = vec![false; self.inputs.len()];
        let mut constants = vec![false; self.constants.len()];
        let mut nodes = vec![false; self.nodes.len()];
        let mut mark = |value: Value, nodes: &mut Vec<bool>| match value {
            Value::Input(i) => inputs[i] = true,
            Value::Constant(i) => constants[i] = true,
            Value::Node(i) => nodes[i] = true,
        };
        for output in &self.outputs {
            mark(output.value, &mut nodes);
        }
        for i in (0..self.nodes.len()).rev() {
            if nodes[i] {
                for &arg in &self.nodes[i].args {
                    mark(arg, &mut nodes);
                }
            }
        }
        let unused = "unused: no output depends on it";
        if let Some(i) = inputs.iter().position(|used| !used) {
            return Err(invalid(
                format!("inputs[{i}] {}", quoted(&self.inputs[i].id)),
                unused.to_owned(),
            ));
        }
        if let Some(i) = constants.iter().position(|used| !used) {
            return Err(invalid(
                format!("constants[{i}] {}", quoted(&self.constants[i].id)),
                unused.to_owned(),
            ));
        }
        // Name the first unused node in listing order.
        let mut first: Option<usize> = None;
        for (p, &listed) in order.iter().enumerate() {
            if !nodes[p] && first.is_none_or(|f| listed < f) {
                first = Some(listed);
            }
        }
        if let Some(i) = first {
            return Err(invalid(
                format!("nodes[{i}] {}", quoted(&raw.nodes[i].id)),
                unused.to_owned(),
            ));
        }
        Ok(())
    }
}

// Kahn's algorithm over listing indexes, smallest ready index first (so a plan listed in order
// keeps its order); a cycle is named by walking it from its first listed node.
fn evaluation_order(
    raw: &RawPlan,
    listed: &[(Op, Vec<Value>, Option<DType>)],
) -> Result<Vec<usize>, PlanError> {
    let n = listed.len();
    let mut waiting = vec![0usize; n];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, (_, args, _)) in listed.iter().enumerate() {
        for arg in args {
            if let Value::Node(j) = *arg {
                waiting[i] += 1;
                users[j].push(i);
            }
        }
    }
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
        .filter(|&i| waiting[i] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        order.push(i);
        for &user in &users[i] {
            waiting[user] -= 1;
            if waiting[user] == 0 {
                ready.push(std::cmp::Reverse(user));
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    // Every node left waits on another node left: walk arguments until one repeats.
    let start = (0..n)
        .find(|&i| waiting[i] > 0)
        .expect("invariant: a node is left");
    let mut seen = vec![usize::MAX; n];
    let mut path = Vec::new();
    let mut at = start;
    while seen[at] == usize::MAX {
        seen[at] = path.len();
        path.push(at);
        at = listed[at]
            .1
            .iter()
            .find_map(|arg| match *arg {
                Value::Node(j) if waiting[j] > 0 => Some(j),
                _ => None,
            })
            .expect("invariant: a waiting node has a waiting argument");
    }
    let cycle: Vec<&str> = path[seen[at]..]
        .iter()
        .chain(std::iter::once(&at))
        .map(|&i| raw.nodes[i].id.as_str())
        .collect();
    Err(invalid(
        format!("nodes[{at}] {}.args", quoted(&raw.nodes[at].id)),
        format!("a cycle: {}", cycle.join(" <- ")),
    ))
}

fn dtype(name: &str, at: &str) -> Result<DType, PlanError> {
    DType::ALL
        .into_iter()
        .find(|d| d.name() == name)
        .ok_or_else(|| {
            invalid(
                at.to_owned(),
                format!(
                    "unknown dtype {} (dtypes: {})",
                    quoted(name),
                    DType::ALL.map(DType::name).join(", ")
                ),
            )
        })
}

fn view(raw: &RawView, at: &str) -> Result<View, PlanError> {
    let number = |value: u64, field: &str| {
        if value > MAX_VIEW_NUMBER {
            return Err(invalid(
                format!("{at}.view.{field}"),
                format!("{value} is past {MAX_VIEW_NUMBER}, the largest a view holds"),
            ));
        }
        Ok(value)
    };
    let stride = number(raw.stride.unwrap_or(1), "stride")?;
    if stride == 0 {
        return Err(invalid(
            format!("{at}.view.stride"),
            "a stride must be at least 1".to_owned(),
        ));
    }
    Ok(View {
        offset: number(raw.offset.unwrap_or(0), "offset")?,
        stride,
        length: raw.length.map(|l| number(l, "length")).transpose()?,
    })
}

fn op_names() -> String {
    Op::ALL.map(Op::name).join(", ")
}

fn invalid(at: String, message: String) -> PlanError {
    PlanError::Invalid { at, message }
}
