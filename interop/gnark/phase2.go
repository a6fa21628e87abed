package main

// Phase 2 of gnark v0.15's BLS12-381 MPC setup, and Groth16 proofs with its keys, on files:
//
//	r1cs -constraints K [-commit] [-variant] [-curve bn254] -out FILE
//	                                          write the R1CS of the test circuit (about K constraints;
//	                                          K = 1: one constraint, X + S == Y)
//	p2init -r1cs R -srs SEALED -out FILE      Phase2.Initialize + WriteTo (the SRS cut to the
//	                                          circuit's domain when larger); print the SHA-256
//	p2contribute -in FILE -out FILE           read, Contribute, write; print the new SHA-256
//	p2verify -r1cs R -srs SEALED -beacon HEX [-pk PK -vk VK] FILE...
//	                                          VerifyPhase2 over the chain; write the keys
//	prove -r1cs R -constraints K [-variant] -pk PK -x X -out PROOF -public PUB
//	                                          a proof for the witness of X (K as given to r1cs), and its public witness
//	setup -r1cs R -pk PK -vk VK               groth16.Setup's keys (one party's toxic waste: for tests)
//	witness -constraints K [-variant] [-gadgets [-customhint]] -x X -out FULL -public PUB
//	                                          the full and the public witness of X (gnark's binary format)
//	gverify -vk VK -proof PROOF -public PUB  groth16.Verify
//	p2bench -r1cs R -srs SEALED -reps N      best ns of Initialize, Contribute, VerifyPhase2 (one contribution)
//	mulbench -reps N                          ns of one G1 and one G2 ScalarMultiplication (Jacobian,
//	                                          a random 255-bit scalar; best of N runs of 1,000)
//
// The test circuit: public X and Y, secrets S[0..7]; acc = X; K - 4 times acc = acc * S[i % 8] +
// c_(i % 7) * X (- S[(i + 1) % 8] on odd steps), c = 3, 2, -1, -2, 5, 1, 7; Y == acc. X sits in
// every constraint (a hot wire) with every kind of coefficient: gnark's reserved 1, 2, -1, -2
// and larger ones. With -commit, S[0], S[1] and X are committed (BSB22) and the commitment
// must be non-zero. The witness of X: S[i] = X + i + 1.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/big"
	"os"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/groth16/bls12-381/mpcsetup"
	"github.com/consensys/gnark/backend/witness"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
)

type testCircuit struct {
	X       frontend.Variable `gnark:",public"`
	Y       frontend.Variable `gnark:",public"`
	S       [8]frontend.Variable
	steps   int
	commit  bool
	variant bool
}

// oneCircuit is a circuit of a single constraint, X + S == Y (X and Y public; gnark writes it
// (X + S) * 1 == Y): the smallest domain, N = 1.
type oneCircuit struct {
	X frontend.Variable `gnark:",public"`
	Y frontend.Variable `gnark:",public"`
	S frontend.Variable
}

func (c *oneCircuit) Define(api frontend.API) error {
	api.AssertIsEqual(api.Add(c.X, c.S), c.Y)
	return nil
}

// xCoeffs are X's coefficients step by step: gnark's reserved ids 2 (two), 3 (minus one) and
// 4 (minus two) among them, beside 1 and larger ones.
var xCoeffs = [7]int64{3, 2, -1, -2, 5, 1, 7}

func (c *testCircuit) Define(api frontend.API) error {
	acc := c.X
	for i := 0; i < c.steps; i++ {
		next := api.Add(api.Mul(acc, c.S[i%8]), api.Mul(c.X, xCoeffs[i%7]))
		if i%2 == 1 {
			// The variant subtracts twice as much: another circuit of the same shape (the same
			// wires, constraints and commitments), other coefficients on private wires.
			sub := c.S[(i+1)%8]
			if c.variant {
				sub = api.Mul(c.S[(i+1)%8], 2)
			}
			next = api.Sub(next, sub)
		}
		acc = next
	}
	api.AssertIsEqual(acc, c.Y)
	if c.commit {
		cmt, err := api.(frontend.Committer).Commit(c.S[0], c.S[1], c.X)
		if err != nil {
			return err
		}
		api.AssertIsDifferent(cmt, 0)
	}
	return nil
}

// stepsFor picks the steps that give about k constraints (one a step, plus the final checks).
func stepsFor(k int) int {
	if k < 8 {
		return 1
	}
	return k - 4
}

// gadgets selects the gadgets circuit (gadgets.go) in circuitFor and assignmentFor.
var gadgets bool

// circuitFor is the test circuit of about k constraints (k = 1: oneCircuit), or with -gadgets
// the gadgets circuit.
func circuitFor(k int, commit, variant bool) frontend.Circuit {
	if gadgets {
		return &gadgetCircuit{rounds: gadgetRounds(k)}
	}
	if k == 1 {
		return &oneCircuit{}
	}
	return &testCircuit{steps: stepsFor(k), commit: commit, variant: variant}
}

func compileCircuit(k int, commit, variant bool) *cs.R1CS {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, circuitFor(k, commit, variant))
	if err != nil {
		fail(err.Error())
	}
	return ccs.(*cs.R1CS)
}

// assignmentFor is the witness of X for circuitFor(k, _, variant).
func assignmentFor(k int, variant bool, x int64) frontend.Circuit {
	if gadgets {
		return gadgetAssignment(gadgetRounds(k), x)
	}
	if k == 1 {
		var X, S, Y fr.Element
		X.SetInt64(x)
		S.SetInt64(x + 1)
		Y.Add(&X, &S)
		return &oneCircuit{X: X, Y: Y, S: S}
	}
	return assignment(stepsFor(k), variant, x)
}

func assignment(steps int, variant bool, x int64) *testCircuit {
	var X, acc fr.Element
	X.SetInt64(x)
	acc = X
	var s [8]fr.Element
	for i := range s {
		s[i].SetInt64(x + int64(i) + 1)
	}
	for i := 0; i < steps; i++ {
		var k, t fr.Element
		k.SetInt64(xCoeffs[i%7])
		t.Mul(&X, &k)
		acc.Mul(&acc, &s[i%8]).Add(&acc, &t)
		if i%2 == 1 {
			var sub fr.Element
			sub.Set(&s[(i+1)%8])
			if variant {
				sub.Double(&sub)
			}
			acc.Sub(&acc, &sub)
		}
	}
	a := &testCircuit{X: X, Y: acc}
	for i := range s {
		a.S[i] = s[i]
	}
	return a
}

func phase2Main(cmd string, args []string) bool {
	fs := newFlags(cmd)
	constraints := fs.Int("constraints", 16, "about this many constraints")
	commit := fs.Bool("commit", false, "commit to S[0], S[1], X")
	variant := fs.Bool("variant", false, "r1cs, prove: the circuit of the same shape that subtracts 2 S on odd steps")
	curveName := fs.String("curve", "bls12-381", "r1cs: the circuit's curve (bls12-381, or bn254 for a wrong-curve fixture)")
	r1csPath := fs.String("r1cs", "", "R1CS file")
	srsPath := fs.String("srs", "", "sealed phase 1 (SrsCommons)")
	in := fs.String("in", "", "input file")
	out := fs.String("out", "", "output file")
	beacon := fs.String("beacon", "", "beacon bytes, hex")
	pkPath := fs.String("pk", "", "proving key file")
	vkPath := fs.String("vk", "", "verifying key file")
	proofPath := fs.String("proof", "", "proof file")
	publicPath := fs.String("public", "", "public witness file")
	x := fs.Int64("x", 5, "the public input X")
	fs.BoolVar(&gadgets, "gadgets", false, "r1cs, prove, witness: the gadgets circuit (gadgets.go)")
	fs.BoolVar(&customHint, "customhint", false, "r1cs, prove, witness: with -gadgets, a hint of the circuit's own (gadgets.go)")
	reps := fs.Int("reps", 3, "bench repetitions")
	switch cmd {
	case "r1cs", "p2init", "p2contribute", "p2verify", "setup", "prove", "witness", "gverify", "p2bench", "mulbench":
	default:
		return false
	}
	if err := fs.Parse(args); err != nil {
		fail(err.Error())
	}
	switch cmd {
	case "r1cs":
		if *curveName == "bn254" {
			other, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, circuitFor(*constraints, *commit, *variant))
			if err != nil {
				fail(err.Error())
			}
			writeFile(*out, other)
			fmt.Println("ok")
			return true
		}
		ccs := compileCircuit(*constraints, *commit, *variant)
		writeFile(*out, ccs)
		internal, secret, public := ccs.GetNbVariables()
		fmt.Printf("constraints %d public %d secret %d internal %d steps %d\n",
			ccs.GetNbConstraints(), public, secret, internal, stepsFor(*constraints))
	case "p2init":
		ccs := readR1CS(*r1csPath)
		commons := readCommons(*srsPath, ccs)
		var p mpcsetup.Phase2
		p.Initialize(ccs, commons)
		fmt.Printf("%x\n", writeFile(*out, &p))
	case "p2contribute":
		p := readPhase2(*in)
		p.Contribute()
		fmt.Printf("%x\n", writeFile(*out, p))
	case "p2verify":
		ccs := readR1CS(*r1csPath)
		commons := readCommons(*srsPath, ccs)
		var chain []*mpcsetup.Phase2
		for _, name := range fs.Args() {
			chain = append(chain, readPhase2(name))
		}
		pk, vk, err := mpcsetup.VerifyPhase2(ccs, commons, decodeHex(*beacon), chain...)
		if err != nil {
			fail(err.Error())
		}
		if *pkPath != "" {
			writeFile(*pkPath, pk)
		}
		if *vkPath != "" {
			writeFile(*vkPath, vk)
		}
		fmt.Println("ok")
	case "prove":
		ccs := readR1CS(*r1csPath)
		pk := groth16.NewProvingKey(ecc.BLS12_381)
		readInto(*pkPath, pk)
		full, err := frontend.NewWitness(assignmentFor(*constraints, *variant, *x), ecc.BLS12_381.ScalarField())
		if err != nil {
			fail(err.Error())
		}
		proof, err := groth16.Prove(ccs, pk, full)
		if err != nil {
			fail(err.Error())
		}
		writeFile(*out, proof)
		public, err := full.Public()
		if err != nil {
			fail(err.Error())
		}
		writeFile(*publicPath, public)
		fmt.Println("ok")
	case "setup":
		ccs := readR1CS(*r1csPath)
		pk, vk, err := groth16.Setup(ccs)
		if err != nil {
			fail(err.Error())
		}
		writeFile(*pkPath, pk)
		writeFile(*vkPath, vk)
		fmt.Println("ok")
	case "witness":
		full, err := frontend.NewWitness(assignmentFor(*constraints, *variant, *x), ecc.BLS12_381.ScalarField())
		if err != nil {
			fail(err.Error())
		}
		writeFile(*out, full)
		public, err := full.Public()
		if err != nil {
			fail(err.Error())
		}
		writeFile(*publicPath, public)
		fmt.Println("ok")
	case "gverify":
		vk := groth16.NewVerifyingKey(ecc.BLS12_381)
		readInto(*vkPath, vk)
		proof := groth16.NewProof(ecc.BLS12_381)
		readInto(*proofPath, proof)
		public, err := witness.New(ecc.BLS12_381.ScalarField())
		if err != nil {
			fail(err.Error())
		}
		readInto(*publicPath, public)
		if err := groth16.Verify(proof, vk, public); err != nil {
			fail("proof refused: " + err.Error())
		}
		fmt.Println("ok")
	case "mulbench":
		mulbench(*reps)
	case "p2bench":
		ccs := readR1CS(*r1csPath)
		commons := readCommons(*srsPath, ccs)
		best := map[string]time.Duration{}
		note := func(name string, start time.Time) {
			if d := time.Since(start); best[name] == 0 || d < best[name] {
				best[name] = d
			}
		}
		for r := 0; r < *reps; r++ {
			start := time.Now()
			var p mpcsetup.Phase2
			p.Initialize(ccs, commons)
			note("init", start)
			var initial bytes.Buffer
			if _, err := p.WriteTo(&initial); err != nil {
				fail(err.Error())
			}
			start = time.Now()
			p.Contribute()
			var buf bytes.Buffer
			if _, err := p.WriteTo(&buf); err != nil {
				fail(err.Error())
			}
			note("contribute", start)
			var next mpcsetup.Phase2
			if _, err := next.ReadFrom(bytes.NewReader(buf.Bytes())); err != nil {
				fail(err.Error())
			}
			start = time.Now()
			if _, _, err := mpcsetup.VerifyPhase2(ccs, commons, []byte("bench beacon"), &next); err != nil {
				fail(err.Error())
			}
			note("verify", start)
		}
		for _, k := range []string{"init", "contribute", "verify"} {
			fmt.Printf("%s %d\n", k, best[k].Nanoseconds())
		}
	}
	return true
}

func readR1CS(name string) *cs.R1CS {
	ccs := new(cs.R1CS)
	readInto(name, ccs)
	return ccs
}

// readCommons reads sealed SRS commons and cuts them to the circuit's domain (the next power
// of two of its constraint count) when they are larger.
func readCommons(name string, ccs *cs.R1CS) *mpcsetup.SrsCommons {
	commons := new(mpcsetup.SrsCommons)
	readInto(name, commons)
	n := int(ecc.NextPowerOfTwo(uint64(ccs.GetNbConstraints())))
	if len(commons.G1.AlphaTau) > n {
		commons.G1.Tau = commons.G1.Tau[:2*n-1]
		commons.G2.Tau = commons.G2.Tau[:n]
		commons.G1.AlphaTau = commons.G1.AlphaTau[:n]
		commons.G1.BetaTau = commons.G1.BetaTau[:n]
	}
	return commons
}

func readPhase2(name string) *mpcsetup.Phase2 {
	p := new(mpcsetup.Phase2)
	readInto(name, p)
	return p
}

func readInto(name string, v io.ReaderFrom) {
	f, err := os.Open(name)
	if err != nil {
		fail(err.Error())
	}
	defer f.Close()
	if _, err := v.ReadFrom(bufio.NewReader(f)); err != nil {
		fail(fmt.Sprintf("%s: %v", name, err))
	}
}

// mulbench prints the best ns per G1 and G2 Jacobian scalar multiplication by a random 255-bit
// scalar over reps runs of 1,000 chained multiplications: the primitive phase 2's transforms
// spend their time in.
func mulbench(reps int) {
	_, _, g1, g2 := curve.Generators()
	var s fr.Element
	if _, err := s.SetRandom(); err != nil {
		fail(err.Error())
	}
	var k big.Int
	s.BigInt(&k)
	const n = 1000
	best := map[string]time.Duration{}
	for r := 0; r < reps; r++ {
		var p1 curve.G1Jac
		p1.FromAffine(&g1)
		start := time.Now()
		for i := 0; i < n; i++ {
			p1.ScalarMultiplication(&p1, &k)
		}
		if d := time.Since(start) / n; best["g1mul"] == 0 || d < best["g1mul"] {
			best["g1mul"] = d
		}
		var p2 curve.G2Jac
		p2.FromAffine(&g2)
		start = time.Now()
		for i := 0; i < n; i++ {
			p2.ScalarMultiplication(&p2, &k)
		}
		if d := time.Since(start) / n; best["g2mul"] == 0 || d < best["g2mul"] {
			best["g2mul"] = d
		}
	}
	fmt.Printf("g1mul %d\ng2mul %d\n", best["g1mul"].Nanoseconds(), best["g2mul"].Nanoseconds())
}
