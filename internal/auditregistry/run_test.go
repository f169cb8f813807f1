package auditregistry

import (
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/inputerr"
	"github.com/dprl/dprl/privacy/audit"
)

// TestSelect: targets are selected by --all, a family (the names of dprl run or the targets'
// own) or names and patterns; bad selections are bad input naming what is wrong.
func TestSelect(t *testing.T) {
	all, err := Select(true, "", nil)
	if err != nil || len(all) != len(All()) {
		t.Fatalf("all: %d targets, %v", len(all), err)
	}
	for _, fam := range []string{"linmix", "linear-mixture"} {
		sel, err := Select(false, fam, nil)
		if err != nil || len(sel) == 0 || sel[0].Family != "linear-mixture" {
			t.Errorf("family %s: %d targets, %v", fam, len(sel), err)
		}
	}
	sel, err := Select(false, "", []string{"mechanism/laplace", "mechanism/laplace/*"})
	if err != nil || len(sel) < 2 || sel[0].Name != "mechanism/laplace" {
		t.Errorf("names: %v, %v", sel, err)
	}
	for _, c := range []struct {
		all    bool
		family string
		names  []string
		want   string
	}{
		{true, "lq", nil, "--all cannot be combined"},
		{false, "nope", nil, `--family "nope" has no targets`},
		{false, "", []string{"nope/none"}, `unknown target "nope/none"`},
		{false, "", nil, "name targets, a --family, or --all"},
	} {
		if _, err := Select(c.all, c.family, c.names); !inputerr.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want bad input with %q", c, err, c.want)
		}
	}
	var b strings.Builder
	WriteList(&b)
	if !strings.Contains(b.String(), "tabular/dp-ucbvi-jdp/noise-div4") || !strings.Contains(b.String(), "[broken variant]") {
		t.Errorf("list lacks targets:\n%.500s", b.String())
	}
}

// TestRunCheck: the flags of an audit are checked before any run, as bad input naming them;
// the memory estimate covers the outputs, features and runs under way.
func TestRunCheck(t *testing.T) {
	sel, _ := Select(false, "", []string{"mechanism/laplace"})
	ok := Run{Confidence: 0.99, Out: t.TempDir()}
	if err := ok.Check(sel); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r    Run
		want string
	}{
		{Run{Runs: 10, Confidence: 0.99, Out: ok.Out}, "--runs"},
		{Run{Runs: MaxRuns + 1, Confidence: 0.99, Out: ok.Out}, "--runs"},
		{Run{Confidence: 1, Out: ok.Out}, "--confidence"},
		{Run{Confidence: 0.99, Workers: -1, Out: ok.Out}, "--workers"},
		{Run{Confidence: 0.99, Out: ""}, "--out"},
	} {
		if err := c.r.Check(sel); !inputerr.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want bad input naming %s", c.r, err, c.want)
		}
	}
	e := Estimate(sel[0], 1000, 2, 1)
	if len(e) != 3 || e.Sum() <= 0 || e[0].Lower != "--runs" || e[2].Lower != "--workers" {
		t.Errorf("estimate %+v", e)
	}
	var _ audit.Target = sel[0]
}

// TestTargetLog: one line per audited target.
func TestTargetLog(t *testing.T) {
	var b strings.Builder
	TargetLog(&b)(2, 5, audit.Result{Target: "mechanism/laplace", EpsilonLB: 0.5, Claim: audit.Claim{Epsilon: 1}, Seconds: 1.25})
	if !strings.HasPrefix(b.String(), "dprl: audit 2/5 mechanism/laplace") || !strings.Contains(b.String(), "ε_LB = 0.500 (claim 1)") || !strings.HasSuffix(b.String(), "1.2s\n") {
		t.Errorf("%q", b.String())
	}
}
