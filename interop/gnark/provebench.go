package main

// provebench: gnark's groth16.Prove on BLS12-381, for lockstep-bench groth16 --prove-logs.
//
//	provebench -logs 14,16 -threads 1,2 -reps R
//	    for each size 2^log: the circuit of 2^log - 3 chained squarings (s = x*x + k, then
//	    s = s*s + k again and again; x secret, k and the result public: the circuit of the
//	    circom bench), its keys by groth16.Setup, and the best of R runs of groth16.Prove
//	    (which solves the witness, then proves) with GOMAXPROCS at each thread count; the proof
//	    verified once; prints "prove LOG THREADS CONSTRAINTS MS" lines. With -out DIR, the
//	    circuit, keys and witness are also written there for lockstep to prove on: c-LOG.r1cs,
//	    c-LOG.pk, c-LOG.vk, c-LOG.wit (full) and c-LOG.pub (public), gnark's WriteTo bytes.

import (
	"flag"
	"fmt"
	"math/big"
	"runtime"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
)

// chainCircuit is n chained squarings: Y = (...((X*X + K)^2 + K)^2 ...) + K.
type chainCircuit struct {
	X frontend.Variable
	K frontend.Variable `gnark:",public"`
	Y frontend.Variable `gnark:",public"`
	n int
}

func (c *chainCircuit) Define(api frontend.API) error {
	s := api.Add(api.Mul(c.X, c.X), c.K)
	for i := 1; i < c.n; i++ {
		s = api.Add(api.Mul(s, s), c.K)
	}
	api.AssertIsEqual(s, c.Y)
	return nil
}

func chainAssignment(n int) *chainCircuit {
	var x, k, s fr.Element
	x.SetUint64(3)
	k.SetUint64(5)
	s.Mul(&x, &x).Add(&s, &k)
	for i := 1; i < n; i++ {
		s.Mul(&s, &s).Add(&s, &k)
	}
	var y big.Int
	s.BigInt(&y)
	return &chainCircuit{X: 3, K: 5, Y: &y, n: n}
}

func proveMain(args []string) {
	fs := flag.NewFlagSet("provebench", flag.ExitOnError)
	logs := fs.String("logs", "14", "sizes, as powers of two")
	threads := fs.String("threads", "1,2", "thread counts")
	reps := fs.Int("reps", 3, "runs per size and thread count; the best is printed")
	out := fs.String("out", "", "a directory to write each size's R1CS, keys and witnesses to")
	if err := fs.Parse(args); err != nil {
		fail(err.Error())
	}
	field := ecc.BLS12_381.ScalarField()
	for _, log := range ints(*logs) {
		n := (1 << log) - 3
		ccs, err := frontend.Compile(field, r1cs.NewBuilder, &chainCircuit{n: n})
		if err != nil {
			fail(err.Error())
		}
		pk, vk, err := groth16.Setup(ccs)
		if err != nil {
			fail(err.Error())
		}
		full, err := frontend.NewWitness(chainAssignment(n), field)
		if err != nil {
			fail(err.Error())
		}
		public, err := full.Public()
		if err != nil {
			fail(err.Error())
		}
		if *out != "" {
			name := func(ext string) string { return fmt.Sprintf("%s/c-%d.%s", *out, log, ext) }
			writeFile(name("r1cs"), ccs)
			writeFile(name("pk"), pk)
			writeFile(name("vk"), vk)
			writeFile(name("wit"), full)
			writeFile(name("pub"), public)
		}
		for _, t := range ints(*threads) {
			previous := runtime.GOMAXPROCS(t)
			best := time.Duration(0)
			for r := 0; r < *reps; r++ {
				runtime.GC()
				start := time.Now()
				proof, err := groth16.Prove(ccs, pk, full)
				if err != nil {
					fail(err.Error())
				}
				if d := time.Since(start); best == 0 || d < best {
					best = d
				}
				if r == 0 {
					if err := groth16.Verify(proof, vk, public); err != nil {
						fail("our own proof refused: " + err.Error())
					}
				}
			}
			runtime.GOMAXPROCS(previous)
			fmt.Printf("prove %d %d %d %.1f\n", log, t, ccs.GetNbConstraints(), float64(best.Microseconds())/1e3)
		}
	}
}
