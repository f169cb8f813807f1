package tabulartest

import (
	"path/filepath"
	"testing"

	"github.com/dprl/dprl/model/tabular"
)

// TestRiverSwimFile: the file written in either format loads back as the RiverSwim it wrote.
func TestRiverSwimFile(t *testing.T) {
	want, err := tabular.RiverSwim(5)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "yaml"} {
		p := RiverSwimFile(t, t.TempDir(), "rs."+format, 5, format)
		if filepath.Base(p) != "rs."+format {
			t.Errorf("%s: path %s", format, p)
		}
		m, err := tabular.Load(p)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if m.S != want.S || m.A != want.A || m.H != want.H {
			t.Errorf("%s: loaded S, A, H = %d, %d, %d, want %d, %d, %d", format, m.S, m.A, m.H, want.S, want.A, want.H)
		}
	}
}
