package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
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
			cmd.Env = append(os.Environ(), "DPRL_TEST_CLI=1", "DPRL_ADMIN_TOKEN="+testAdmin, "DPRL_CLIENT_TOKEN="+testClient,
				"DPRL_TEST_ARGS="+strings.Join([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0"}, "\x1f"))
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

// TestServeInflightRSS: 300 clients sending maximum-size batch bodies at once (about 3 MB each
// for a riverswim experiment of horizon 10: 900 MB in flight) do not push `dprl serve` beyond
// a few hundred MB — the bytes in flight are bounded (--max-inflight-bytes, 64 MiB by
// default); refused clients retry after 200 to 400 ms until every body was
// read. Without the bound the server's peak resident memory was 1.9 GB.
func TestServeInflightRSS(t *testing.T) {
	longtest.Skip(t, "300 concurrent 3 MB batch bodies against dprl serve, about 20 s")
	useTestTokens(t)
	p := startServeArgs(t, []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"})
	c := client.New(p.url, testAdmin, testClient, nil)
	l := must(t, c.Create, riverSwimJDP(10, 1000, nil, false))
	// The batch route's bound: MaxBatch items of twice the report bound plus 1 KiB.
	maxReport := protocol.MaxBytes(protocol.Header{Family: "tabular", Kind: protocol.KindTrajectory, Dims: protocol.Dims{Horizon: 10}})
	size := service.MaxBatch * (2*maxReport + 1024)
	var body bytes.Buffer
	body.WriteString(`{"reports":[`)
	item := func(i int) string {
		return fmt.Sprintf(`{"user":"u%d","credential":"x","idempotency_key":"k","report":{"pad":"`, i)
	}
	per := (size - 2*len(`{"reports":[]}`)) / service.MaxBatch
	for i := 0; i < service.MaxBatch; i++ {
		if i > 0 {
			body.WriteByte(',')
		}
		s := item(i)
		body.WriteString(s)
		body.WriteString(strings.Repeat("a", per-len(s)-4))
		body.WriteString(`"}}`)
	}
	body.WriteString(`]}`)
	b := body.Bytes()
	if len(b) > size {
		t.Fatalf("body %d bytes, the route's bound is %d", len(b), size)
	}
	url := p.url + "/v1/experiments/" + l.Experiment + "/reports/batch"
	hc := &http.Client{Timeout: 5 * time.Minute}
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	retries := 0
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
				req.Header.Set("Authorization", "Bearer "+testClient)
				resp, err := hc.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				mu.Lock()
				if err == nil && resp.StatusCode != http.StatusServiceUnavailable {
					codes[resp.StatusCode]++
					mu.Unlock()
					return
				}
				retries++
				mu.Unlock()
				time.Sleep(time.Duration(200+i*37%200) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var hwm int
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Sscanf(strings.TrimSpace(v), "%d", &hwm)
		}
	}
	p.stop(t)
	t.Logf("300 concurrent %d-byte batch bodies: answers %v after %d refusals (503/reset); peak RSS of dprl serve %d MiB", len(b), codes, retries, hwm>>10)
	if codes[http.StatusOK] != 300 {
		t.Errorf("answers %v, want 300 × 200", codes)
	}
	if hwm>>10 > 512 {
		t.Errorf("peak RSS %d MiB, want at most 512 MiB", hwm>>10)
	}
}
