package service

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// StartForTest builds a server from cfg and serves it behind httptest. The returned stop (also
// a cleanup of t, and harmless when called again) closes the HTTP server, then the server,
// whose Close error fails the test.
func StartForTest(t testing.TB, cfg Config) (*Server, *httptest.Server, func()) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		hs.Close()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(stop)
	return s, hs, stop
}

// DoForTest sends a request (a bearer token unless token is empty, then the headers of hdr)
// and returns the answer, its body read and closed.
func DoForTest(t testing.TB, method, url, token string, body []byte, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
