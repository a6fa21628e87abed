package main

// msmbench: gnark-crypto's MultiExp on BLS12-381, for lockstep-bench groth16.
//
//	msmbench -logs 12,14 -threads 1,2 -reps R [-groups g1,g2]
//	    for each group, size 2^log and thread count: the best of R runs of MultiExp over random
//	    points (distinct: BatchScalarMultiplication of the generator by random scalars) and
//	    random scalars, with GOMAXPROCS and NbTasks set to the thread count; prints
//	    "GROUP LOG THREADS NS_PER_POINT" lines.

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

func ints(list string) []int {
	var out []int
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fail("not a number: " + s)
		}
		out = append(out, v)
	}
	return out
}

func randomScalars(n int) []fr.Element {
	out := make([]fr.Element, n)
	for i := range out {
		if _, err := out[i].SetRandom(); err != nil {
			fail(err.Error())
		}
	}
	return out
}

func msmMain(args []string) {
	fs := flag.NewFlagSet("msmbench", flag.ExitOnError)
	logs := fs.String("logs", "12,14", "sizes, as powers of two")
	threads := fs.String("threads", "1,2", "thread counts")
	groups := fs.String("groups", "g1,g2", "groups")
	reps := fs.Int("reps", 3, "runs per size; the best is printed")
	if err := fs.Parse(args); err != nil {
		fail(err.Error())
	}
	sizes := ints(*logs)
	most := 0
	for _, l := range sizes {
		if l > most {
			most = l
		}
	}
	n := 1 << most
	_, _, g1, g2 := curve.Generators()
	scalars := randomScalars(n)
	for _, group := range strings.Split(*groups, ",") {
		var run func(m, t int)
		switch group {
		case "g1":
			points := curve.BatchScalarMultiplicationG1(&g1, randomScalars(n))
			run = func(m, t int) {
				var out curve.G1Jac
				if _, err := out.MultiExp(points[:m], scalars[:m], ecc.MultiExpConfig{NbTasks: t}); err != nil {
					fail(err.Error())
				}
			}
		case "g2":
			points := curve.BatchScalarMultiplicationG2(&g2, randomScalars(n))
			run = func(m, t int) {
				var out curve.G2Jac
				if _, err := out.MultiExp(points[:m], scalars[:m], ecc.MultiExpConfig{NbTasks: t}); err != nil {
					fail(err.Error())
				}
			}
		default:
			fail("unknown group " + group)
		}
		for _, l := range sizes {
			m := 1 << l
			for _, t := range ints(*threads) {
				runtime.GOMAXPROCS(t)
				var best time.Duration
				for r := 0; r < *reps; r++ {
					start := time.Now()
					run(m, t)
					if d := time.Since(start); r == 0 || d < best {
						best = d
					}
				}
				fmt.Printf("%s %d %d %.1f\n", group, l, t, float64(best.Nanoseconds())/float64(m))
			}
		}
	}
}
