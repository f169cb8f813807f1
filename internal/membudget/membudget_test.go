package membudget

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"3GiB": 3 << 30, "3G": 3 << 30, "512MiB": 512 << 20, "1.5GiB": 3 << 29, "2GB": 2e9,
		"100": 100, "64 MiB": 64 << 20, "1TiB": 1 << 40, "10kb": 10000, "7b": 7} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GiB", "-1GiB", "3 parsecs", "1e3", "9999999TiB", "1..2G"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

func TestDefaultBudget(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		l    limits
		want int64
		src  string
	}{
		{limits{memTotal: 24 * gib}, 18 * gib, "3/4 of MemTotal"},
		{limits{memTotal: 24 * gib, cgroup: 4 * gib}, 3 * gib, "3/4 of cgroup memory.max"},
		{limits{memTotal: 24 * gib, rlimitAS: 3 * gib, vmSize: gib}, (2*gib - asReserve) / 4 * 3, "3/4 of RLIMIT_AS"},
		{limits{memTotal: 24 * gib, rlimitData: 2 * gib, vmData: gib / 2}, (3*gib/2 - asReserve) / 4 * 3, "3/4 of RLIMIT_DATA"},
		{limits{memTotal: 24 * gib, rlimitAS: gib, vmSize: 2 * gib}, MinBudget, "RLIMIT_AS"},
		{limits{}, 8 * gib, "default 8 GiB"},
	} {
		b := c.l.defaultBudget()
		if b.Bytes != c.want || !strings.Contains(b.Source, c.src) {
			t.Errorf("%+v: budget %d (%s), want %d (%s)", c.l, b.Bytes, b.Source, c.want, c.src)
		}
	}
	// An explicit budget is capped by the hard limits, not by the physical memory.
	l := limits{memTotal: 4 * gib, rlimitAS: 3 * gib, vmSize: gib}
	if b := l.capped(Budget{Bytes: 100 * gib, Source: "--memory 100GiB"}); b.Bytes != 2*gib-asReserve || !strings.Contains(b.Source, "capped") {
		t.Errorf("capped: %+v", b)
	}
	if b := l.capped(Budget{Bytes: gib, Source: "x"}); b.Bytes != gib {
		t.Errorf("capped below the limit: %+v", b)
	}
	if d := Default(); d.Bytes < MinBudget || d.Source == "" {
		t.Errorf("Default() = %+v", d)
	}
}

func TestResolve(t *testing.T) {
	t.Setenv(EnvVar, "2GiB")
	if b, err := Resolve("", false); err != nil || b.Bytes != 2<<30 || !strings.Contains(b.Source, EnvVar) {
		t.Errorf("env: %+v %v", b, err)
	}
	if b, err := Resolve("1GiB", true); err != nil || b.Bytes != 1<<30 || !strings.Contains(b.Source, "--memory") {
		t.Errorf("flag over env: %+v %v", b, err)
	}
	if _, err := Resolve("lots", true); err == nil || !strings.Contains(err.Error(), "--memory") {
		t.Errorf("bad flag: %v", err)
	}
	if _, err := Resolve("10MiB", true); err == nil || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("tiny flag: %v", err)
	}
	t.Setenv(EnvVar, "lots")
	if _, err := Resolve("", false); err == nil || !strings.Contains(err.Error(), EnvVar) {
		t.Errorf("bad env: %v", err)
	}
}

func TestCheckAndError(t *testing.T) {
	old := Current()
	defer Set(old)
	Set(Budget{Bytes: 100 << 20, Source: "test"}) // below MinBudget is allowed here
	e := Phases(Terms{{What: "env", Bytes: 10 << 20, Lower: "states"}}, 4, Terms{{What: "curve", Bytes: 50 << 20, Lower: "episodes (--episodes)"}},
		Terms{{What: "curves", Bytes: 30 << 20, Lower: "seeds (--seeds)"}})
	if want := int64(Overhead + (10<<20+4*50<<20)/4*5); e.Bytes != want {
		t.Fatalf("Phases = %d, want %d", e.Bytes, want)
	}
	err := Check("this run", e)
	if !IsError(err) {
		t.Fatalf("Check: %v", err)
	}
	for _, s := range []string{"this run", "--episodes", "workers (--workers)", "104857600 bytes", "test", "--memory", EnvVar} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q: %v", s, err)
		}
	}
	if err := Check("small", FromTerms(Terms{{What: "x", Bytes: 1 << 20}})); err != nil {
		t.Errorf("small estimate refused: %v", err)
	}
	if s := Mul(math.MaxInt64/2, 3); s != math.MaxInt64 {
		t.Errorf("Mul does not saturate: %d", s)
	}
}

// countNodes counts the nodes yaml.v3 builds for data (every document).
func countNodes(t *testing.T, data []byte) int64 {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var n int64
	var walk func(*yaml.Node)
	walk = func(x *yaml.Node) {
		n++
		for _, c := range x.Content {
			walk(c)
		}
	}
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return n
		}
		walk(&doc)
	}
}

// TestYAMLNodesBound checks that YAMLNodes bounds the nodes yaml.v3 builds, on every YAML and
// JSON file of the repository and on documents written to stress the bound.
func TestYAMLNodesBound(t *testing.T) {
	docs := map[string]string{
		"block seq":   "seeds:\n- 1\n- 2\n- 3\n",
		"flow seq":    "seeds: [1, 2, 3]\n",
		"flow map":    "{a, b, c: 1, d}\n",
		"pairs":       "[a: 1, b: 2, c]\n",
		"compact":     "- a: 1\n  b: 2\n- - x\n  - y\n- ? k\n",
		"nulls":       "a:\nb:\nc:\n-\n",
		"anchors":     "a: &x [1, 2]\nb: *x\nc: *x\n",
		"multi":       "a: 1\n---\nb: [1]\n",
		"ended":       "a\n...\nb\n...\nc\n",
		"scalar":      "hello",
		"empty flows": "a: []\nb: {}\nc: [[], [{}]]\n",
		"json":        `{"a": [1, 2, {"b": null}], "c": {"d": [], "e": "x"}}`,
		"block text":  "a: |\n  x: y\n  - z\nb: >\n  folded\n",
		"explicit":    "? [a, b]\n: [c, d]\n? x\n",
	}
	root := "../.."
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(p); !d.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			if b, err := os.ReadFile(p); err == nil && len(b) < 4<<20 {
				docs[p] = string(b)
			}
		}
		return nil
	})
	if len(docs) < 30 {
		t.Fatalf("only %d documents", len(docs))
	}
	for name, doc := range docs {
		real := countNodes(t, []byte(doc))
		bound, _, _ := YAMLNodes([]byte(doc))
		if bound < real {
			t.Errorf("%s: bound %d < %d nodes", name, bound, real)
		}
	}
}

func TestCheckConfigYAML(t *testing.T) {
	var b strings.Builder
	b.WriteString("family: tabular\nagents: [ucbvi]\nseeds:\n")
	for i := 0; i < MaxConfigNodes; i++ {
		b.WriteString("- 1\n")
	}
	err := CheckConfigYAML([]byte(b.String()))
	if err == nil || !strings.HasPrefix(err.Error(), "seeds:") || !strings.Contains(err.Error(), "under seeds:") {
		t.Errorf("CheckConfigYAML: %v", err)
	}
	if err := CheckConfigYAML([]byte("family: tabular\nseeds: [1, 2, 3]\n")); err != nil {
		t.Errorf("small document refused: %v", err)
	}
}

// sink keeps TestLiveHeap's allocations reachable (or not) as the test says; garbage holds
// one allocation at a time.
var (
	sink    [][]byte
	garbage []byte
)

// TestLiveHeap: LiveHeap bounds the live heap from above — what is held counts, whether the
// heap is small (taken as it is) or large (measured after a collection) — and above 16 MiB
// it collects first, so garbage does not count (the collector is off while the garbage is
// made, so without that collection the garbage would be measured).
func TestLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	hold := func(mib int) {
		for range mib {
			sink = append(sink, make([]byte, 1<<20))
		}
	}
	hold(4)
	if got := LiveHeap(); got < 4<<20 {
		t.Errorf("4 MiB held, small heap: LiveHeap = %d, want ≥ %d", got, 4<<20)
	}
	hold(20)
	if got := LiveHeap(); got < 24<<20 {
		t.Errorf("24 MiB held: LiveHeap = %d, want ≥ %d", got, 24<<20)
	}
	sink = nil
	runtime.GC()
	hold(2)
	for range 64 {
		garbage = make([]byte, 1<<20) // the previous one becomes garbage
	}
	garbage = nil
	if got := LiveHeap(); got < 2<<20 || got > 12<<20 {
		t.Errorf("2 MiB held, 64 MiB of garbage: LiveHeap = %d, want in [2 MiB, 12 MiB]", got)
	}
	sink = nil
}
