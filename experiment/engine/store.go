package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/internal/boundedread"
)

// UnitsDir is the subdirectory of a run directory that holds the unit files.
const UnitsDir = "units"

// unitMagic starts every unit file; the format is
//
//	"dprl-unit 1 " ID " plan " PLAN "\n" payload SHA-256(everything before)
//
// where payload is the gob encoding of the unit's result and PLAN the digest of the plan whose
// run wrote the file (planDigest). Files written before the plan record existed have the
// header "dprl-unit 1 " ID "\n"; they are still read (their plan is unknown). A file that does
// not verify (a truncated copy, another unit's file, a different format), or that is not a
// regular file or is larger than its unit's bound (unitLimit), is treated as missing and
// rerun; a merge refuses it, and refuses the unit files of another plan (checkUnitFiles).
const unitMagic = "dprl-unit 1 "

// planField introduces the plan digest in a unit file's header.
const planField = " plan "

// maxUnitHeader bounds the header line of a unit file (the magic, a 20-digit ID and a plan
// digest fit many times over).
const maxUnitHeader = 256

// MinUnitLimit is the least size bound of a unit file (256 MiB); a unit of cost c may have a
// file of up to MinUnitLimit + 64·c bytes (rounded up to whole MiB): the families record at
// most a few numbers per episode (≈ 10 bytes per unit of cost), so a larger file is corrupt
// and is refused without being read.
const MinUnitLimit = 256 << 20

// unitLimit is the size bound of unit u's file.
func unitLimit(u Unit) int64 {
	c := max(u.Cost, 0)
	const maxCost = 1 << 40 // beyond every bound the families check; keeps 64·c in range
	if c > maxCost {
		c = maxCost
	}
	return MinUnitLimit + (64*c+(1<<20)-1)>>20<<20
}

// planDigest identifies a plan: the first 20 hex digits of SHA-256 over the family, the
// experiment name and the unit IDs in plan order. Unit files record it, so that a merge can
// tell the units of its plan from those of another sweep run into the same directory.
func planDigest(p *Planned) string {
	h := sha256.New()
	fmt.Fprintf(h, "dprl-plan 1\x00%s\x00%s\x00", p.Family, p.Name())
	for _, u := range p.Units() {
		h.Write([]byte(u.ID()))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// unitPath is the file of the unit with id in dir.
func unitPath(dir, id string) string { return filepath.Join(dir, UnitsDir, id+".unit") }

// encodeUnit returns the bytes of a unit file; plan is the digest of the plan being run.
func encodeUnit(id, plan string, v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(unitMagic + id)
	if plan != "" {
		buf.WriteString(planField + plan)
	}
	buf.WriteByte('\n')
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("unit %s: encoding the result: %w", id, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// errIncomplete marks a unit file that is missing or does not verify.
var errIncomplete = errors.New("unit file missing or incomplete")

// readUnit returns the payload of unit u's file in dir, verified. A file that is not a regular
// file or is larger than unitLimit(u) is not read: it counts as incomplete.
func readUnit(dir string, u Unit) ([]byte, error) {
	data, err := boundedread.ReadFile(unitPath(dir, u.ID()), unitLimit(u))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errIncomplete
	}
	if errors.Is(err, boundedread.ErrNotRegular) || errors.Is(err, boundedread.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %v", errIncomplete, err)
	}
	if err != nil {
		return nil, err
	}
	return verifyUnit(u.ID(), data)
}

// parseHeader splits a unit file's header line (without its newline) into the unit ID and the
// plan digest ("" for a file without a plan record); ok is false for anything else.
func parseHeader(line string) (id, plan string, ok bool) {
	rest, ok := strings.CutPrefix(line, unitMagic)
	if !ok {
		return "", "", false
	}
	id, plan, _ = strings.Cut(rest, planField)
	if id == "" || strings.ContainsAny(id, " \n") || strings.ContainsAny(plan, " \n") {
		return "", "", false
	}
	return id, plan, true
}

// verifyUnit checks a unit file's header and checksum and returns its payload.
func verifyUnit(id string, data []byte) ([]byte, error) {
	nl := bytes.IndexByte(data[:min(len(data), maxUnitHeader)], '\n')
	if nl < 0 || len(data) < nl+1+sha256.Size {
		return nil, errIncomplete
	}
	if got, _, ok := parseHeader(string(data[:nl])); !ok || got != id {
		return nil, errIncomplete
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return nil, errIncomplete
	}
	return body[nl+1:], nil
}

// complete reports whether unit u's file in dir exists and verifies.
func complete(dir string, u Unit) bool {
	_, err := readUnit(dir, u)
	return err == nil
}

// writePlanUnit writes the unit file atomically; plan is the digest of the plan being run.
func writePlanUnit(dir, id, plan string, v any) error {
	data, err := encodeUnit(id, plan, v)
	if err != nil {
		return err
	}
	// No fsync: a unit file carries its own SHA-256, so one torn by a power cut is detected
	// and rerun (kill -9 cannot tear it: the rename is atomic and the data are in the page
	// cache). The fsyncs were most of the engine's cost per unit (issue 11's 2 % budget).
	return atomicfile.WriteBytesNoSync(unitPath(dir, id), data, 0o644)
}

// UnitFileError is a file in a sweep's unit directory that a merge refuses: a unit file of
// another plan, or one that is corrupt (not a regular file, larger than its bound).
type UnitFileError struct {
	// Path is the file.
	Path string
	// Reason says what is wrong and what to do.
	Reason string
}

func (e *UnitFileError) Error() string { return "unit file " + e.Path + ": " + e.Reason }

// checkUnitFiles refuses, before a merge, every file of dir/units that is not a complete-able
// unit file of p: a unit file whose header records another plan, a unit file whose unit is not
// one of p's (a stray file of another sweep), and a corrupt file (not a regular file, or larger
// than its unit's bound), each named. Only headers are read; checksums are Missing's job.
// Temporary files of interrupted writes (".*") and files not named *.unit are ignored.
func checkUnitFiles(p *Planned, dir string) error {
	ents, err := os.ReadDir(filepath.Join(dir, UnitsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no unit at all: Missing names them
	}
	if err != nil {
		return fmt.Errorf("out: %w", err)
	}
	units := make(map[string]Unit, len(p.Units()))
	for _, u := range p.Units() {
		units[u.ID()] = u
	}
	digest := planDigest(p)
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".unit") {
			continue
		}
		path := filepath.Join(dir, UnitsDir, name)
		u, ours := units[strings.TrimSuffix(name, ".unit")]
		limit := int64(MinUnitLimit)
		if ours {
			limit = unitLimit(u)
		}
		head, err := readHeader(path, limit)
		if errors.Is(err, boundedread.ErrNotRegular) || errors.Is(err, boundedread.ErrTooLarge) {
			return &UnitFileError{Path: path, Reason: fmt.Sprintf("corrupt, not read (%v); remove it and rerun its shard", err)}
		}
		if err != nil {
			return fmt.Errorf("out: %w", err)
		}
		id, plan, ok := parseHeader(head)
		switch {
		case !ours && ok:
			return &UnitFileError{Path: path, Reason: fmt.Sprintf("unit %s is not a unit of this sweep (plan %s): it is a unit of another plan, run into the same directory with another configuration; merge with that configuration, or remove the file", id, digest)}
		case !ours:
			return &UnitFileError{Path: path, Reason: fmt.Sprintf("not a unit file of this sweep (plan %s); remove it", digest)}
		case ok && plan != "" && plan != digest:
			return &UnitFileError{Path: path, Reason: fmt.Sprintf("written by a sweep of another plan (plan %s, this sweep's plan is %s: another configuration was run into the same directory); rerun this sweep's shards into a fresh directory, or merge with the configuration of plan %s", plan, digest, plan)}
		}
		// A file of ours that does not parse or verify counts as missing (Missing names it).
	}
	return nil
}

// readHeader returns the first line of the regular file path (at most maxUnitHeader bytes,
// without its newline; "" when there is none), refusing a file that is not regular or is
// larger than limit.
func readHeader(path string, limit int64) (string, error) {
	f, err := boundedread.Open(path, limit)
	if err != nil {
		return "", err
	}
	defer f.Close() // Read-only.
	buf := make([]byte, maxUnitHeader)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", err
	}
	line, _, found := bytes.Cut(buf[:n], []byte{'\n'})
	if !found {
		return "", nil
	}
	return string(line), nil
}

// memStore keeps unit files in memory (RunInMemory); nil means the files are on disk.
type memStore struct {
	mu    sync.Mutex
	files map[string][]byte
}

func (m *memStore) put(id string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[id] = data
}

func (m *memStore) get(id string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.files[id]
	return d, ok
}

// Recorder receives the result of one unit and its progress.
type Recorder struct {
	dir, id  string
	plan     string // digest of the plan being run, recorded in the unit file
	mem      *memStore
	recorded bool
	advance  func(int64)
}

// Record stores the unit's result v (gob-encodable: exported fields, no interfaces) in the
// unit's file, atomically. It may be called once.
func (r *Recorder) Record(v any) error {
	if r.recorded {
		return fmt.Errorf("unit %s: result recorded twice", r.id)
	}
	r.recorded = true
	if r.mem != nil {
		data, err := encodeUnit(r.id, r.plan, v)
		if err == nil {
			r.mem.put(r.id, data)
		}
		return err
	}
	return writePlanUnit(r.dir, r.id, r.plan, v)
}

// Advance reports n more units of cost done (for progress; may be called concurrently by
// one unit only).
func (r *Recorder) Advance(n int64) {
	if r.advance != nil {
		r.advance(n)
	}
}

// Missing returns the units of p (indices) whose files in dir are missing or incomplete.
func Missing(p *Planned, dir string) []int {
	var out []int
	for i, u := range p.Units() {
		if !complete(dir, u) {
			out = append(out, i)
		}
	}
	return out
}
