package rundir

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/rundir/rundirtest"
	"github.com/dprl/dprl/internal/testfiles"
)

func TestProvenanceFromBuildInfo(t *testing.T) {
	tests := []struct {
		name          string
		bi            *debug.BuildInfo
		ok            bool
		commit, modif string
		module        string
	}{
		{"no build info", nil, false, Unknown, Unknown, Unknown},
		{"test binary (no vcs)", &debug.BuildInfo{}, true, Unknown, Unknown, Unknown},
		{"checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "9ac8a9c0"}, {Key: "vcs.modified", Value: "true"}}}, true, "9ac8a9c0", "true", "(devel)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := provenance(tc.bi, tc.ok, nil)
			if p.GitCommit != tc.commit || p.GitModified != tc.modif || p.Module != tc.module {
				t.Errorf("got commit %q modified %q module %q, want %q %q %q", p.GitCommit, p.GitModified, p.Module, tc.commit, tc.modif, tc.module)
			}
			if p.Dprl != Version || !strings.HasPrefix(p.Go, "go") || p.Inputs == nil {
				t.Errorf("versions/inputs: %+v", p)
			}
		})
	}
	// Under go test there is no vcs information: the commit must say so, not be empty.
	if p := NewProvenance(nil); p.GitCommit == "" || p.GitModified == "" {
		t.Errorf("empty git fields: %+v", p)
	}
}

func TestHashFile(t *testing.T) {
	p := rundirtest.WriteFile(t, t.TempDir(), "m.json", []byte("abc"))
	in, err := HashFile("env", p)
	if err != nil {
		t.Fatal(err)
	}
	// SHA-256("abc"), FIPS 180-2 test vector.
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if in.SHA256 != want || HashBytes("env", p, []byte("abc")) != in {
		t.Errorf("hash %s, want %s", in.SHA256, want)
	}
	if _, err := HashFile("env", p+".missing"); err == nil {
		t.Error("missing file hashed")
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	testfiles.Write(t, "", map[string]string{path: "x"}, 0o644)
}

// TestPrepare: a new directory is created; unrelated files are no earlier run; the files an
// earlier run's record lists (a complete run with a suite block, orphan temporary files of
// listed files) are refused without force and, with force, removed with the directories that
// run created, leaving every other file.
func TestPrepare(t *testing.T) {
	root := t.TempDir()
	// A new directory is created.
	fresh := filepath.Join(root, "a", "b")
	if err := Prepare(fresh, false); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(fresh); err != nil || !st.IsDir() {
		t.Fatal("not created")
	}
	// A directory with unrelated files only is fine.
	touch(t, filepath.Join(fresh, "notes.txt"))
	if err := Prepare(fresh, false); err != nil {
		t.Fatalf("unrelated file refused: %v", err)
	}
	// An earlier run (complete, with a suite block and an orphan temporary file) is refused.
	old := []string{"manifest.json", "summary.md", "regret.png", "regret.svg", "curves/a.csv", "curves/.b.csv.tmp-123",
		"block/manifest.json", "block/curves/x.csv", ".manifest.json.tmp-99"}
	for _, f := range old {
		touch(t, filepath.Join(fresh, f))
	}
	if err := Claim(fresh, "manifest.json", "summary.md", "regret.png", "regret.svg", "curves/a.csv", "curves/b.csv",
		"block/manifest.json", "block/curves/x.csv"); err != nil {
		t.Fatal(err)
	}
	err := Prepare(fresh, false)
	if !errors.Is(err, ErrEarlierRun) || !errors.Is(err, ErrBadOut) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("earlier run: err = %v", err)
	}
	for _, f := range old { // nothing removed without force
		if _, err := os.Stat(filepath.Join(fresh, f)); err != nil {
			t.Fatalf("%s removed without force", f)
		}
	}
	// An orphan temporary file alone (crashed run: its record lists the file being written)
	// is an earlier run too.
	orphan := filepath.Join(root, "o")
	touch(t, filepath.Join(orphan, ".summary.md.tmp-1"))
	if err := Claim(orphan, "summary.md"); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(orphan, false); !errors.Is(err, ErrEarlierRun) {
		t.Fatalf("orphan temp file: err = %v", err)
	}
	// With force every file of the earlier run goes, empty directories too; others stay.
	if err := Prepare(fresh, true); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(fresh)
	var names []string
	for _, e := range ents {
		if e.Name() != RecordDir {
			names = append(names, e.Name())
		}
	}
	if len(names) != 1 || names[0] != "notes.txt" {
		t.Fatalf("after force: %v, want only notes.txt", names)
	}
	// A file in place of the directory is refused.
	f := filepath.Join(root, "file")
	touch(t, f)
	if err := Prepare(f, true); err == nil || !errors.Is(err, ErrBadOut) {
		t.Errorf("a regular file accepted as output directory: %v", err)
	}
}

// TestOptionsPrepare: bad options are refused naming the field before dir is touched; good
// ones prepare dir with their Force (an earlier run is refused without it, removed with it).
func TestOptionsPrepare(t *testing.T) {
	root := t.TempDir()
	bad := filepath.Join(root, "bad")
	if err := (Options{LogY: "cubic"}).Prepare(bad); err == nil || !strings.Contains(err.Error(), "log-y") {
		t.Fatalf("bad log-y: err = %v", err)
	}
	if _, err := os.Stat(bad); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("bad options created the directory: %v", err)
	}
	dir := filepath.Join(root, "run")
	if err := (Options{LogY: "log"}).Prepare(dir); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(dir, "summary.md"))
	if err := Claim(dir, "summary.md"); err != nil {
		t.Fatal(err)
	}
	if err := (Options{}).Prepare(dir); !errors.Is(err, ErrEarlierRun) {
		t.Fatalf("earlier run without force: err = %v", err)
	}
	if err := (Options{Force: true}).Prepare(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("force kept the earlier run's file: %v", err)
	}
}

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"E2", true}, {"JDP eps=0.5 paper", true}, {"ucrl-vtr+/jdp", false}, {"../x", false}, {"..", false}, {".", false},
		{"/etc/passwd", false}, {`a\b`, false}, {"a\x00b", false}, {"", false}, {"tab\there", false}, {strings.Repeat("x", 101), false},
	} {
		err := CheckName("envs[0].name", tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "envs[0].name") {
			t.Errorf("%q: error does not name the field: %v", tc.name, err)
		}
	}
	if _, err := Within("/run", "../x.csv"); err == nil {
		t.Error("Within accepted ../x.csv")
	}
	if p, err := Within("/run", "curves/a.csv"); err != nil || p != "/run/curves/a.csv" {
		t.Errorf("Within: %q, %v", p, err)
	}
}

func TestNumberJSON(t *testing.T) {
	var u Undefined
	v := struct {
		A Number    `json:"a"`
		B Number    `json:"b"`
		C Number    `json:"c"`
		U Undefined `json:"undefined,omitempty"`
	}{A: u.Set("a", math.NaN(), "zero regret"), B: u.Set("b", math.Inf(1), "overflow"), C: u.Set("c", 0.1, "unused")}
	v.U = u
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":null,"b":null,"c":0.1,"undefined":{"a":"zero regret","b":"overflow"}}`
	if string(data) != want {
		t.Errorf("got %s, want %s", data, want)
	}
	lo, hi := CI(1, 3, 3)
	if lo.Defined() || hi.Defined() || FormatCI(1, "%.1f", 3, 3) != NoCI || FormatCI(2, "%.1f", 1, 2) != "[1.0, 2.0]" {
		t.Error("one-run CI must be undefined")
	}
}

func TestUseLogY(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		finals []float64
		want   bool
	}{
		{"", []float64{10, 20}, false}, {"auto", []float64{10, 5000}, true}, {"auto", []float64{0, 10, 900}, false},
		{"log", []float64{1, 1}, true}, {"linear", []float64{1, 1e9}, false},
	} {
		if got := (Options{LogY: tc.mode}).UseLogY(tc.finals); got != tc.want {
			t.Errorf("%q %v: %v, want %v", tc.mode, tc.finals, got, tc.want)
		}
	}
	if (Options{LogY: "sometimes"}).Validate() == nil {
		t.Error("bad log-y accepted")
	}
}

func TestMergeInputs(t *testing.T) {
	a := Input{Role: "config", Path: "a.yaml", SHA256: "1"}
	b := Input{Role: "model", Path: "b.yaml", SHA256: "2"}
	got := MergeInputs([]Input{a}, []Input{b, a, b})
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("MergeInputs = %v, want [a b]", got)
	}
	if got := MergeInputs(nil, nil); len(got) != 0 {
		t.Errorf("MergeInputs(nil, nil) = %v", got)
	}
}
