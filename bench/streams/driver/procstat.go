package main

import "github.com/samsa-io/samsa/bench/internal/procstat"

// What the benchmark drivers share (bench/internal/procstat).
type process = procstat.Process

var (
	startProcess = procstat.Start
	cpuSeconds   = procstat.CPUSeconds
	memory       = procstat.Memory
)
