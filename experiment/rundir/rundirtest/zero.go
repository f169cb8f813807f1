package rundirtest

import (
	"fmt"
	"strings"
	"testing"
)

// Writer is a family's result that writes its run directory (dir) and returns its manifest M
// and its summary.
type Writer[M any] interface {
	Write(dir string, command []string) (M, string, error)
}

// CheckZeroRegret writes, for one and two seeds, the result whose every curve has zero regret
// (zero) and checks the first entry of the manifest's list: its growth exponent (the key
// growth) is null with a reason and, for one seed, so is the low end of its confidence
// interval (the key ciLo), and the summary says "n=1, no CI" and claims no "95% CI]".
func CheckZeroRegret[M any, R Writer[M]](t *testing.T, zero func(t *testing.T, seeds int) R, list, growth, ciLo string) {
	t.Helper()
	WriteEach(t, []int{1, 2}, func(seeds int, dir string) (string, error) {
		_, summary, err := zero(t, seeds).Write(dir, nil)
		return summary, err
	}, func(seeds int, m map[string]any, summary string) {
		c0 := Entry(t, m, list, 0)
		// growth may name a field of a nested object ("extras.linmix.growth_exponent"): its
		// reason is in that object's own "undefined" map.
		g, path := c0, strings.Split(growth, ".")
		for _, k := range path[:len(path)-1] {
			next, ok := g[k].(map[string]any)
			if !ok {
				t.Fatalf("%s: no object %q in %v", growth, k, g)
			}
			g = next
		}
		CheckUndefined(t, fmt.Sprintf("%d seeds", seeds), g, path[len(path)-1])
		if seeds == 1 {
			CheckUndefined(t, "one seed", c0, ciLo)
			if !strings.Contains(summary, "n=1, no CI") || strings.Contains(summary, "95% CI]") {
				t.Errorf("one-seed summary claims a CI: %s", summary)
			}
		}
	})
}
