//! Compiling a plan into a register program: slots assigned by liveness (a node's slot is taken
//! before its arguments' are given back, and reused only by a node of the same dtype), dense
//! inputs read in place, strided ones gathered into a slot, constants one slot each; then the
//! instructions grouped into steps by [`fusion`](super::fusion).

use super::BLOCK_BYTES;
use super::fusion::fuse;
use super::ir::{Instr, Operand, Step};
use crate::{Array, DType, Op, Plan, Value};

/// A plan compiled for one block length.
#[derive(Debug)]
pub(crate) struct Program {
    /// Each slot's dtype.
    pub(crate) slots: Vec<DType>,
    /// Slots filled once per task with a constant (of one element).
    pub(crate) constants: Vec<(usize, Array)>,
    /// Strided inputs gathered into slots: (input, slot).
    pub(crate) loads: Vec<(usize, usize)>,
    pub(crate) steps: Vec<Step>,
    /// Outputs written from operands: (output, operand).
    pub(crate) stores: Vec<(usize, Operand)>,
    /// Elements per block.
    pub(crate) block: usize,
}

impl Program {
    pub(crate) fn compile(plan: &Plan) -> Program {
        Self::compile_with(plan, true)
    }

    /// `fuse`: whether chains become fused runs (the node-by-node baseline keeps every
    /// instruction a pass of its own).
    pub(crate) fn compile_with(plan: &Plan, fuse_runs: bool) -> Program {
        let mut slots: Vec<DType> = Vec::new();
        let mut free: Vec<Vec<usize>> = vec![Vec::new(); DType::ALL.len()];
        let type_index = |d: DType| {
            DType::ALL
                .iter()
                .position(|x| *x == d)
                .expect("invariant: a dtype")
        };
        let take = |d: DType, slots: &mut Vec<DType>, free: &mut [Vec<usize>]| {
            free[type_index(d)].pop().unwrap_or_else(|| {
                slots.push(d);
                slots.len() - 1
            })
        };

        let mut loads = Vec::new();
        let inputs: Vec<Operand> = plan
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                if input.view.stride == 1 {
                    Operand::Dense(i)
                } else {
                    let slot = take(input.dtype, &mut slots, &mut free);
                    loads.push((i, slot));
                    Operand::Slot(slot)
                }
            })
            .collect();
        let mut constants = Vec::new();
        let constant_slots: Vec<Operand> = plan
            .constants
            .iter()
            .map(|constant| {
                let slot = take(constant.dtype(), &mut slots, &mut free);
                constants.push((slot, constant.value.clone()));
                Operand::Slot(slot)
            })
            .collect();

        // The last instruction reading each node (outputs read at the end: never freed).
        let mut last_use: Vec<usize> = vec![usize::MAX; plan.nodes.len()];
        for (index, node) in plan.nodes.iter().enumerate() {
            for arg in &node.args {
                if let Value::Node(j) = *arg {
                    last_use[j] = index;
                }
            }
        }
        for output in &plan.outputs {
            if let Value::Node(j) = output.value {
                last_use[j] = usize::MAX;
            }
        }

        let mut node_slots: Vec<usize> = Vec::with_capacity(plan.nodes.len());
        let mut instrs = Vec::with_capacity(plan.nodes.len());
        let operand = |value: Value, node_slots: &[usize]| match value {
            Value::Input(i) => inputs[i],
            Value::Constant(i) => constant_slots[i],
            Value::Node(i) => Operand::Slot(node_slots[i]),
        };
        for (index, node) in plan.nodes.iter().enumerate() {
            let dest = take(node.dtype, &mut slots, &mut free);
            let mut args = [Operand::Slot(dest); 3];
            for (k, &arg) in node.args.iter().enumerate() {
                args[k] = operand(arg, &node_slots);
            }
            let arg_type = plan.dtype(if node.op == Op::Select {
                node.args[1]
            } else {
                node.args[0]
            });
            instrs.push(Instr {
                op: node.op,
                arg_type,
                out_type: node.dtype,
                args,
                dest,
                node: index,
            });
            node_slots.push(dest);
            let mut freed: Vec<usize> = Vec::new();
            for &arg in &node.args {
                if let Value::Node(j) = arg
                    && last_use[j] == index
                    && !freed.contains(&j)
                {
                    freed.push(j);
                    free[type_index(plan.nodes[j].dtype)].push(node_slots[j]);
                }
            }
        }
        let output_nodes: Vec<usize> = plan
            .outputs
            .iter()
            .filter_map(|o| match o.value {
                Value::Node(j) => Some(j),
                _ => None,
            })
            .collect();
        let constant_slots: Vec<usize> = constants.iter().map(|(slot, _)| *slot).collect();
        let steps = if fuse_runs {
            fuse(
                instrs,
                slots.len(),
                &last_use,
                &output_nodes,
                &constant_slots,
            )
        } else {
            instrs.into_iter().map(Step::One).collect()
        };
        let stores = plan
            .outputs
            .iter()
            .enumerate()
            .map(|(i, output)| (i, operand(output.value, &node_slots)))
            .collect();
        let widest = plan
            .inputs
            .iter()
            .map(|input| input.dtype.size())
            .chain(slots.iter().map(|d| d.size()))
            .chain(plan.outputs.iter().map(|o| o.dtype.size()))
            .max()
            .unwrap_or(1);
        Program {
            slots,
            constants,
            loads,
            steps,
            stores,
            block: BLOCK_BYTES / widest,
        }
    }

    /// Sets the block length (elements), for the node-by-node baseline.
    pub(crate) fn set_block(&mut self, block: usize) {
        self.block = block;
    }

    /// Scratch bytes one task allocates for `n` elements.
    pub(crate) fn task_bytes(&self, n: usize) -> u64 {
        let len = self.block.min(n) as u64;
        self.slots.iter().map(|d| d.size() as u64 * len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(nodes: usize, dtype: &str, stride: usize) -> Plan {
        let mut text = format!(
            r#"{{"version":1,"inputs":[{{"id":"x","dtype":"{dtype}","view":{{"stride":{stride}}}}}],
              "constants":[{{"id":"one","dtype":"{dtype}","value":1}}],"nodes":["#
        );
        for i in 0..nodes {
            let arg = if i == 0 {
                "x".to_owned()
            } else {
                format!("n{}", i - 1)
            };
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!(
                r#"{{"id":"n{i}","op":"add","args":["{arg}","one"]}}"#
            ));
        }
        text.push_str(&format!(
            r#"],"outputs":[{{"id":"y","from":"n{}"}}]}}"#,
            nodes - 1
        ));
        Plan::from_json(&text).unwrap()
    }

    #[test]
    fn slots_are_reused_by_liveness_and_blocks_fit_the_widest_dtype() {
        // 64 nodes in a chain: one slot for the constant, two for the nodes (each node takes
        // a slot before its argument's is given back), whatever the length.
        let program = Program::compile_with(&chain(64, "f32", 1), false);
        assert_eq!(program.slots, [DType::F32; 3]);
        assert_eq!(program.constants.len(), 1);
        assert!(program.loads.is_empty(), "a dense input is read in place");
        assert_eq!(program.steps.len(), 64);
        assert_eq!(program.block, BLOCK_BYTES / 4);
        assert_eq!(program.task_bytes(10), 3 * 4 * 10);
        assert_eq!(program.task_bytes(1 << 20), 3 * BLOCK_BYTES as u64);
        let f64_program = Program::compile(&chain(3, "f64", 1));
        assert_eq!(f64_program.block, BLOCK_BYTES / 8);
    }

    #[test]
    fn a_strided_input_is_gathered_into_a_slot_and_outputs_read_their_node() {
        let program = Program::compile_with(&chain(2, "i32", 3), false);
        assert_eq!(program.loads.len(), 1);
        let (input, slot) = program.loads[0];
        assert_eq!(input, 0);
        let Step::One(first) = &program.steps[0] else {
            panic!("unfused")
        };
        assert_eq!(first.args[0], Operand::Slot(slot));
        let Step::One(last) = &program.steps[1] else {
            panic!("unfused")
        };
        assert_eq!(program.stores, [(0, Operand::Slot(last.dest))]);
    }

    #[test]
    fn a_chain_compiles_to_one_fused_run() {
        let program = Program::compile(&chain(64, "f32", 1));
        assert_eq!(program.steps.len(), 1);
        let Step::Fused(run) = &program.steps[0] else {
            panic!("a fused run")
        };
        assert_eq!(run.ops.len(), 64);
        assert_eq!(run.first, Operand::Dense(0));
        assert!(
            run.ops.iter().all(|op| op.op == Op::Add && op.args[0].1),
            "each op adds the constant, read once as a scalar"
        );
        assert_eq!(program.stores, [(0, Operand::Slot(run.dest))]);
    }
}
