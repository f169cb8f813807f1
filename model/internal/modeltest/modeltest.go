// Package modeltest holds the pieces the model packages' fuzz tests share: a seed corpus read
// from testdata and the range of an optimal value.
package modeltest

import (
	"math"
	"os"
	"testing"
)

// AddFile adds the model file at path, in format ("json" or "yaml"), to f's seed corpus.
func AddFile(f *testing.F, path, format string) {
	f.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, format)
}

// CheckValue fails unless the optimal value v of a model with rewards in [0, 1] and horizon H
// is in [0, H] (up to 1e-9).
func CheckValue(t *testing.T, v float64, H int) {
	t.Helper()
	if !(v >= -1e-9 && v <= float64(H)+1e-9) || math.IsNaN(v) {
		t.Fatalf("V*_1 = %v outside [0, H = %d]", v, H)
	}
}
