package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestPolicyFromTheClientsCache: a worker whose acknowledgement names a version another worker
// of the client already fetched (or an older one) takes the client's cached policy without a
// request; a version nobody fetched, or a worker's first policy, is fetched; workers that need
// a policy at the same time share one request.
func TestPolicyFromTheClientsCache(t *testing.T) {
	var version, requests atomic.Uint64
	version.Store(7)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		v := version.Load()
		etag := `"` + strconv.FormatUint(v, 10) + `"`
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		json.NewEncoder(w).Encode(Policy{Experiment: "e", Version: v, Rule: json.RawMessage(`[` + strconv.FormatUint(v, 10) + `]`)})
	}))
	defer srv.Close()
	c := New(srv.URL, "", "client-token", nil)
	ctx := context.Background()
	a, b, d := &remote{c: c, exp: "e"}, &remote{c: c, exp: "e"}, &remote{c: c, exp: "e"}
	for _, step := range []struct {
		name     string
		w        *remote
		acked    uint64
		want     uint64
		requests uint64
	}{
		{"a's first policy", a, 0, 7, 1},
		{"b's first policy (revalidated: 304)", b, 0, 7, 2},
		{"d's first policy (revalidated: 304)", d, 0, 7, 3},
		{"a acknowledged at 7: its own copy", a, 7, 7, 3},
		{"a acknowledged at 8: fetched", a, 8, 8, 4},
		{"b acknowledged at 8: a fetched it", b, 8, 8, 4},
		{"b acknowledged at 9: fetched", b, 9, 9, 5},
		{"d acknowledged at 8, the client holds 9: taken", d, 8, 9, 5},
	} {
		version.Store(max(step.acked, 7, version.Load()))
		step.w.acked = step.acked
		v, rule, err := step.w.Policy(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if v != step.want || string(rule) != "["+strconv.FormatUint(step.want, 10)+"]" {
			t.Fatalf("%s: version %d, rule %s; want %d", step.name, v, rule, step.want)
		}
		if n := requests.Load(); n != step.requests {
			t.Fatalf("%s: %d requests so far, want %d", step.name, n, step.requests)
		}
	}
}

// TestSharedPolicyOneRequest: workers that need the policy at the same time send one request.
func TestSharedPolicyOneRequest(t *testing.T) {
	var requests atomic.Uint64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		<-release
		w.Header().Set("ETag", `"3"`)
		json.NewEncoder(w).Encode(Policy{Experiment: "e", Version: 3, Rule: json.RawMessage(`[3]`)})
	}))
	defer srv.Close()
	c := New(srv.URL, "", "client-token", nil)
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			r := &remote{c: c, exp: "e"}
			v, _, err := r.Policy(context.Background())
			if err == nil && v != 3 {
				err = errors.New("version " + strconv.FormatUint(v, 10))
			}
			errs <- err
		}()
	}
	for requests.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the others wait for the request in flight
	close(release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := requests.Load(); got != 1 {
		t.Errorf("%d requests for %d workers at once, want 1", got, n)
	}
}
