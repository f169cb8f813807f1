//go:build unix

package tabular

import "syscall"

// cpuSeconds returns the process's user + system CPU time (benchmarks on a shared machine
// report it beside the wall time).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
