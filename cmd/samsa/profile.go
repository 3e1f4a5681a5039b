package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles turns on the opt-in profiles of any samsa command from the
// environment, for finding where a long-running command (serve, connect)
// spends its time without a debug listener: SAMSA_CPUPROFILE names a file
// for a CPU profile of the whole run, SAMSA_MEMPROFILE one for the heap
// profile taken at exit (go tool pprof reads both). The returned function
// writes them; it runs when the command returns, so a profile needs a clean
// exit (SIGTERM or SIGINT, not SIGKILL). Both unset, it does nothing.
func startProfiles() (stop func(), err error) {
	cpuPath, memPath := os.Getenv("SAMSA_CPUPROFILE"), os.Getenv("SAMSA_MEMPROFILE")
	var cpu *os.File
	if cpuPath != "" {
		if cpu, err = os.Create(cpuPath); err != nil {
			return nil, fmt.Errorf("SAMSA_CPUPROFILE: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("SAMSA_CPUPROFILE: %w", err)
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if memPath != "" {
			writeHeapProfile(memPath)
		}
	}, nil
}

func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "SAMSA_MEMPROFILE: %v\n", err)
		return
	}
	defer f.Close()
	runtime.GC() // the heap as it is, not as of the last collection
	if err := pprof.WriteHeapProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "SAMSA_MEMPROFILE: %v\n", err)
	}
}
