package benchfloor

import (
	"bytes"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestFloorAcknowledgesAfterCommit: a report with the client token is acknowledged 201 with
// its sequence only once it is in the database; a wrong token or an oversized body is refused
// and stores nothing; every other request goes to the backend.
func TestFloorAcknowledgesAfterCommit(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "backend "+r.Method+" "+r.URL.Path)
	}))
	defer backend.Close()
	dir := t.TempDir()
	s, err := New(Config{Dir: dir, ClientToken: "client-token-0123456789", Backend: backend.URL})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	post := func(tok, user string, body []byte) (int, string) {
		req, _ := http.NewRequest("POST", hs.URL+"/v1/experiments/e1/reports", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Dprl-User", user)
		req.Header.Set("Idempotency-Key", "k-"+user)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name, tok string
		body      []byte
		want      int
	}{
		{"wrong token", "client-token-wrong-000", []byte("x"), 401},
		{"oversized", "client-token-0123456789", make([]byte, MaxBody+1), 413},
	} {
		if code, body := post(tc.tok, "u0", tc.body); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.want)
		}
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body := post("client-token-0123456789", "u"+string(rune('a'+i%26))+string(rune('a'+i/26)), bytes.Repeat([]byte{byte(i)}, 900)); code != 201 || !strings.Contains(body, `"sequence"`) {
				t.Errorf("report %d: %d %s", i, code, body)
			}
		}()
	}
	wg.Wait()
	resp, err := http.Get(hs.URL + "/v1/experiments/e1/policy")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "backend GET /v1/experiments/e1/policy" {
		t.Errorf("policy request: %q", b)
	}
	hs.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(dir+"/floor.db", 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		n := 0
		tx.Bucket(bLog).ForEach(func(k, v []byte) error {
			n++
			if binary.BigEndian.Uint64(k) != uint64(n) || len(v) != 900+2+3+5 {
				t.Errorf("record %d: key %x, %d bytes", n, k, len(v))
			}
			return nil
		})
		if n != 50 {
			t.Errorf("%d records stored, want 50", n)
		}
		return nil
	})
}
