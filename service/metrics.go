package service

import (
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// httpMetrics counts requests and their latencies per route (Prometheus text format, written
// by hand: a handful of counters and one histogram need no client library).
type httpMetrics struct {
	mu     sync.Mutex
	routes map[string]*routeStats
}

// latencyBuckets are the histogram's upper bounds in seconds.
var latencyBuckets = [...]float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

type routeStats struct {
	codes   map[int]uint64
	buckets [len(latencyBuckets) + 1]uint64
	sum     float64
	count   uint64
}

func newHTTPMetrics() *httpMetrics { return &httpMetrics{routes: map[string]*routeStats{}} }

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(c int) {
	if w.code == 0 {
		w.code = c
	}
	w.ResponseWriter.WriteHeader(c)
}

// Unwrap gives http.ResponseController the connection's writer (write deadlines: backup.go).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// wrap records the status and latency of every request to the route.
func (m *httpMetrics) wrap(pattern string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h(sw, r)
		d := time.Since(t).Seconds()
		m.mu.Lock()
		st := m.routes[pattern]
		if st == nil {
			st = &routeStats{codes: map[int]uint64{}}
			m.routes[pattern] = st
		}
		st.codes[sw.code]++
		i := sort.SearchFloat64s(latencyBuckets[:], d)
		st.buckets[i]++
		st.sum += d
		st.count++
		m.mu.Unlock()
	}
}

func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	var b strings.Builder
	b.WriteString("# HELP dprl_http_requests_total HTTP requests by route and status code.\n# TYPE dprl_http_requests_total counter\n")
	m := s.metrics
	m.mu.Lock()
	pats := make([]string, 0, len(m.routes))
	for p := range m.routes {
		pats = append(pats, p)
	}
	sort.Strings(pats)
	for _, p := range pats {
		st := m.routes[p]
		codes := make([]int, 0, len(st.codes))
		for c := range st.codes {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		for _, c := range codes {
			fmt.Fprintf(&b, "dprl_http_requests_total{route=%q,code=\"%d\"} %d\n", p, c, st.codes[c])
		}
	}
	b.WriteString("# HELP dprl_http_request_duration_seconds Latency of HTTP requests by route.\n# TYPE dprl_http_request_duration_seconds histogram\n")
	for _, p := range pats {
		st := m.routes[p]
		var cum uint64
		for i, le := range latencyBuckets {
			cum += st.buckets[i]
			fmt.Fprintf(&b, "dprl_http_request_duration_seconds_bucket{route=%q,le=\"%g\"} %d\n", p, le, cum)
		}
		fmt.Fprintf(&b, "dprl_http_request_duration_seconds_bucket{route=%q,le=\"+Inf\"} %d\n", p, st.count)
		fmt.Fprintf(&b, "dprl_http_request_duration_seconds_sum{route=%q} %g\n", p, st.sum)
		fmt.Fprintf(&b, "dprl_http_request_duration_seconds_count{route=%q} %d\n", p, st.count)
	}
	m.mu.Unlock()
	type series struct{ name, help, typ string }
	per := []series{
		{"dprl_users_served", "Acknowledged reports (users served) per experiment.", "gauge"},
		{"dprl_capacity_left", "Reports the calibration still admits per experiment.", "gauge"},
		{"dprl_policy_version", "Version of the published policy per experiment.", "gauge"},
		{"dprl_reports_total", "Report submissions per experiment by outcome.", "counter"},
		{"dprl_commit_batches_total", "Group commits per experiment.", "counter"},
		{"dprl_committed_reports_total", "Reports written by group commits per experiment.", "counter"},
	}
	exps := s.all()
	for _, se := range per {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", se.name, se.help, se.name, se.typ)
		for _, x := range exps {
			x.mu.RLock()
			id, c := x.def.ID, x.stats
			users, left, v := x.users, x.served.Session.Capacity()-x.users, x.pub.version
			x.mu.RUnlock()
			switch se.name {
			case "dprl_users_served":
				fmt.Fprintf(&b, "%s{experiment=%q} %d\n", se.name, id, users)
			case "dprl_capacity_left":
				fmt.Fprintf(&b, "%s{experiment=%q} %d\n", se.name, id, left)
			case "dprl_policy_version":
				fmt.Fprintf(&b, "%s{experiment=%q} %d\n", se.name, id, v)
			case "dprl_reports_total":
				for _, o := range []struct {
					k string
					n uint64
				}{{"accepted", c.accepted}, {"replayed", c.replayed}, {"duplicate", c.duplicate}, {"capacity", c.capacity}, {"invalid", c.invalid}} {
					fmt.Fprintf(&b, "%s{experiment=%q,outcome=%q} %d\n", se.name, id, o.k, o.n)
				}
			case "dprl_commit_batches_total":
				fmt.Fprintf(&b, "%s{experiment=%q} %d\n", se.name, id, c.batches)
			case "dprl_committed_reports_total":
				fmt.Fprintf(&b, "%s{experiment=%q} %d\n", se.name, id, c.batched)
			}
		}
	}
	s.storageMetrics(&b)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(&b, "# HELP go_memstats_heap_inuse_bytes Bytes in in-use heap spans.\n# TYPE go_memstats_heap_inuse_bytes gauge\ngo_memstats_heap_inuse_bytes %d\n", ms.HeapInuse)
	fmt.Fprintf(&b, "# HELP go_goroutines Goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines %d\n", runtime.NumGoroutine())
	fmt.Fprintf(&b, "# HELP dprl_uptime_seconds Seconds since the server started.\n# TYPE dprl_uptime_seconds gauge\ndprl_uptime_seconds %g\n", time.Since(s.started).Seconds())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	w.Write([]byte(b.String()))
}

// storageMetrics writes the storage health and the in-flight body budget.
func (s *Server) storageMetrics(b *strings.Builder) {
	since, failures, err := s.storage.state()
	healthy, failing := 1, 0.0
	if err != nil {
		healthy, failing = 0, time.Since(since).Seconds()
	}
	fmt.Fprintf(b, "# HELP dprl_storage_healthy 1 while commits succeed, 0 while they fail (reports are then refused with 503).\n# TYPE dprl_storage_healthy gauge\ndprl_storage_healthy %d\n", healthy)
	fmt.Fprintf(b, "# HELP dprl_storage_failing_seconds Seconds since commits began failing (0 while they succeed).\n# TYPE dprl_storage_failing_seconds gauge\ndprl_storage_failing_seconds %g\n", failing)
	fmt.Fprintf(b, "# HELP dprl_commit_failures_total Failed commits since the server started.\n# TYPE dprl_commit_failures_total counter\ndprl_commit_failures_total %d\n", failures)
	used, limit, refused := s.inflight.state()
	fmt.Fprintf(b, "# HELP dprl_inflight_body_bytes Bytes of request bodies reserved now.\n# TYPE dprl_inflight_body_bytes gauge\ndprl_inflight_body_bytes %d\n", used)
	fmt.Fprintf(b, "# HELP dprl_inflight_body_limit_bytes The budget of request-body bytes in flight (--max-inflight-bytes).\n# TYPE dprl_inflight_body_limit_bytes gauge\ndprl_inflight_body_limit_bytes %d\n", limit)
	fmt.Fprintf(b, "# HELP dprl_inflight_refused_total Requests refused (503) because the body budget was exhausted.\n# TYPE dprl_inflight_refused_total counter\ndprl_inflight_refused_total %d\n", refused)
}
