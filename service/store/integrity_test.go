package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fill creates a database in dir with three experiments of 1000 records each (a few hundred
// pages) and returns its newest meta page.
func fill(t *testing.T, dir string) metaPage {
	t.Helper()
	s := mustOpen(t, dir)
	for e := 0; e < 3; e++ {
		fillExperiment(t, s, fmt.Sprint("e", e), 1000, func(i int) *Record {
			b, j := (i-1)/100, (i-1)%100
			return &Record{User: [32]byte{byte(e), byte(b), byte(j)}, Idem: "k", Report: make([]byte, 200)}
		})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	m0, err0 := parseMeta(b)
	m1, err1 := parseMeta(b[4096:])
	if err0 != nil || err1 != nil {
		t.Fatal(err0, err1)
	}
	if m1.txid > m0.txid {
		m0 = m1
	}
	return m0
}

// openAll opens the store in dir and reads everything a restart reads (every experiment and
// its log); a bbolt panic or a memory fault would crash the test binary.
func openAll(dir string) error {
	s, err := Open(dir, time.Second)
	if err != nil {
		return err
	}
	defer s.Close()
	exps, err := s.Experiments()
	if err != nil {
		return err
	}
	for _, e := range exps {
		if err := s.Replay(e.ID, func(uint64, *Record) error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

// TestDamagedDatabase: an emptied, truncated or overwritten database is refused with a
// *CorruptError naming the file and the problem — never a panic, a fault, nor a silently empty
// store — and its bytes are left exactly as they were.
func TestDamagedDatabase(t *testing.T) {
	base := t.TempDir()
	m := fill(t, base)
	pgid, ps := int64(m.pgid), int64(m.pageSize)
	orig, err := os.ReadFile(filepath.Join(base, FileName))
	if err != nil {
		t.Fatal(err)
	}
	flip := func(off, n int64) func([]byte) []byte {
		return func(b []byte) []byte {
			for i := off; i < off+n; i++ {
				b[i] ^= 0xff
			}
			return b
		}
	}
	for _, c := range []struct {
		name, want string
		damage     func([]byte) []byte
	}{
		{"empty", "empty (0 bytes)", func([]byte) []byte { return nil }},
		{"truncated to one page", "truncated", func(b []byte) []byte { return b[:ps] }},
		{"truncated to two pages", "truncated", func(b []byte) []byte { return b[:2*ps] }},
		{"truncated by one page", "truncated", func(b []byte) []byte { return b[:(pgid-1)*ps] }},
		{"truncated to a third", "truncated", func(b []byte) []byte { return b[:pgid*ps/3] }},
		{"both meta pages", "neither meta page", func(b []byte) []byte { return flip(ps, 64)(flip(0, 64)(b)) }},
		{"the root page", "Page expected", flip(int64(m.root)*ps, 16)},
		{"the freelist page", "freelist", flip(int64(m.freelist)*ps, 16)},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			damaged := c.damage(bytes.Clone(orig))
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			err := openAll(dir)
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want a *CorruptError", err)
			}
			if ce.Path != path || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Storage faults") {
				t.Errorf("the error does not name the file %s, the problem (%q) and the recovery: %v", path, c.want, err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(after, damaged) {
				t.Error("the damaged file was modified")
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("the data directory holds %d entries, want only the damaged file", len(ents))
			}
		})
	}
}

// TestEveryPageFlipped: a page header overwritten anywhere in the file is refused (or, for a
// page no transaction uses, harmless: everything reads back) — never a panic or a fault, and
// the file is never written.
func TestEveryPageFlipped(t *testing.T) {
	base := t.TempDir()
	m := fill(t, base)
	pgid, ps := int64(m.pgid), int64(m.pageSize)
	orig, _ := os.ReadFile(filepath.Join(base, FileName))
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	refused := 0
	for pg := int64(2); pg < pgid; pg += 5 { // every fifth page: the test stays under 2 s
		b := bytes.Clone(orig)
		for i := pg * ps; i < pg*ps+16; i++ {
			b[i] ^= 0xff
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		err := openAll(dir)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Errorf("page %d: %v, want a *CorruptError", pg, err)
		}
		if err != nil {
			refused++
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
			t.Errorf("page %d: the file was modified", pg)
		}
	}
	if refused < int(pgid-2)/10 {
		t.Errorf("only %d of the damaged pages were found", refused)
	}
	t.Logf("%d damaged pages found (the others are free pages)", refused)
}

// TestTornMeta: one invalid meta page (a crash while it was written) is not damage: the other
// is used, with a warning, and nothing is written at open.
func TestTornMeta(t *testing.T) {
	dir := t.TempDir()
	ps := int64(fill(t, dir).pageSize)
	path := filepath.Join(dir, FileName)
	b, _ := os.ReadFile(path)
	m0, _ := parseMeta(b)
	m1, _ := parseMeta(b[ps:])
	newest := int64(0)
	if m1.txid > m0.txid {
		newest = ps
	}
	b[newest+pageHeader+50] ^= 1 // the newest transaction's id
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var warned []string
	s, err := OpenWith(dir, Options{Wait: time.Second, Logf: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "is invalid") {
		t.Errorf("warnings %q, want one about the invalid meta page", warned)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
		t.Error("opening an initialised database wrote to it")
	}
}

// TestTruncatedWhileOpen: a file truncated under an open store gives a *CorruptError on the
// next read (a memory fault turned into an error), and every later operation refuses to run.
func TestTruncatedWhileOpen(t *testing.T) {
	dir := t.TempDir()
	ps := int64(fill(t, dir).pageSize)
	s := mustOpen(t, dir)
	defer s.Close()
	if err := os.Truncate(filepath.Join(dir, FileName), 2*ps); err != nil {
		t.Fatal(err)
	}
	err := s.Replay("e1", func(uint64, *Record) error { return nil })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("replaying a truncated file: %v, want a *CorruptError", err)
	}
	if err := s.Append("e0", 1001, []*Record{{User: [32]byte{9}}}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("an append after the damage was found: %v, want the *CorruptError", err)
	}
}

// TestCallbackPanicNotDamage: a panic of Replay's callback is the caller's, not damage.
func TestCallbackPanicNotDamage(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir)
	s := mustOpen(t, dir)
	defer s.Close()
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the callback's panic", p)
			}
		}()
		s.Replay("e0", func(uint64, *Record) error { panic("boom") })
	}()
	if _, err := s.Experiments(); err != nil {
		t.Errorf("after a callback panic: %v", err)
	}
}

// TestCreateAtomic: a new database is complete when it appears (no temporary file is left),
// and a zero-length file is never taken for a new database.
func TestCreateAtomic(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	key := s.UserKey()
	s.Close()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != FileName {
		t.Errorf("data directory after creation: %v", ents)
	}
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	if _, err := checkFile(filepath.Join(dir, FileName)); err != nil || binary.NativeEndian.Uint32(b[pageHeader:]) != boltMagic {
		t.Fatal(err)
	}
	s = mustOpen(t, dir)
	defer s.Close()
	if s.UserKey() != key || key == ([32]byte{}) {
		t.Error("the user key changed across reopenings")
	}
}

// TestBeforeCommit: an error of the commit hook aborts the append (nothing written).
func TestBeforeCommit(t *testing.T) {
	dir := t.TempDir()
	fail := errors.New("injected")
	var on bool
	s, err := OpenWith(dir, Options{Wait: time.Second, BeforeCommit: func() error {
		if on {
			return fail
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCreate(t, s, "e")
	on = true
	if err := s.Append("e", 1, []*Record{{User: [32]byte{1}}}); !errors.Is(err, fail) {
		t.Fatalf("append with the hook failing: %v", err)
	}
	if seq, _ := s.Contribution("e", [32]byte{1}); seq != 0 {
		t.Error("the aborted append wrote a record")
	}
	on = false
	if err := s.Append("e", 1, []*Record{{User: [32]byte{1}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Probe(); err != nil {
		t.Error(err)
	}
}
