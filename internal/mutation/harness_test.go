package mutation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/testfiles"
)

const good = `# a comment
[scale-halved]
file: privacy/x.go
pkgs: ./privacy/x ./agents/y
run: ^TestA$
why: halves the noise
find: b := 2 * base
replace: b := base

[multi-line]
file: a/b.go
pkgs: ./a
why: quoted values
find: "\tif x {\n\t\treturn\n\t}"
replace: ""
`

func TestParse(t *testing.T) {
	ms, err := Parse(strings.NewReader(good), "good.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("got %d mutants, want 2", len(ms))
	}
	m := ms[0]
	if m.ID != "scale-halved" || m.File != "privacy/x.go" || strings.Join(m.Pkgs, ",") != "./privacy/x,./agents/y" ||
		m.Run != "^TestA$" || m.Why != "halves the noise" || m.Find != "b := 2 * base" || m.Replace != "b := base" || m.Line != 2 {
		t.Errorf("first mutant parsed as %+v", m)
	}
	if ms[1].Find != "\tif x {\n\t\treturn\n\t}" || ms[1].Replace != "" || ms[1].Run != "" {
		t.Errorf("second mutant parsed as %+v", ms[1])
	}
}

func TestParseErrors(t *testing.T) {
	hdr := "[m]\nfile: a.go\npkgs: ./a\nwhy: w\n"
	cases := []struct {
		name, in, want string
	}{
		{"missing find", hdr + "replace: x\n", `mutant "m": missing key "find"`},
		{"missing replace", hdr + "find: x\n", `missing key "replace"`},
		{"empty find", hdr + "find: \"\"\nreplace: x\n", "find must not be empty"},
		{"identity", hdr + "find: x\nreplace: x\n", "replace equals find"},
		{"duplicate id", hdr + "find: x\nreplace: y\n" + hdr + "find: x\nreplace: y\n", `mutant id "m" already used at line 1`},
		{"unknown key", hdr + "find: x\nreplace: y\nfnd: z\n", `unknown key "fnd"`},
		{"key twice", hdr + "find: x\nfind: y\nreplace: z\n", `key "find" given twice`},
		{"bad quote", hdr + "find: \"x\nreplace: y\n", "bad quoted string"},
		{"before header", "file: a.go\n", "before the first [id] header"},
		{"bad id", "[Bad Id]\n", "must match"},
		{"no colon", "[m]\nfile a.go\n", `want "key: value"`},
		{"abs file", "[m]\nfile: /etc/x.go\n", "relative slash path"},
		{"escaping file", "[m]\nfile: ../x.go\n", "relative slash path"},
		{"bad pkg", "[m]\npkgs: privacy/noise\n", "./relative pattern"},
		{"bad run", "[m]\nrun: (\n", "run:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.in), "in.txt")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse error = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestApply(t *testing.T) {
	src := []byte("a := 1\nb := 2\nb := 2\n")
	cases := []struct {
		name, find, want, err string
	}{
		{"once", "a := 1", "a := 3\nb := 2\nb := 2\n", ""},
		{"missing", "c := 1", "", `mutant "m": find text "c := 1" occurs 0 times in f.go, want exactly 1`},
		{"twice", "b := 2", "", "occurs 2 times"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Apply(src, Mutant{ID: "m", File: "f.go", Find: c.find, Replace: "a := 3"})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Apply error = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("Apply = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestCheckReportsEveryRottenMutant(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.go"), []byte("x := 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ms := []Mutant{
		{ID: "ok", File: "f.go", Find: "x := 1", Replace: "x := 2"},
		{ID: "moved", File: "f.go", Find: "y := 1", Replace: "y := 2"},
		{ID: "gone", File: "g.go", Find: "x", Replace: "y"},
	}
	err := Check(dir, ms)
	if err == nil {
		t.Fatal("Check passed a list with a missing find text and a missing file")
	}
	for _, want := range []string{`mutant "moved"`, `mutant "gone"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check error %q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), `"ok"`) {
		t.Errorf("Check error %q names the applicable mutant", err)
	}
}

func TestSelect(t *testing.T) {
	ms := []Mutant{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	got, err := Select(ms, "c, a")
	if err != nil || len(got) != 2 || got[0].ID != "c" || got[1].ID != "a" {
		t.Errorf("Select(c, a) = %v, %v", got, err)
	}
	if _, err := Select(ms, "a,zz"); err == nil || !strings.Contains(err.Error(), "zz") {
		t.Errorf("Select with an unknown id: err = %v", err)
	}
	if got, _ := Select(ms, ""); len(got) != 3 {
		t.Errorf("Select(\"\") returned %d mutants, want all 3", len(got))
	}
}

// families are the packages the committed list must mutate (issue 10 item 7: all families
// and the privacy packages).
var families = []string{"privacy/noise/", "privacy/counter/", "privacy/accounting/",
	"agents/tabular/", "agents/linmdp/", "agents/linmix/", "agents/lq/"}

// TestCommittedList keeps mutants.txt honest in every `go test ./...`: it parses, it has at
// least 25 mutants covering every family and privacy package, every mutated file is non-test
// Go source, every listed package exists, and every find text occurs exactly once in the
// current tree (so moved code is noticed here, not when the tagged harness runs).
func TestCommittedList(t *testing.T) {
	ms, err := ParseFile("mutants.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 25 {
		t.Errorf("mutants.txt has %d mutants, want at least 25", len(ms))
	}
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(root, ms); err != nil {
		t.Errorf("mutants.txt does not apply to the tree:\n%v", err)
	}
	covered := map[string]bool{}
	for _, m := range ms {
		if !strings.HasSuffix(m.File, ".go") || strings.HasSuffix(m.File, "_test.go") {
			t.Errorf("mutant %q mutates %s, want a non-test .go file", m.ID, m.File)
		}
		if m.Why == "" {
			t.Errorf("mutant %q has no why", m.ID)
		}
		for _, p := range m.Pkgs {
			dir := strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/...")
			if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() {
				t.Errorf("mutant %q lists package %s, which is not a directory of the module", m.ID, p)
			}
		}
		for _, f := range families {
			if strings.HasPrefix(m.File, f) {
				covered[f] = true
			}
		}
	}
	for _, f := range families {
		if !covered[f] {
			t.Errorf("no mutant mutates %s", f)
		}
	}
}

// TestRunnerEndToEnd runs the harness on a tiny module: a mutant its test catches, one the
// test misses, one that does not build, and the baseline.
func TestRunnerEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/tiny\n\ngo 1.21\n",
		"tiny/tiny.go":   "package tiny\n\n// Scale is a noise scale.\nfunc Scale(eps float64) float64 { return 2 / eps }\n\n// Unused is not tested.\nfunc Unused() int { return 1 }\n",
		"tiny/t_test.go": "package tiny\n\nimport \"testing\"\n\nfunc TestScale(t *testing.T) {\n\tif Scale(1) != 2 {\n\t\tt.Fatal(\"scale\")\n\t}\n}\n",
	}
	testfiles.Write(t, root, files, 0o644)
	var names []string
	for name := range files {
		names = append(names, name)
	}
	ms := []Mutant{
		{ID: "halved", File: "tiny/tiny.go", Find: "2 / eps", Replace: "1 / eps", Pkgs: []string{"./tiny"}},
		{ID: "untested", File: "tiny/tiny.go", Find: "return 1 }", Replace: "return 2 }", Pkgs: []string{"./tiny"}},
		{ID: "nobuild", File: "tiny/tiny.go", Find: "2 / eps", Replace: "2 / undefinedName", Pkgs: []string{"./tiny"}},
		{ID: "rotten", File: "tiny/tiny.go", Find: "3 / eps", Replace: "1 / eps", Pkgs: []string{"./tiny"}},
	}
	r := &Runner{Root: root, Files: names, Scratch: t.TempDir(), Workers: 2, Timeout: 2 * time.Minute}
	base := r.Baseline(ms)
	if len(base) != 1 || base[0].Status != Survived || len(base[0].Ran) != 1 || base[0].Ran[0] != "TestScale" {
		t.Fatalf("baseline = %+v, want one passing command that ran TestScale", base)
	}
	ms[1].Run = "^TestScale$"
	ms[2].Run = "^TestNothing$"
	base = r.Baseline(ms)
	if len(base) != 2 || base[0].Status != Survived || base[1].Status != HarnessError || !strings.Contains(base[1].Detail, `mutant "nobuild": -run "^TestNothing$" matches none`) {
		t.Fatalf("baseline with a pattern matching nothing = %+v, want a harness error naming the mutant", base)
	}
	ms[1].Run, ms[2].Run = "", ""
	want := []Status{Caught, Survived, HarnessError, HarnessError}
	res := r.Run(ms)
	for i, x := range res {
		if x.Status != want[i] {
			t.Errorf("mutant %s: status %s, want %s (%s)", x.Mutant.ID, x.Status, want[i], x.Detail)
		}
	}
	if len(res[0].Failed) != 1 || res[0].Failed[0] != "TestScale" {
		t.Errorf("caught mutant: failed tests %v, want [TestScale]", res[0].Failed)
	}
	if !strings.Contains(res[3].Detail, `mutant "rotten"`) {
		t.Errorf("rotten mutant detail %q does not name it", res[3].Detail)
	}
	if tab := Table(res); !strings.Contains(tab, "score: 1/4 caught") {
		t.Errorf("table does not state the score:\n%s", tab)
	}
}
