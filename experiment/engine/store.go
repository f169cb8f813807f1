package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dprl/dprl/internal/atomicfile"
)

// UnitsDir is the subdirectory of a run directory that holds the unit files.
const UnitsDir = "units"

// unitMagic starts every unit file; the format is
//
//	"dprl-unit 1 " ID "\n" payload SHA-256(everything before)
//
// where payload is the gob encoding of the unit's result. A file that does not verify (a
// truncated copy, another unit's file, a different format) is treated as missing and rerun.
const unitMagic = "dprl-unit 1 "

// unitPath is the file of the unit with id in dir.
func unitPath(dir, id string) string { return filepath.Join(dir, UnitsDir, id+".unit") }

// encodeUnit returns the bytes of a unit file.
func encodeUnit(id string, v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(unitMagic + id + "\n")
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("unit %s: encoding the result: %w", id, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// errIncomplete marks a unit file that is missing or does not verify.
var errIncomplete = errors.New("unit file missing or incomplete")

// readUnit returns the payload of the unit file of id in dir, verified.
func readUnit(dir, id string) ([]byte, error) {
	data, err := os.ReadFile(unitPath(dir, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errIncomplete
	}
	if err != nil {
		return nil, err
	}
	return verifyUnit(id, data)
}

// verifyUnit checks a unit file's header and checksum and returns its payload.
func verifyUnit(id string, data []byte) ([]byte, error) {
	head := unitMagic + id + "\n"
	if len(data) < len(head)+sha256.Size || !strings.HasPrefix(string(data[:len(head)]), head) {
		return nil, errIncomplete
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return nil, errIncomplete
	}
	return body[len(head):], nil
}

// complete reports whether the unit file of id in dir exists and verifies.
func complete(dir, id string) bool {
	_, err := readUnit(dir, id)
	return err == nil
}

// writeUnit writes the unit file atomically.
func writeUnit(dir, id string, v any) error {
	data, err := encodeUnit(id, v)
	if err != nil {
		return err
	}
	// No fsync: a unit file carries its own SHA-256, so one torn by a power cut is detected
	// and rerun (kill -9 cannot tear it: the rename is atomic and the data are in the page
	// cache). The fsyncs were most of the engine's cost per unit (issue 11's 2 % budget).
	return atomicfile.WriteBytesNoSync(unitPath(dir, id), data, 0o644)
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
		data, err := encodeUnit(r.id, v)
		if err == nil {
			r.mem.put(r.id, data)
		}
		return err
	}
	return writeUnit(r.dir, r.id, v)
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
		if !complete(dir, u.ID()) {
			out = append(out, i)
		}
	}
	return out
}
