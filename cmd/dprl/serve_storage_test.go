package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/service/store"
)

// TestServeDamagedDatabase: `dprl serve` on an emptied, truncated or overwritten database stops
// with exit status 2 and a message naming the file, the problem and the recovery — no panic,
// no fault, no silently empty server — and leaves the file and the data directory as they were.
func TestServeDamagedDatabase(t *testing.T) {
	base := t.TempDir()
	s, err := store.Open(base, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(&store.Experiment{ID: "e", Spec: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	for b := 0; b < 10; b++ {
		var recs []*store.Record
		for i := 0; i < 100; i++ {
			recs = append(recs, &store.Record{User: [32]byte{byte(b), byte(i)}, Idem: "k", Report: make([]byte, 300)})
		}
		if err := s.Append("e", uint64(100*b+1), recs); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	orig, err := os.ReadFile(filepath.Join(base, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	// The root page of the newest transaction (its meta page: after the 16-byte page header,
	// magic, version, page size, flags, then the root bucket's page).
	const ps = 4096
	root := func(b []byte) int {
		m0, m1 := b[16:], b[ps+16:]
		m := m0
		if binary.NativeEndian.Uint64(m1[48:]) > binary.NativeEndian.Uint64(m0[48:]) {
			m = m1
		}
		return int(binary.NativeEndian.Uint64(m[16:]))
	}(orig)
	for _, c := range []struct {
		name, want string
		damage     func([]byte) []byte
	}{
		{"empty", "the file is empty", func([]byte) []byte { return nil }},
		{"truncated", "the file is truncated", func(b []byte) []byte { return b[:4*ps] }},
		{"root page overwritten", "is damaged", func(b []byte) []byte {
			for i := root * ps; i < root*ps+16; i++ {
				b[i] ^= 0xff
			}
			return b
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, store.FileName)
			damaged := c.damage(bytes.Clone(orig))
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCLIHelper$")
			cmd.Env = append(os.Environ(), "DPRL_TEST_CLI=1", "DPRL_TEST_ARGS="+strings.Join([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0",
				"--admin-token", testAdmin, "--client-token", testClient}, "\x1f"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := cmd.ProcessState.ExitCode()
			msg := stderr.String()
			if ctx.Err() != nil {
				t.Fatalf("dprl serve did not stop on a damaged database (%v); stdout %q", err, stdout.String())
			}
			if code != 2 || !strings.Contains(msg, path) || !strings.Contains(msg, c.want) || !strings.Contains(msg, "Storage faults") {
				t.Errorf("exit %d, stderr %q; want 2 and a message naming %s, %q and the recovery", code, msg, path, c.want)
			}
			for _, crash := range []string{"panic", "goroutine ", "SIGSEGV", "SIGBUS", "fatal error"} {
				if strings.Contains(msg, crash) {
					t.Errorf("stderr shows a crash (%q):\n%s", crash, msg)
				}
			}
			if strings.Contains(stdout.String(), "listening") {
				t.Error("dprl serve started on a damaged database")
			}
			after, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(after, damaged) {
				t.Errorf("the damaged file was modified (%v)", err)
			}
			ents, _ := os.ReadDir(dir)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if fmt.Sprint(names) != "["+store.FileName+"]" {
				t.Errorf("the data directory holds %v, want only the damaged file", names)
			}
		})
	}
}
