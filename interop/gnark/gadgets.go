package main

// The gadgets circuit: gnark's standard gadgets whose values the solver finds by hints or by
// division, for the prover's interoperability tests.
//
// Public X and Y, secrets A and B; acc = X, then for each round i:
//
//	z   = IsZero(A - i)                 (gnark's InvZeroHint)
//	inv = Inverse(B + i + 1)            (a constraint solved by division)
//	q   = Div(X, A + i + 1)             (the same)
//	acc = acc + Select(z, inv, q) * B
//	acc = acc + FromBinary(ToBinary(A + i, 16))   (the bits by gnark's nBits hint)
//
// then Y == acc and A <= 1000 (AssertIsLessOrEqual: bits and comparisons). With -customhint
// the circuit also takes 2A from a hint of its own (doubleHint), which gnark's solver runs once
// registered and lockstep's refuses by name.

import (
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
)

// customHint adds doubleHint to the gadgets circuit (-customhint).
var customHint bool

// doubleHint is a hint no solver but gnark's (once registered) knows: 2 x.
func doubleHint(_ *big.Int, inputs []*big.Int, outputs []*big.Int) error {
	outputs[0].Lsh(inputs[0], 1)
	return nil
}

func init() {
	solver.RegisterHint(doubleHint)
}

type gadgetCircuit struct {
	X      frontend.Variable `gnark:",public"`
	Y      frontend.Variable `gnark:",public"`
	A      frontend.Variable
	B      frontend.Variable
	rounds int
}

// gadgetRounds gives about k constraints (about 180 a round, 29 more for the comparison).
func gadgetRounds(k int) int {
	if k < 360 {
		return 1
	}
	return k / 180
}

func (c *gadgetCircuit) Define(api frontend.API) error {
	acc := c.X
	for i := 0; i < c.rounds; i++ {
		z := api.IsZero(api.Sub(c.A, i))
		inv := api.Inverse(api.Add(c.B, i+1))
		q := api.Div(c.X, api.Add(c.A, i+1))
		acc = api.Add(acc, api.Mul(api.Select(z, inv, q), c.B))
		bits := api.ToBinary(api.Add(c.A, i), 16)
		acc = api.Add(acc, api.FromBinary(bits...))
	}
	api.AssertIsEqual(acc, c.Y)
	api.AssertIsLessOrEqual(c.A, 1000)
	if customHint {
		doubled, err := api.Compiler().NewHint(doubleHint, 1, c.A)
		if err != nil {
			return err
		}
		api.AssertIsEqual(doubled[0], api.Mul(c.A, 2))
	}
	return nil
}

// gadgetAssignment is the witness of X: A = 3, B = X + 1.
func gadgetAssignment(rounds int, x int64) *gadgetCircuit {
	var X, A, B, acc fr.Element
	X.SetInt64(x)
	A.SetInt64(3)
	B.SetInt64(x + 1)
	acc = X
	for i := 0; i < rounds; i++ {
		var ii, t, s fr.Element
		ii.SetInt64(int64(i))
		if A.Equal(&ii) {
			t.SetInt64(int64(i + 1))
			t.Add(&t, &B)
			s.Inverse(&t)
		} else {
			t.SetInt64(int64(i + 1))
			t.Add(&t, &A)
			s.Div(&X, &t)
		}
		s.Mul(&s, &B)
		acc.Add(&acc, &s)
		var low fr.Element
		low.Add(&A, &ii)
		acc.Add(&acc, &low) // A + i < 2^16: its bits sum back to it
	}
	return &gadgetCircuit{X: X, Y: acc, A: A, B: B}
}
