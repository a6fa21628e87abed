//! circom's `.r1cs` (r1csfile's `r1cs_bin_format.md`): `"r1cs"`, version 1; section 1 the
//! header (u32 field size n8, the prime, u32 wires, outputs, public inputs, private inputs, u64
//! labels, u32 constraints); section 2 the constraints, each three linear combinations A, B, C
//! (u32 term count, then per term a u32 wire and an n8-byte little-endian coefficient in
//! standard form); section 3 a u64 label per wire; sections 4 and 5 PLONK's custom gates.
//!
//! # Linear combinations as snarkjs sees them
//! Terms are kept in file order, a wire listed twice kept twice: snarkjs's `zkey new` parses
//! the section itself in that order (its coefficient section lists them so, and its sums add
//! both), unlike r1csfile's loader, whose objects keep a repeated wire's last coefficient.
//!
//! # Memory
//! 40 bytes a term and 24 bytes a constraint, grown with the terms actually read (a count no
//! section bytes back allocates nothing), plus one linear combination's bytes while reading.

use std::io::{Read, Seek};

use blstrs::Scalar;
use ff::Field;

use super::{CircomError, header_section, le_u32, scalar_le};
use crate::binfile::{SectionReader, Table};
use crate::codec::Location;
use lockstep_shard::memory;

/// The bytes of one term in the file: a u32 wire and a 32-byte coefficient.
const TERM_BYTES: usize = 36;

/// What a circuit's header declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct R1csHeader {
    /// Wires (snarkjs's `nVars`), the constant 1 included.
    pub wires: u32,
    /// Public outputs.
    pub outputs: u32,
    /// Public inputs.
    pub public_inputs: u32,
    /// Private inputs.
    pub private_inputs: u32,
    /// Labels (signals before optimisation).
    pub labels: u64,
    /// Constraints.
    pub constraints: u32,
}

impl R1csHeader {
    /// Public signals: outputs, then public inputs (snarkjs's `nPublic`).
    pub fn public(&self) -> u32 {
        self.outputs + self.public_inputs
    }

    /// snarkjs's Groth16 domain, as its power: the smallest power of two above
    /// `nConstraints + nPublic` (a row per constraint, then one per public signal and the
    /// constant), at least 2 (`zkey_new.js`: `log2(nConstraints + nPublic) + 1`).
    pub fn domain_power(&self) -> u32 {
        let rows = u64::from(self.constraints) + u64::from(self.public()) + 1;
        rows.next_power_of_two().trailing_zeros().max(1)
    }
}

/// One term of a linear combination: `coeff * wire`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LcTerm {
    /// The wire.
    pub wire: u32,
    /// Its coefficient.
    pub coeff: Scalar,
}

/// A circom constraint system over BLS12-381's scalar field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircomR1cs {
    header: R1csHeader,
    /// Where each linear combination's terms start in `terms`: A, B, C of constraint 0, then
    /// of constraint 1, ...; one more at the end.
    starts: Vec<usize>,
    terms: Vec<LcTerm>,
}

impl CircomR1cs {
    /// Reads the header alone (the constraints are not read): `r1cs info`'s counts.
    ///
    /// # Errors
    /// [`CircomError`]: not a `.r1cs`, another field, a malformed header, a read error.
    pub fn read_header<R: Read + Seek>(mut input: R) -> Result<R1csHeader, CircomError> {
        let table = Table::read(&mut input, "circom .r1cs file", "r1cs", 1)?;
        header(&mut input, &table)
    }

    /// Reads and checks the whole file.
    ///
    /// # Errors
    /// [`CircomError`]: not a `.r1cs`, another field, custom gates, a malformed header or
    /// term (named by constraint, side and index), a section whose bytes are not its
    /// constraints exactly, memory, a read error.
    pub fn read<R: Read + Seek>(mut input: R) -> Result<Self, CircomError> {
        let table = Table::read(&mut input, "circom .r1cs file", "r1cs", 1)?;
        let header = header(&mut input, &table)?;
        if table.get(4).is_some() || table.get(5).is_some() {
            return Err(CircomError::CustomGates);
        }
        if let Some(labels) = table.get(3)
            && labels.size != u64::from(header.wires) * 8
        {
            return Err(crate::binfile::BinfileError::SectionSize {
                id: 3,
                name: "wire labels",
                found: labels.size,
                expected: u64::from(header.wires) * 8,
            }
            .into());
        }
        let section = table.require(2, "constraints")?;
        // Every constraint takes at least its three counts: a count the section cannot hold is
        // refused before anything is allocated for it.
        if u64::from(header.constraints) * 12 > section.size {
            return Err(CircomError::Header(format!(
                "{} constraints cannot fit in the {} bytes of section 2",
                header.constraints, section.size
            )));
        }
        let mut reader = SectionReader::new(&mut input, section)?;
        let memory = |what| move |refused| CircomError::Memory { what, refused };
        let mut starts = memory::try_with_capacity(3 * header.constraints as usize + 1)
            .map_err(memory("the constraints"))?;
        starts.push(0usize);
        let mut terms: Vec<LcTerm> = Vec::new();
        let mut buf = Vec::new();
        for constraint in 0..header.constraints {
            for side in ['A', 'B', 'C'] {
                let count = reader.u32(Location::element("constraint", u64::from(constraint)))?;
                let bytes = count as usize * TERM_BYTES;
                if bytes as u64 > reader.left() {
                    return Err(CircomError::Term {
                        constraint,
                        side,
                        term: 0,
                        problem: format!(
                            "{count} terms at byte {} run past the end of section 2",
                            reader.offset() - 4
                        ),
                    });
                }
                buf.resize(bytes, 0);
                reader.fill(
                    &mut buf,
                    Location::element("constraint", u64::from(constraint)),
                )?;
                memory::try_reserve(&mut terms, count as usize)
                    .map_err(memory("the constraints' terms"))?;
                for (term, chunk) in (0u32..).zip(buf.chunks_exact(TERM_BYTES)) {
                    let bad = |problem: String| CircomError::Term {
                        constraint,
                        side,
                        term,
                        problem,
                    };
                    let wire = le_u32(chunk);
                    if wire >= header.wires {
                        return Err(bad(format!(
                            "wire {wire} is not below the {} wires",
                            header.wires
                        )));
                    }
                    let coeff = scalar_le(&chunk[4..]).ok_or_else(|| {
                        bad("the coefficient is not a canonical field element (>= r)".to_owned())
                    })?;
                    terms.push(LcTerm { wire, coeff });
                }
                starts.push(terms.len());
            }
        }
        if reader.left() != 0 {
            return Err(CircomError::Header(format!(
                "section 2 holds {} bytes after the {} constraints the header declares",
                reader.left(),
                header.constraints
            )));
        }
        Ok(Self {
            header,
            starts,
            terms,
        })
    }

    /// The header's counts.
    pub fn header(&self) -> &R1csHeader {
        &self.header
    }

    /// Constraint `index`'s linear combinations A, B, C, each in file order.
    ///
    /// # Panics
    /// If `index` is not below the constraint count.
    pub fn constraint(&self, index: usize) -> [&[LcTerm]; 3] {
        let lc = |k: usize| {
            let (from, to) = (self.starts[3 * index + k], self.starts[3 * index + k + 1]);
            &self.terms[from..to]
        };
        [lc(0), lc(1), lc(2)]
    }

    /// The terms of all constraints.
    pub fn terms(&self) -> usize {
        self.terms.len()
    }

    /// Checks that `witness` satisfies every constraint, `<A, w> <B, w> = <C, w>`, in file
    /// order: the first that does not is named.
    ///
    /// # Errors
    /// [`CircomError::WitnessWires`] for a witness of another length;
    /// [`CircomError::Unsatisfied`] for the first constraint that does not hold.
    pub fn check_witness(&self, witness: &super::Witness) -> Result<(), CircomError> {
        let w = witness.values();
        if w.len() != self.header.wires as usize {
            return Err(CircomError::WitnessWires {
                witness: w.len(),
                wires: self.header.wires,
            });
        }
        let dot = |terms: &[LcTerm]| {
            terms
                .iter()
                .fold(Scalar::ZERO, |sum, t| sum + t.coeff * w[t.wire as usize])
        };
        for index in 0..self.header.constraints {
            let [a, b, c] = self.constraint(index as usize);
            if dot(a) * dot(b) != dot(c) {
                return Err(CircomError::Unsatisfied {
                    index,
                    count: self.header.constraints,
                });
            }
        }
        Ok(())
    }
}

fn header<R: Read + Seek>(input: &mut R, table: &Table) -> Result<R1csHeader, CircomError> {
    // Four u32 counts, a u64, a u32 after the prime.
    let mut reader = header_section(input, table, 32)?;
    let wires = reader.u32(Location::value("header wires"))?;
    let outputs = reader.u32(Location::value("header outputs"))?;
    let public_inputs = reader.u32(Location::value("header public inputs"))?;
    let private_inputs = reader.u32(Location::value("header private inputs"))?;
    let labels = reader.u64(Location::value("header labels"))?;
    let constraints = reader.u32(Location::value("header constraints"))?;
    let header = R1csHeader {
        wires,
        outputs,
        public_inputs,
        private_inputs,
        labels,
        constraints,
    };
    let inputs = 1 + u64::from(outputs) + u64::from(public_inputs) + u64::from(private_inputs);
    if u64::from(wires) < inputs {
        return Err(CircomError::Header(format!(
            "{wires} wires cannot hold the constant, {outputs} outputs, {public_inputs} public and {private_inputs} private inputs"
        )));
    }
    // Each wire has a label in section 3 (8 bytes) in every file circom writes; without it, a
    // wire count above the file's length is one no file backs.
    if u64::from(wires) > table.file_len() {
        return Err(CircomError::Header(format!(
            "{wires} wires in a file of {} bytes",
            table.file_len()
        )));
    }
    Ok(header)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::circom::BLS12_381_R_LE;

    /// A `.r1cs` of `constraints` (each three lists of (wire, coefficient as u64)).
    pub(crate) fn file(
        wires: u32,
        public: (u32, u32),
        constraints: &[[Vec<(u32, u64)>; 3]],
    ) -> Vec<u8> {
        let mut header = 32u32.to_le_bytes().to_vec();
        header.extend(BLS12_381_R_LE);
        for v in [wires, public.0, public.1, 1u32] {
            header.extend(v.to_le_bytes());
        }
        header.extend(u64::from(wires).to_le_bytes());
        header.extend(u32::try_from(constraints.len()).unwrap().to_le_bytes());
        let mut body = Vec::new();
        for c in constraints {
            for lc in c {
                body.extend(u32::try_from(lc.len()).unwrap().to_le_bytes());
                for &(wire, coeff) in lc {
                    body.extend(wire.to_le_bytes());
                    body.extend(Scalar::from(coeff).to_bytes_le());
                }
            }
        }
        let labels = vec![0u8; 8 * wires as usize];
        let mut out = b"r1cs".to_vec();
        out.extend(1u32.to_le_bytes());
        out.extend(3u32.to_le_bytes());
        // Constraints first: sections in any order.
        for (id, s) in [(2u32, &body), (1, &header), (3, &labels)] {
            out.extend(id.to_le_bytes());
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s);
        }
        out
    }

    #[test]
    fn a_witness_is_checked_against_every_constraint_and_the_first_failure_named() {
        // w1 * w1 = w2, then w2 * w1 = 3 w3.
        let bytes = file(
            4,
            (1, 0),
            &[
                [vec![(1, 1)], vec![(1, 1)], vec![(2, 1)]],
                [vec![(2, 1)], vec![(1, 1)], vec![(3, 3)]],
            ],
        );
        let r1cs = CircomR1cs::read(Cursor::new(bytes)).unwrap();
        let witness =
            |v: [u64; 4]| super::super::Witness::from_values(v.map(Scalar::from).to_vec());
        assert!(r1cs.check_witness(&witness([1, 3, 9, 9])).is_ok());
        let err = r1cs.check_witness(&witness([1, 3, 9, 8])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "constraint 1 of 2 does not hold for this witness (A * B != C; counted from 0 in the .r1cs's order)"
        );
        assert!(matches!(
            r1cs.check_witness(&witness([1, 3, 10, 10])),
            Err(CircomError::Unsatisfied { index: 0, count: 2 })
        ));
        let short = super::super::Witness::from_values(vec![Scalar::ONE; 3]);
        assert_eq!(
            r1cs.check_witness(&short).unwrap_err().to_string(),
            "the witness holds 3 values, the circuit has 4 wires: a witness of another circuit"
        );
        assert_eq!(super::super::grouped(4096), "4,096");
        assert_eq!(super::super::grouped(1_234_567), "1,234,567");
        assert_eq!(super::super::grouped(17), "17");
    }

    #[test]
    fn reads_sections_in_any_order_and_keeps_terms_in_file_order() {
        let bytes = file(
            5,
            (1, 1),
            &[[vec![(3, 2), (1, 7), (3, 9)], vec![(2, 1)], vec![]]],
        );
        let r1cs = CircomR1cs::read(Cursor::new(bytes)).unwrap();
        assert_eq!(r1cs.header().public(), 2);
        assert_eq!(r1cs.header().domain_power(), 2);
        let [a, b, c] = r1cs.constraint(0);
        let wires: Vec<(u32, Scalar)> = a.iter().map(|t| (t.wire, t.coeff)).collect();
        assert_eq!(
            wires,
            [
                (3, Scalar::from(2)),
                (1, Scalar::from(7)),
                (3, Scalar::from(9))
            ]
        );
        assert_eq!(b.len(), 1);
        assert!(c.is_empty());
        assert_eq!(r1cs.terms(), 4);
    }

    #[test]
    fn bad_files_are_named() {
        let good = file(5, (1, 1), &[[vec![(3, 2)], vec![(2, 1)], vec![(4, 1)]]]);
        let err = |bytes: Vec<u8>| {
            CircomR1cs::read(Cursor::new(bytes))
                .unwrap_err()
                .to_string()
        };
        // A wire out of range.
        let bad = file(5, (1, 1), &[[vec![(3, 2)], vec![(5, 1)], vec![]]]);
        assert_eq!(
            err(bad),
            "constraint 0, B term 0: wire 5 is not below the 5 wires"
        );
        // A coefficient >= r: the first term's coefficient bytes set to 0xff.
        let mut bytes = good.clone();
        let at = 12 + 12 + 4 + 4;
        bytes[at..at + 32].fill(0xff);
        assert_eq!(
            err(bytes),
            "constraint 0, A term 0: the coefficient is not a canonical field element (>= r)"
        );
        // BN254.
        let mut bytes = good.clone();
        let header = bytes.windows(32).position(|w| w == BLS12_381_R_LE).unwrap();
        bytes[header..header + 32].copy_from_slice(&super::super::BN254_R_LE);
        assert!(err(bytes).contains(
            "BN254 (bn128), not BLS12-381's scalar field (compile with `circom --prime bls12381`)"
        ));
        // A term count past the section.
        let mut bytes = good.clone();
        bytes[24..28].copy_from_slice(&1000u32.to_le_bytes());
        assert!(err(bytes).contains("constraint 0, A term 0: 1000 terms at byte 24 run past"));
        // Truncated.
        let mut bytes = good.clone();
        bytes.truncate(bytes.len() - 1);
        assert!(err(bytes).contains("runs past the end of the file"));
        assert!(CircomR1cs::read(Cursor::new(good)).is_ok());
    }
}
