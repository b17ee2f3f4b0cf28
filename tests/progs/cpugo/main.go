// cpugo writes a Go CPU profile of two hot loops (about 2:1) run under
// goroutine labels, for the differential tests of cprof. It runs until it
// has used MILLISECONDS of CPU time, not of wall time: on a loaded machine
// a wall-time run could get so few samples that hotLoopB had none.
//
//	cpugo OUT.pb.gz [MILLISECONDS]
package main

import (
	"context"
	"os"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"
)

var sink int

//go:noinline
func hotLoopA(n int) {
	for i := 0; i < n; i++ {
		sink += i * i
	}
}

//go:noinline
func hotLoopB(n int) {
	for i := 0; i < n; i++ {
		sink ^= i
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func work(d time.Duration) {
	end := cpuTime() + d
	for cpuTime() < end {
		pprof.Do(context.Background(), pprof.Labels("phase", "a"), func(context.Context) {
			hotLoopA(200000)
		})
		pprof.Do(context.Background(), pprof.Labels("phase", "b"), func(context.Context) {
			hotLoopB(100000)
		})
	}
}

func main() {
	ms := 600
	if len(os.Args) > 2 {
		ms, _ = strconv.Atoi(os.Args[2])
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	work(time.Duration(ms) * time.Millisecond)
	pprof.StopCPUProfile()
	f.Close()
}
