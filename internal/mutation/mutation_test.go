//go:build mutation

package mutation

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	only    = flag.String("mutation.only", "", "comma-separated mutant ids to run (default: all)")
	workers = flag.Int("mutation.workers", 2, "mutants run at once")
	perMut  = flag.Duration("mutation.timeout", 5*time.Minute, "go test -timeout of one mutant")
	list    = flag.String("mutation.list", "mutants.txt", "the mutant list")
	keep    = flag.Bool("mutation.keep", false, "keep the scratch directory")
)

// TestMutants applies every mutant of mutants.txt, one at a time, to a scratch copy of the
// module and requires the listed tests to fail on each (package doc). It fails if any mutant
// survives, if any mutant cannot be applied or built, or if the unmodified tests fail.
func TestMutants(t *testing.T) {
	start := time.Now()
	ms, err := ParseFile(*list)
	if err != nil {
		t.Fatal(err)
	}
	if ms, err = Select(ms, *only); err != nil {
		t.Fatal(err)
	}
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	files, err := SourceFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := os.MkdirTemp("", "dprl-mutation-")
	if err != nil {
		t.Fatal(err)
	}
	if *keep {
		t.Logf("scratch directory: %s", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}
	// One snapshot of the tree, so that every mutant (and the baseline) sees the same code even
	// if the work tree changes while the harness runs.
	snap := filepath.Join(scratch, "snapshot")
	if err := CopyFiles(root, snap, files); err != nil {
		t.Fatal(err)
	}
	if err := Check(snap, ms); err != nil {
		t.Fatalf("the mutant list does not apply to the tree:\n%v", err)
	}
	r := &Runner{Root: snap, Files: files, Scratch: scratch, Workers: *workers, Timeout: *perMut,
		Log: func(s string) { t.Log(s) }}

	t.Log("baseline: the mutants' tests on the unmodified copy, one command per package")
	bad := false
	for _, b := range r.Baseline(ms) {
		if b.Status != Survived { // a baseline "survives" when its tests pass
			bad = true
			t.Errorf("%s: the unmodified tests of %s (run %q) do not pass (%s):\n%s",
				b.Mutant.ID, strings.Join(b.Mutant.Pkgs, " "), b.Mutant.Run, b.Status, b.Detail)
		}
	}
	if bad {
		t.FailNow()
	}

	t.Logf("mutants: %d, %d at a time", len(ms), r.Workers)
	res := r.Run(ms)
	t.Logf("\n%s", Table(res))
	for _, x := range res {
		switch x.Status {
		case Survived:
			t.Errorf("mutant %s SURVIVED: %s (%s)\n  %s\n%s", x.Mutant.ID, x.Mutant.File, strings.Join(x.Mutant.Pkgs, " "), x.Mutant.Why, x.Detail)
		case HarnessError:
			t.Errorf("mutant %s: harness error:\n%s", x.Mutant.ID, x.Detail)
		}
	}
	t.Logf("total wall time %s", time.Since(start).Round(time.Second))
}
