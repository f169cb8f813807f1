//go:build unix

package compare

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/boundedread/boundedreadtest"
)

// TestLoadFIFO: a FIFO in the place of regret_long.csv, a curve CSV or config.resolved.yaml is
// refused at once, naming it (opening it for reading would wait for a writer forever).
func TestLoadFIFO(t *testing.T) {
	for _, name := range []string{"regret_long.csv", "curves/x.csv", "config.resolved.yaml"} {
		dir := t.TempDir()
		files := map[string]string{}
		if name == "config.resolved.yaml" {
			files["regret_long.csv"] = longCSV("tabular", []string{"x"}, 2, 2)
		}
		run := writeRun(t, filepath.Join(dir, "run"), files)
		fifo := filepath.Join(run, name)
		if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
			t.Fatal(err)
		}
		boundedreadtest.FIFO(t, fifo)
		var err error
		boundedreadtest.Within(t, name+": Load", 5*time.Second, fifo, func() { _, err = Load([]string{run}, Options{}) })
		if name == "curves/x.csv" {
			// Not a regular file: not a curve file at all.
			mustInput(t, err, "no curves")
		} else {
			mustInput(t, err, fifo, "named pipe")
		}
	}
}
