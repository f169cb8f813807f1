//go:build !unix

package tabular

// cpuSeconds is not measured on this platform (0).
func cpuSeconds() float64 { return 0 }
