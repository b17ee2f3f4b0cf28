// symgo writes a Go heap profile in the legacy text form (?debug=1), which
// carries bare addresses only, for tests/e2e/symbolize_go.sh: symbolizing
// it needs the binary, from .gopclntab when the binary is stripped.
//
//	symgo OUT.txt [RATE]
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
)

var keep [][]byte

//go:noinline
func allocBig() {
	for i := 0; i < 8; i++ {
		keep = append(keep, make([]byte, 1<<20))
	}
}

// small enough to be inlined into its caller
func inlinedMake(n int) []byte { return make([]byte, n) }

//go:noinline
func allocViaInline() {
	for i := 0; i < 100; i++ {
		keep = append(keep, inlinedMake(8192))
	}
}

func main() {
	rate := 1
	if len(os.Args) > 2 {
		rate, _ = strconv.Atoi(os.Args[2])
	}
	runtime.MemProfileRate = rate
	allocBig()
	allocViaInline()
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 1); err != nil {
		panic(err)
	}
	f.Close()
}
