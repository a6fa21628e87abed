// Command gnark-harness runs gnark v0.15's BLS12-381 phase 1 MPC setup on files, so that
// lockstep's tests and benches can check interoperability both ways and time gnark on the same
// machine. Every subcommand exits non-zero with a message on failure.
//
//	new -power P -out FILE                  write gnark's initial Phase1 object
//	contribute -in FILE -out FILE           read, contribute (fresh randomness), write; print the new hash
//	verify -power P [-beacon HEX -sealed FILE] FILE...
//	                                        verify the chain FILE... from the initial object; with
//	                                        -sealed, also check FILE equals gnark's seal of the chain
//	seal -in FILE -beacon HEX -out FILE     write the sealed SRS commons
//	read -in FILE                           decode only (with gnark's subgroup checks)
//	bench -power P -reps R                  best times of new, contribute, read, verify, seal
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/consensys/gnark/backend/groth16/bls12-381/mpcsetup"
	"github.com/consensys/gnark/logger"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: gnark-harness new|contribute|verify|seal|read|bench|r1cs|p2init|p2contribute|p2verify|prove|gverify|p2bench|msmbench|provebench ...")
	}
	logger.Disable() // stdout carries results
	cmd, args := os.Args[1], os.Args[2:]
	if phase2Main(cmd, args) {
		return
	}
	if cmd == "provebench" {
		proveMain(args)
		return
	}
	if cmd == "msmbench" {
		msmMain(args)
		return
	}
	fs := newFlags(cmd)
	power := fs.Int("power", 0, "domain size N = 2^power")
	in := fs.String("in", "", "input file")
	out := fs.String("out", "", "output file")
	beacon := fs.String("beacon", "", "beacon bytes, hex")
	sealed := fs.String("sealed", "", "sealed SRS file to compare")
	reps := fs.Int("reps", 3, "bench repetitions")
	if err := fs.Parse(args); err != nil {
		fail(err.Error())
	}
	switch cmd {
	case "new":
		p := mpcsetup.NewPhase1(uint64(1) << *power)
		writeFile(*out, p)
	case "contribute":
		p := readPhase1(*in)
		p.Contribute()
		h := writeFile(*out, p)
		fmt.Println(hex.EncodeToString(h))
	case "verify":
		n := uint64(1) << *power
		prev := mpcsetup.NewPhase1(n)
		for _, name := range fs.Args() {
			next := readPhase1(name)
			if err := prev.Verify(next); err != nil {
				fail(fmt.Sprintf("%s: %v", name, err))
			}
			prev = next
		}
		if *sealed != "" {
			srs := prev.Seal(decodeHex(*beacon))
			var got bytes.Buffer
			if _, err := srs.WriteTo(&got); err != nil {
				fail(err.Error())
			}
			want, err := os.ReadFile(*sealed)
			if err != nil {
				fail(err.Error())
			}
			if !bytes.Equal(got.Bytes(), want) {
				fail(fmt.Sprintf("%s: differs from gnark's seal of the chain", *sealed))
			}
		}
		fmt.Println("ok")
	case "seal":
		p := readPhase1(*in)
		srs := p.Seal(decodeHex(*beacon))
		writeFile(*out, &srs)
	case "read":
		readPhase1(*in)
		fmt.Println("ok")
	case "bench":
		bench(*power, *reps)
	default:
		fail("unknown subcommand " + cmd)
	}
}

type multi struct {
	a, b io.Writer
}

func (m multi) Write(p []byte) (int, error) {
	if _, err := m.a.Write(p); err != nil {
		return 0, err
	}
	return m.b.Write(p)
}

func writeFile(name string, v interface {
	WriteTo(w io.Writer) (int64, error)
}) []byte {
	f, err := os.Create(name)
	if err != nil {
		fail(err.Error())
	}
	h := sha256.New()
	w := bufio.NewWriter(f)
	if _, err := v.WriteTo(multi{w, h}); err != nil {
		fail(err.Error())
	}
	if err := w.Flush(); err != nil {
		fail(err.Error())
	}
	if err := f.Close(); err != nil {
		fail(err.Error())
	}
	return h.Sum(nil)
}

func readPhase1(name string) *mpcsetup.Phase1 {
	p := new(mpcsetup.Phase1)
	readInto(name, p)
	return p
}

func decodeHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		fail("beacon: " + err.Error())
	}
	return b
}

// bench prints the best time in nanoseconds of each stage over reps runs, one "stage ns" line
// each: new (NewPhase1 and WriteTo), contribute (Contribute and WriteTo), read (ReadFrom, with
// its subgroup checks), verify (Verify against the initial object), seal.
func bench(power, reps int) {
	n := uint64(1) << power
	best := map[string]time.Duration{}
	note := func(name string, start time.Time) {
		d := time.Since(start)
		if b, ok := best[name]; !ok || d < b {
			best[name] = d
		}
	}
	for r := 0; r < reps; r++ {
		start := time.Now()
		p := mpcsetup.NewPhase1(n)
		var initial bytes.Buffer
		if _, err := p.WriteTo(&initial); err != nil {
			fail(err.Error())
		}
		note("new", start)
		start = time.Now()
		p.Contribute()
		var buf bytes.Buffer
		if _, err := p.WriteTo(&buf); err != nil {
			fail(err.Error())
		}
		note("contribute", start)
		start = time.Now()
		q := new(mpcsetup.Phase1)
		if _, err := q.ReadFrom(bytes.NewReader(buf.Bytes())); err != nil {
			fail(err.Error())
		}
		note("read", start)
		prev := new(mpcsetup.Phase1)
		if _, err := prev.ReadFrom(bytes.NewReader(initial.Bytes())); err != nil {
			fail(err.Error())
		}
		start = time.Now()
		if err := prev.Verify(q); err != nil {
			fail(err.Error())
		}
		note("verify", start)
		start = time.Now()
		q.Seal([]byte("bench beacon"))
		note("seal", start)
	}
	for _, k := range []string{"new", "contribute", "read", "verify", "seal"} {
		fmt.Printf("%s %d\n", k, best[k].Nanoseconds())
	}
}

func newFlags(cmd string) *flag.FlagSet {
	return flag.NewFlagSet(cmd, flag.ExitOnError)
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "gnark-harness:", msg)
	os.Exit(1)
}
