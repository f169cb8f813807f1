//go:build unix

package tabular

import (
	"testing"

	"github.com/dprl/dprl/internal/boundedread/boundedreadtest"
)

// TestLoadRefusesNonRegularAndLarge: a FIFO without a writer is refused at once (it used to
// block the open forever), as is a directory, and a (sparse) file over the 64 MiB limit.
func TestLoadRefusesNonRegularAndLarge(t *testing.T) {
	boundedreadtest.CheckLoader(t, func(p string) error { _, err := Load(p); return err }, "64 MiB", "testdata/riverswim.yaml")
}
