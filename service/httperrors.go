package service

import (
	"net/http"
	"strings"
)

// etagMatches reports whether an If-None-Match field (its values, each a list) matches etag
// under RFC 9110's weak comparison: "*" matches any current policy, and an entity tag matches
// when its opaque tag equals etag's, W/ prefixes ignored ("3", W/"3" and a list holding
// either all match "3").
func etagMatches(fields []string, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, f := range fields {
		for _, t := range strings.Split(f, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || t != "" && strings.TrimPrefix(t, "W/") == want {
				return true
			}
		}
	}
	return false
}

// jsonErrors serves the API through mux, and answers what mux answers itself — an unknown path
// (404) or a method the path does not take (405, with its Allow header) — with the API's JSON
// error body {"error": {"code", "field", "message"}} instead of mux's plain text.
func jsonErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		switch rec.status {
		case http.StatusMethodNotAllowed:
			allow := rec.header.Get("Allow")
			w.Header().Set("Allow", allow)
			fail(w, http.StatusMethodNotAllowed, "method_not_allowed", "method", "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allow)
		case http.StatusNotFound:
			fail(w, http.StatusNotFound, "not_found", "path", "no API route %s (the API is under /v1; GET /v1/openapi.json describes it)", r.URL.Path)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}

// statusRecorder records the status and headers mux's own handlers write (their bodies are
// dropped).
type statusRecorder struct {
	header http.Header
	status int
}

func (s *statusRecorder) Header() http.Header { return s.header }

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return len(b), nil
}
