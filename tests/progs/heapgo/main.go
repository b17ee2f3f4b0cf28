// heapgo writes a Go heap profile with known allocation sites, for the
// differential tests of cprof against go tool pprof (tests/e2e/tool_*.sh).
//
//	heapgo OUT.pb.gz [RATE]
//
// RATE is runtime.MemProfileRate (default 1: every allocation recorded).
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
)

var keep [][]byte

//go:noinline
func allocLarge() {
	for i := 0; i < 16; i++ {
		keep = append(keep, make([]byte, 1<<20))
	}
}

//go:noinline
func allocMedium() {
	for i := 0; i < 128; i++ {
		b := make([]byte, 64<<10)
		if i%2 == 0 {
			keep = append(keep, b)
		}
	}
}

//go:noinline
func allocSmall() int {
	n := 0
	for i := 0; i < 20000; i++ {
		b := make([]byte, 128)
		n += len(b)
	}
	return n
}

// small enough to be inlined into its callers
func inlinedHelper(n int) []byte { return make([]byte, n) }

//go:noinline
func nestedHelper() {
	for i := 0; i < 300; i++ {
		keep = append(keep, inlinedHelper(4096))
	}
}

//go:noinline
func allocNested() { nestedHelper() }

func main() {
	rate := 1
	if len(os.Args) > 2 {
		rate, _ = strconv.Atoi(os.Args[2])
	}
	runtime.MemProfileRate = rate
	allocLarge()
	allocMedium()
	allocSmall()
	allocNested()
	runtime.GC()
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		panic(err)
	}
	f.Close()
}
