// profio_go writes Go's own profiles in every form the format library must
// read, for tests/e2e/profile_*.sh: heap (protobuf and ?debug=1 text),
// allocs, goroutine, threadcreate, mutex and block (both forms), and a
// short CPU profile.
//
//	profio_go DIR MEMPROFILERATE
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"
)

var keep [][]byte
var sink []byte

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
func allocSmall() {
	for i := 0; i < 20000; i++ {
		sink = make([]byte, 128)
	}
}

//go:noinline
func nestedHelper() []byte { return make([]byte, 4096) }

//go:noinline
func allocNested() {
	for i := 0; i < 300; i++ {
		keep = append(keep, nestedHelper())
	}
}

//go:noinline
func spin(d time.Duration) int {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 10000; i++ {
			n += i * i
		}
	}
	return n
}

func contend() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				mu.Lock()
				time.Sleep(10 * time.Microsecond)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

func write(dir, name string, f func(*os.File) error) {
	out, err := os.Create(filepath.Join(dir, name))
	if err == nil {
		err = f(out)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: profio_go DIR MEMPROFILERATE")
		os.Exit(2)
	}
	dir := os.Args[1]
	rate, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	runtime.MemProfileRate = rate
	runtime.SetMutexProfileFraction(1)
	runtime.SetBlockProfileRate(1)

	write(dir, "cpu.pb.gz", func(f *os.File) error {
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		spin(300 * time.Millisecond)
		pprof.StopCPUProfile()
		return nil
	})
	allocLarge()
	allocMedium()
	allocSmall()
	allocNested()
	contend()
	block := make(chan struct{})
	for i := 0; i < 3; i++ {
		go func() { <-block }()
	}
	runtime.GC()
	runtime.GC()
	for _, name := range []string{"heap", "allocs", "goroutine", "threadcreate", "mutex", "block"} {
		p := pprof.Lookup(name)
		write(dir, name+".pb.gz", func(f *os.File) error { return p.WriteTo(f, 0) })
		write(dir, name+".txt", func(f *os.File) error { return p.WriteTo(f, 1) })
	}
	close(block)
	runtime.KeepAlive(keep)
}
