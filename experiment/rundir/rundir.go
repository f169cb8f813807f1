// Package rundir holds what every experiment family shares about its run directory: the
// provenance recorded in each manifest (dprl and Go versions, the git commit from the build
// information, the SHA-256 of every input file), the preparation of the directory (a run never
// leaves a mix of its files and an earlier run's, and never overwrites or removes a file dprl
// did not write: see Prepare and RecordDir), the lock that keeps two runs out of one directory
// (Lock), the validation of output paths (CheckDir) and of output names taken from
// configurations, and JSON numbers that may be undefined (NaN/Inf never reach JSON).
//
// The manifest of every family is written last, after every other file (curves, figures,
// summaries); its presence means the run directory is complete.
package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/internal/boundedread"
)

// Version is the dprl version recorded in every manifest.
const Version = "0.1.0"

// Unknown is recorded for a provenance field the build does not carry (for example the git
// commit of a test binary or of a build outside a git checkout).
const Unknown = "unknown"

// Input is one file a run read (a configuration or a model file), with its SHA-256.
type Input struct {
	// Role says what the file is ("config", "env", "system", …).
	Role string `json:"role"`
	// Path is the path as given by the user.
	Path string `json:"path"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256" jsonschema:"pattern=^[0-9a-f]{64}$"`
}

// HashFile returns the Input record of the file at path.
func HashFile(role, path string) (Input, error) {
	f, err := boundedread.Open(path, boundedread.DefaultLimit) // never a FIFO or a device
	if err != nil {
		return Input{}, fmt.Errorf("%s file: %w", role, err)
	}
	defer f.Close() // read-only
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return Input{}, fmt.Errorf("%s file %s: %w", role, path, err)
	}
	return Input{Role: role, Path: path, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// HashBytes returns the Input record of a file whose bytes were already read (hash what was
// parsed, not what the file holds later).
func HashBytes(role, path string, data []byte) Input {
	s := sha256.Sum256(data)
	return Input{Role: role, Path: path, SHA256: hex.EncodeToString(s[:])}
}

// Provenance is the part of every manifest that says what produced the run.
type Provenance struct {
	// Dprl is the dprl version (Version) and Go the Go toolchain version.
	Dprl string `json:"dprl_version"`
	Go   string `json:"go_version"`
	// Module is the main module's version from the build information ("(devel)" for a build
	// from a checkout), or Unknown.
	Module string `json:"module_version"`
	// GitCommit is vcs.revision and GitModified vcs.modified ("true"/"false") of the build
	// information, Unknown when the build carries none (go test, go run, builds outside git).
	GitCommit   string `json:"git_commit"`
	GitModified string `json:"git_modified"`
	// Inputs are the files the run read, each with its SHA-256 (empty when none).
	Inputs []Input `json:"inputs"`
}

// NewProvenance returns the provenance of this binary with the given inputs (sorted by role
// then path; duplicates removed).
func NewProvenance(inputs []Input) Provenance {
	bi, ok := debug.ReadBuildInfo()
	return provenance(bi, ok, inputs)
}

// provenance builds a Provenance from build information (testable without a real build).
func provenance(bi *debug.BuildInfo, ok bool, inputs []Input) Provenance {
	p := Provenance{Dprl: Version, Go: runtime.Version(), Module: Unknown, GitCommit: Unknown, GitModified: Unknown}
	if ok && bi != nil {
		if bi.Main.Version != "" {
			p.Module = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if s.Value != "" {
					p.GitCommit = s.Value
				}
			case "vcs.modified":
				if s.Value != "" {
					p.GitModified = s.Value
				}
			}
		}
	}
	seen := map[Input]bool{}
	p.Inputs = []Input{}
	for _, in := range inputs {
		if !seen[in] {
			seen[in] = true
			p.Inputs = append(p.Inputs, in)
		}
	}
	sort.SliceStable(p.Inputs, func(i, j int) bool {
		if p.Inputs[i].Role != p.Inputs[j].Role {
			return p.Inputs[i].Role < p.Inputs[j].Role
		}
		return p.Inputs[i].Path < p.Inputs[j].Path
	})
	return p
}

// Options are the output options shared by every family.
type Options struct {
	// Force lets a run replace an earlier run in its output directory: the files an earlier
	// dprl run wrote there (its ownership record lists them) are removed first, and nothing
	// else (see Prepare). Without it such a directory is refused. The CLI exposes it as
	// --force.
	Force bool
	// Inputs are files read before the run (the configuration file); the family adds the model
	// files it loads itself.
	Inputs []Input
	// LogY selects the y axis of regret figures: "auto" (default: logarithmic when the final
	// values of the curves differ by more than a factor AutoLogRatio), "log" or "linear". The
	// CLI exposes it as --log-y auto|log|linear.
	LogY string
	// BeforeManifest, when set, is called by WriteManifest with the directory of the manifest
	// just before writing it, after every other file of that directory (the engine writes
	// meta.json, config.resolved.yaml and regret_long.csv here). Nil does nothing.
	BeforeManifest func(dir string) error
}

// WriteManifest calls o.BeforeManifest(dir) (if set) and then writes man as dir/manifest.json
// (WriteJSON): the manifest stays the last file of a run directory.
func WriteManifest(dir string, o Options, man any) error {
	if o.BeforeManifest != nil {
		if err := o.BeforeManifest(dir); err != nil {
			return err
		}
	}
	return WriteJSON(filepath.Join(dir, "manifest.json"), man)
}

// AutoLogRatio is the ratio of the largest to the smallest positive final value beyond which
// LogY "auto" draws a logarithmic y axis.
const AutoLogRatio = 100

// Validate checks the options; errors name the field.
func (o Options) Validate() error {
	switch o.LogY {
	case "", "auto", "log", "linear":
		return nil
	}
	return fmt.Errorf("log-y: must be auto, log or linear, got %q", o.LogY)
}

// Prepare checks the options (Validate) and then makes dir ready for a run written with them
// (Prepare with o.Force): what a family's Write does before it writes anything.
func (o Options) Prepare(dir string) error {
	if err := o.Validate(); err != nil {
		return err
	}
	return Prepare(dir, o.Force)
}

// UseLogY resolves LogY for curves whose final values are finals (non-positive values are
// ignored; they cannot be drawn on a log axis and do not make curves differ in magnitude).
func (o Options) UseLogY(finals []float64) bool {
	switch o.LogY {
	case "log":
		return true
	case "linear":
		return false
	}
	lo, hi := 0.0, 0.0
	for _, v := range finals {
		if v > 0 {
			if lo == 0 || v < lo {
				lo = v
			}
			hi = max(hi, v)
		}
	}
	return lo > 0 && hi/lo > AutoLogRatio
}

// CheckName checks a name taken from a configuration that becomes part of a file or
// directory name: it must be non-empty, at most 100 bytes, contain no path separator, NUL or
// other control character, and be neither "." nor ".." (so it can never escape the run
// directory). field names the configuration field in the error.
func CheckName(field, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s: must not be empty", field)
	case len(name) > 100:
		return fmt.Errorf("%s: must be at most 100 bytes, got %d", field, len(name))
	case name == "." || name == "..":
		return fmt.Errorf("%s: %q is not allowed (it names a directory, not a file)", field, name)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("%s: %q must not contain a path separator (/ or \\)", field, name)
	case filepath.IsAbs(name):
		return fmt.Errorf("%s: %q must not be an absolute path", field, name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%s: %q must not contain NUL or control characters", field, name)
		}
	}
	return nil
}

// Within returns filepath.Join(dir, rel) after checking that rel is local (it stays inside
// dir): a last line of defence for every file a run writes.
func Within(dir, rel string) (string, error) {
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("output file %q would leave the run directory", rel)
	}
	return filepath.Join(dir, rel), nil
}

// Number is a float64 for JSON output that may be undefined: NaN and ±Inf marshal as null
// (encoding/json refuses them), finite values exactly as a float64. A struct holding Numbers
// states why a null is null in an "undefined" map (field → reason), see Undefined.
type Number float64

// MarshalJSON implements json.Marshaler.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// Defined reports whether n is finite.
func (n Number) Defined() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// Undefined collects, per JSON field, why a number is undefined (null).
type Undefined map[string]string

// Set records reason for field when v is not finite, and returns v as a Number.
func (u *Undefined) Set(field string, v float64, reason string) Number {
	n := Number(v)
	if !n.Defined() {
		if *u == nil {
			*u = Undefined{}
		}
		(*u)[field] = reason
	}
	return n
}

// NoCI is the reason recorded, and the text printed, for the confidence interval of a single
// run.
const NoCI = "n=1, no CI"

// CI returns the 95 % confidence interval at index i of a band as JSON numbers: both are NaN
// (null) with a single run (band.N == 1), where no interval exists.
func CI(n int, lo, hi float64) (Number, Number) {
	if n == 1 {
		return Number(math.NaN()), Number(math.NaN())
	}
	return Number(lo), Number(hi)
}

// FormatCI formats a 95 % interval for text ("[lo, hi]" with verb, or NoCI for one run).
func FormatCI(n int, verb string, lo, hi float64) string {
	if n == 1 {
		return NoCI
	}
	return fmt.Sprintf("["+verb+", "+verb+"]", lo, hi)
}

// WriteJSON marshals v (indented) and writes it atomically to path.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return atomicfile.WriteBytes(path, append(data, '\n'), 0o644)
}

// MergeInputs appends the inputs of add not already in dst and returns the result (the command
// line and the configuration may both name the same file; a manifest lists it once).
func MergeInputs(dst, add []Input) []Input {
next:
	for _, a := range add {
		for _, d := range dst {
			if d == a {
				continue next
			}
		}
		dst = append(dst, a)
	}
	return dst
}
