package counter_test

import (
	"strings"
	"testing"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/counter/countertest"
	"github.com/dprl/dprl/privacy/noise"
)

// TestRegistry: the registry lists dprl's four counters, the default is one of them, unknown
// names are refused naming the field and the allowed names, and a new kind is added by
// registering it (here a fake that wraps the tree), after which every registered kind builds a
// counter that reports its factor.
func TestRegistry(t *testing.T) {
	r := counter.NewRegistry()
	if got := strings.Join(r.Names(), ","); got != "blt,honaker,sqrt,tree" {
		t.Fatalf("Names = %s", got)
	}
	if k, err := r.Lookup(""); err != nil || k.Name != counter.DefaultKind {
		t.Fatalf("Lookup(\"\") = %v, %v", k.Name, err)
	}
	if _, err := r.Lookup("nope"); err == nil || !strings.Contains(err.Error(), "privacy.counter") || !strings.Contains(err.Error(), "blt, honaker") {
		t.Errorf("Lookup(nope): %v", err)
	}
	r.Register(counter.Kind{Name: "fake", Doc: "a fake for the recipe test", Build: func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
		return counter.NewGaussianTree(c, s)
	}})
	for _, n := range r.Names() {
		k, err := r.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := k.Factor(3, 16)
		if err != nil || !(f >= 1) {
			t.Errorf("%s: factor %v, %v", n, f, err)
		}
	}
	k, _ := r.Lookup("fake")
	countertest.Run(t, func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
		return k.Build(cfg, src)
	})
}
