package service

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/internal/strictdecode"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/store"
)

// The API, version 1 (openapi.json is its OpenAPI 3 document, served at /v1/openapi.json and
// checked against these routes by a test).
type route struct {
	pattern string
	h       http.HandlerFunc
}

func (s *Server) routes() []route {
	return []route{
		{"POST /v1/experiments", s.createExperiment},
		{"GET /v1/experiments", s.listExperiments},
		{"GET /v1/experiments/{id}", s.getExperiment},
		{"GET /v1/experiments/{id}/policy", s.getPolicy},
		{"POST /v1/experiments/{id}/reports", s.submitReport},
		{"POST /v1/experiments/{id}/reports/batch", s.submitBatch},
		{"GET /v1/experiments/{id}/ledger", s.getExperiment},
		{"POST /v1/experiments/{id}/credentials", s.mintCredentials},
		{"POST /v1/experiments/{id}/credentials/revoke", s.revokeCredentials},
		{"GET /v1/backup", s.backup},
		{"GET /v1/openapi.json", s.openAPI},
		{"GET /metrics", s.serveMetrics},
		{"GET /healthz", s.health},
		{"GET /readyz", s.ready},
		{"GET /{$}", s.statusPage},
	}
}

// Bounds of the API's inputs (checked before anything is allocated for them).
const (
	// MaxCreateBytes bounds a create request (an inline model included).
	MaxCreateBytes = 8 << 20
	// MaxUserID and MaxIdemKey bound a user ID and an idempotency key (printable ASCII).
	MaxUserID  = 256
	MaxIdemKey = 128
	// MaxCredentialUsers bounds one credentials request.
	MaxCredentialUsers = 10000
)

// apiError is the body of every 4xx/5xx: {"error": {"code", "field", "message"}}.
type apiError struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

type errorBody struct {
	Error apiError `json:"error"`
}

type ack struct {
	Experiment     string `json:"experiment"`
	Sequence       uint64 `json:"sequence"`
	IdempotencyKey string `json:"idempotency_key"`
	Replayed       bool   `json:"replayed,omitempty"`
	// PolicyVersion is the version of the policy published when the report was acknowledged
	// (after it was received): a client holding that version need not fetch the policy again.
	PolicyVersion uint64 `json:"policy_version"`
}

// policyResponse is the published policy as the client reads it (client.Policy, one
// definition of its wire format), with the agent's user side.
type policyResponse struct {
	client.Policy
	// UserSide are the public parameters a user needs to build her report beyond the header
	// (an LDP agent's randomiser: σ, clipping, layout), when the agent has any.
	UserSide any `json:"user_side,omitempty"`
}

// ledgerResponse is an experiment's public state: its guarantee and its counts.
type ledgerResponse struct {
	Experiment string    `json:"experiment"`
	Created    time.Time `json:"created"`
	Family     string    `json:"family"`
	Agent      string    `json:"agent"`
	// Kind is the reports' kind: trajectory (a trusted JDP curator) or privatized (LDP).
	Kind            string  `json:"kind"`
	Epsilon         float64 `json:"epsilon"`
	Delta           float64 `json:"delta"`
	Mu              float64 `json:"mu,omitempty"`
	AchievedEpsilon float64 `json:"achieved_epsilon,omitempty"`
	Statement       string  `json:"statement"`
	Guarantee       any     `json:"guarantee"`
	Capacity        int     `json:"capacity"`
	UsersServed     int     `json:"users_served"`
	CapacityLeft    int     `json:"capacity_left"`
	PolicyVersion   uint64  `json:"policy_version"`
	// Episodes is K, the users the agent was configured for (its constants depend on it;
	// Capacity is the users whose reports the calibration covers: K or K − 1).
	Episodes int `json:"episodes"`
	// Env names the environment description the agent was built for (an inline model is
	// not repeated).
	Env struct {
		Name   string             `json:"name,omitempty"`
		Params map[string]float64 `json:"params,omitempty"`
	} `json:"env"`
	// Releases are the policy versions with the number of users served when each was
	// published (the last 1000).
	Releases []versionAt `json:"releases"`
	// Simulated is the cumulative regret simulated clients reported (public: a simulator's
	// exact evaluation of published policies), at most ~230 points.
	Simulated []curvePoint `json:"simulated_regret,omitempty"`
	Seeded    bool         `json:"seeded_test_mode,omitempty"`
	// Private is true only when the agent's own accountant certifies Epsilon and Delta
	// (engine.Served.PrivateAt); otherwise Epsilon, Delta and Mu are 0 and Statement starts
	// with NON-PRIVATE.
	Private bool `json:"private"`
	// Simulation marks an experiment created as a simulation (simulated users; only its
	// reports carry a simulated regret).
	Simulation bool `json:"simulation"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"encoding the response failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func fail(w http.ResponseWriter, status int, code, field, format string, args ...any) {
	writeJSON(w, status, errorBody{apiError{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}})
}

func reply(w http.ResponseWriter, r result) {
	if e, ok := r.body.(apiError); ok {
		writeJSON(w, r.status, errorBody{e})
		return
	}
	writeJSON(w, r.status, r.body)
}

// digest is SHA-256 of a token: tokens are compared as digests (fixed length) in constant time.
func digest(tok string) [32]byte { return sha256.Sum256([]byte(tok)) }

// bearer checks the request's bearer token against want in constant time. The scheme is
// matched in any case ("bearer", RFC 7235: auth-schemes are case-insensitive).
func bearer(r *http.Request, want [32]byte) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	ok = ok && strings.EqualFold(scheme, "Bearer")
	tok = strings.TrimLeft(tok, " ")
	d := digest(tok)
	return subtle.ConstantTimeCompare(d[:], want[:]) == 1 && ok
}

// authorized reports whether the request's bearer token is want; if not it answers 401 with
// the message need (which token the request needs).
func authorized(w http.ResponseWriter, r *http.Request, want [32]byte, need string) bool {
	if !bearer(r, want) {
		fail(w, http.StatusUnauthorized, "unauthorized", "Authorization", "%s (Authorization: Bearer …)", need)
		return false
	}
	return true
}

// authorizedExperiment checks the bearer token (authorized) and then returns the experiment
// the path names (experimentOf); nil when either check failed and was answered.
func (s *Server) authorizedExperiment(w http.ResponseWriter, r *http.Request, want [32]byte, need string) *experiment {
	if !authorized(w, r, want, need) {
		return nil
	}
	return s.experimentOf(w, r)
}

// userMAC returns HMAC-SHA-256(participation key, purpose ‖ 0 ‖ experiment ‖ 0 ‖ user): the
// user digests of the participation index (never keyed by the rotatable credential key).
func (s *Server) userMAC(purpose, exp, user string) []byte {
	m := hmac.New(sha256.New, s.userKey[:])
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(exp))
	m.Write([]byte{0})
	m.Write([]byte(user))
	return m.Sum(nil)
}

// Credential returns user's credential for experiment exp (what the credentials endpoint
// mints) under the current credential key (credentials.go).
func (s *Server) Credential(exp, user string) string {
	return credential(s.st.CredentialKey(), exp, user)
}

func printable(v string, max int) bool {
	if len(v) == 0 || len(v) > max {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// createRequest is the body of POST /v1/experiments.
type createRequest struct {
	// Family and Agent name the agent (dprl list).
	Family string `json:"family"`
	Agent  string `json:"agent"`
	// Env is the environment description the agent needs: a named environment of the family
	// with its parameters, or "file" with Model, an inline model of the family's file format.
	Env struct {
		Name   string             `json:"name"`
		Params map[string]float64 `json:"params,omitempty"`
		Model  json.RawMessage    `json:"model,omitempty"`
	} `json:"env"`
	// Epsilon and Delta are the guarantee: ε is required for a private experiment (the agent's
	// own accountant must certify (ε, δ), checkLabels) and refused for a non-private one; δ, when
	// given, must lie in (0, 1) (omitted: engine.DefaultDelta, stated in the response).
	Epsilon *float64 `json:"epsilon,omitempty"`
	Delta   *float64 `json:"delta,omitempty"`
	// NonPrivate asks for a non-private experiment (a baseline that claims no guarantee): it is
	// never the default, and it is labelled NON-PRIVATE on the page, the ledger and the API.
	NonPrivate bool `json:"non_private,omitempty"`
	// Simulation marks an experiment whose users are simulated: only its reports may carry a
	// simulated regret (Dprl-Simulated-Regret, simulated_regret), shown on its public curve.
	Simulation bool `json:"simulation,omitempty"`
	// Capacity is K: the number of users the calibration covers.
	Capacity int `json:"capacity"`
	// Seed is allowed only on a server in seeded test mode.
	Seed *uint64 `json:"seed,omitempty"`
}

func (s *Server) createExperiment(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if !authorized(w, r, s.admin, "creating an experiment needs the admin token") || !readJSON(w, r, MaxCreateBytes, &req) {
		return
	}
	spec := engine.RunSpec{Family: req.Family, Name: "served", Agents: []string{req.Agent},
		Runs: engine.Runs{Episodes: req.Capacity, Seeds: []uint64{1}}, Env: engine.EnvSpec{Name: req.Env.Name, Params: req.Env.Params}}
	if req.Agent == "" {
		fail(w, http.StatusBadRequest, "invalid_request", "agent", "agent: required (dprl list names the agents)")
		return
	}
	if bad := checkPrivacyRequest(&req); bad != nil {
		reply(w, *bad)
		return
	}
	if req.Epsilon != nil {
		spec.Privacy.Epsilons = []float64{*req.Epsilon}
	}
	if req.Delta != nil {
		spec.Privacy.Delta = *req.Delta
	}
	def := &store.Experiment{Created: time.Now().UTC(), Simulated: req.Simulation}
	switch {
	case req.Seed != nil && !s.cfg.Seeded:
		fail(w, http.StatusBadRequest, "invalid_request", "seed", "seed: only a server in seeded test mode (dprl serve --seeded) takes a seed; a real experiment's randomness comes from its secret key")
		return
	case req.Seed != nil:
		spec.Seeds, def.Seeded = []uint64{*req.Seed}, true
	default:
		spec.Privacy.Noise = "secure"
		def.Key = make([]byte, 32)
		if _, err := rand.Read(def.Key); err != nil {
			fail(w, http.StatusInternalServerError, "internal", "", "drawing the experiment's key: %v", err)
			return
		}
	}
	id, err := newID()
	if err != nil {
		fail(w, http.StatusInternalServerError, "internal", "", "%v", err)
		return
	}
	def.ID = id
	if (req.Env.Name == "file") != (len(req.Env.Model) > 0) {
		fail(w, http.StatusBadRequest, "invalid_request", "env.model", "env.model: required with env.name file, and only with it")
		return
	}
	if len(req.Env.Model) > 0 && s.cfg.Store != nil {
		// An inline model is kept in this server's data directory, which the other servers of
		// a shared database do not see: a takeover could not rebuild the experiment.
		fail(w, http.StatusBadRequest, "invalid_request", "env.model", "env.model: an inline model is not served from a shared database (--store postgres://…): the other servers could not rebuild the experiment; use a named environment")
		return
	}
	var modelFile string
	if len(req.Env.Model) > 0 {
		modelFile = filepath.Join(s.cfg.Dir, modelPath(id))
		if err := os.MkdirAll(filepath.Dir(modelFile), 0o700); err != nil {
			fail(w, http.StatusInternalServerError, "internal", "", "%v", err)
			return
		}
		if err := atomicfile.WriteBytes(modelFile, req.Env.Model, 0o600); err != nil {
			fail(w, http.StatusInternalServerError, "internal", "", "%v", err)
			return
		}
		spec.Env.File = modelFile
	}
	if err := spec.Validate(); err != nil {
		s.dropModel(modelFile)
		fail(w, http.StatusBadRequest, "invalid_request", specField(err), "%v", err)
		return
	}
	s.mu.RLock()
	n := len(s.exps)
	s.mu.RUnlock()
	if n >= s.cfg.MaxExperiments {
		s.dropModel(modelFile)
		fail(w, http.StatusConflict, "too_many_experiments", "", "this server holds %d experiments, its limit (--max-experiments)", n)
		return
	}
	if _, err := engine.CheckServed(s.cfg.Registry, &spec); err != nil {
		s.dropModel(modelFile)
		fail(w, http.StatusBadRequest, "invalid_request", specField(err), "%v", err)
		return
	}
	stored := spec
	if modelFile != "" {
		stored.Env.File = modelPath(id)
	}
	def.Spec, _ = json.Marshal(stored)
	x, err := newExperiment(s.cfg.Registry, nil, def, s.cfg.Dir, s.cfg.Queue, s.cfg.Logf, s.storage)
	if err != nil {
		s.dropModel(modelFile)
		fail(w, http.StatusBadRequest, "invalid_request", specField(err), "%v", err)
		return
	}
	if bad := checkLabels(x, &req); bad != nil {
		s.dropModel(modelFile)
		reply(w, *bad)
		return
	}
	if err := s.st.Create(def); err != nil {
		s.dropModel(modelFile)
		fail(w, http.StatusInternalServerError, "internal", "", "storing the experiment: %v", err)
		return
	}
	s.add(x)
	s.cfg.Logf("experiment %s created: %s %s, capacity %d", id, spec.Family, req.Agent, x.served.Session.Capacity())
	w.Header().Set("Location", "/v1/experiments/"+id)
	writeJSON(w, http.StatusCreated, x.snapshot())
}

// dropModel removes an inline model this request wrote (and nothing else).
func (s *Server) dropModel(path string) {
	if path != "" {
		os.Remove(path)
	}
}

// specField names the field of a spec error ("episodes: …" → capacity).
func specField(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "experiment "); ok {
		if _, after, ok := strings.Cut(rest, ": "); ok {
			msg = after
		}
	}
	f, _, _ := strings.Cut(msg, ":")
	switch {
	case f == "episodes":
		return "capacity"
	case f == "agents" || strings.HasPrefix(f, "agents["):
		return "agent"
	case strings.HasPrefix(f, "privacy.epsilons"):
		return "epsilon"
	case f == "privacy.delta":
		return "delta"
	case strings.HasPrefix(f, "env.file"):
		return "env.model"
	case strings.Contains(f, " "):
		return ""
	}
	return f
}

// fieldOf extracts the field path strictdecode names ("json: unknown field …" etc.).
func fieldOf(err error) string {
	if fe := (*strictdecode.FieldError)(nil); errors.As(err, &fe) {
		return fe.Field
	}
	if _, after, ok := strings.Cut(err.Error(), `unknown field "`); ok {
		f, _, _ := strings.Cut(after, `"`)
		return f
	}
	f, _, ok := strings.Cut(err.Error(), ":")
	if !ok || strings.Contains(f, " ") {
		return ""
	}
	return f
}

// readBody reads at most max bytes of the request body, answering 413 beyond.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, bool) {
	if r.ContentLength > max {
		fail(w, http.StatusRequestEntityTooLarge, "too_large", "body", "the body has %d bytes, at most %d are accepted", r.ContentLength, max)
		return nil, false
	}
	if !reserveBody(w, r, max) {
		return nil, false
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		fail(w, http.StatusRequestEntityTooLarge, "too_large", "body", "the body exceeds %d bytes", max)
		return nil, false
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "invalid_request", "body", "reading the body: %v", err)
		return nil, false
	}
	return b, true
}

// readJSON reads the body (readBody, at most max bytes) and decodes it strictly into v; it
// answers a body that is too large or does not decode (400 naming the field) and returns false.
func readJSON(w http.ResponseWriter, r *http.Request, max int64, v any) bool {
	body, ok := readBody(w, r, max)
	if !ok {
		return false
	}
	if err := strictdecode.Decode(body, "json", v); err != nil {
		fail(w, http.StatusBadRequest, "invalid_request", fieldOf(err), "%v", err)
		return false
	}
	return true
}

func (s *Server) experimentOf(w http.ResponseWriter, r *http.Request) *experiment {
	id := r.PathValue("id")
	x := s.lookup(id)
	if x == nil {
		fail(w, http.StatusNotFound, "not_found", "id", "no experiment %q on this server", id)
	}
	return x
}

func (s *Server) listExperiments(w http.ResponseWriter, _ *http.Request) {
	out := []ledgerResponse{}
	for _, x := range s.all() {
		out = append(out, x.snapshot())
	}
	writeJSON(w, http.StatusOK, map[string]any{"experiments": out})
}

func (s *Server) getExperiment(w http.ResponseWriter, r *http.Request) {
	if x := s.experimentOf(w, r); x != nil {
		writeJSON(w, http.StatusOK, x.snapshot())
	}
}

func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request) {
	x := s.experimentOf(w, r)
	if x == nil {
		return
	}
	x.mu.RLock()
	p := x.pub
	x.mu.RUnlock()
	w.Header().Set("ETag", p.etag)
	w.Header().Set("Cache-Control", "no-cache")
	if etagMatches(r.Header.Values("If-None-Match"), p.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(p.body)
}

// submitReport is POST /v1/experiments/{id}/reports. The checks run in an order that reveals
// nothing about participation to a caller without the user's credential: client token,
// experiment, the user's credential (all independent of the state), then the body, and only
// then participation and capacity (in the committer).
func (s *Server) submitReport(w http.ResponseWriter, r *http.Request) {
	x := s.authorizedExperiment(w, r, s.client, "submitting a report needs the client token")
	if x == nil {
		return
	}
	sub, bad := s.prepare(x, r.Header.Get("Dprl-User"), r.Header.Get("Dprl-User-Credential"), r.Header.Get("Idempotency-Key"), r.Header.Get("Dprl-Simulated-Regret"), nil)
	if bad != nil {
		reply(w, *bad)
		return
	}
	body, ok := readBody(w, r, x.maxBytes)
	if !ok {
		return
	}
	if bad := s.decode(x, sub, body); bad != nil {
		reply(w, *bad)
		return
	}
	reply(w, x.submit(r.Context(), sub))
}

// prepare checks a submission's identity in an order that reveals nothing about
// participation: the user's credential first (independent of the state), then the
// idempotency key and the simulated regret. field prefixes the fields named in errors (for a
// batch item).
func (s *Server) prepare(x *experiment, user, cred, idem, regretText string, field func(string) string) (*submission, *result) {
	if field == nil {
		field = func(f string) string { return f }
	}
	bad := func(status int, code, f, format string, args ...any) (*submission, *result) {
		return nil, &result{status, apiError{Code: code, Field: field(f), Message: fmt.Sprintf(format, args...)}}
	}
	if !printable(user, MaxUserID) {
		return bad(http.StatusBadRequest, "invalid_request", "Dprl-User", "the user's ID (header Dprl-User): 1 to %d printable ASCII characters", MaxUserID)
	}
	if msg := s.checkCredential(x.def.ID, user, cred); msg != "" {
		return bad(http.StatusForbidden, "forbidden", "Dprl-User-Credential", "%s", msg)
	}
	var ud [32]byte
	copy(ud[:], s.userMAC("dprl/user/v1", x.def.ID, user))
	// A revoked credential is refused exactly as a wrong one, before any participation
	// state is read (credentials.go).
	if x.mayRevoke.Load() {
		revoked, err := s.st.Revoked(x.def.ID, ud)
		if err != nil {
			return bad(http.StatusServiceUnavailable, "storage", "", "reading the revocations: %v", err)
		}
		if revoked {
			return bad(http.StatusForbidden, "forbidden", "Dprl-User-Credential", "%s", wrongCredential)
		}
	}
	if !printable(idem, MaxIdemKey) {
		return bad(http.StatusBadRequest, "invalid_request", "Idempotency-Key", "the idempotency key (header Idempotency-Key): required, 1 to %d printable ASCII characters (retry a report with the same key)", MaxIdemKey)
	}
	if regretText != "" && !x.def.Simulated {
		return bad(http.StatusBadRequest, "invalid_request", "Dprl-Simulated-Regret", "a simulated regret is accepted only by an experiment created as a simulation (simulation: true); real users report none")
	}
	regret := math.NaN()
	if regretText != "" {
		f, err := strconv.ParseFloat(regretText, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e9 {
			return bad(http.StatusBadRequest, "invalid_request", "Dprl-Simulated-Regret", "a simulator's regret (header Dprl-Simulated-Regret): a finite number in [0, 1e9], got %q", regretText)
		}
		regret = f
	}
	sub := &submission{user: ud, idem: idem, regret: regret, done: make(chan result, 1)}
	return sub, nil
}

// decode decodes and validates a report's bytes (JSON or binary) into sub.
func (s *Server) decode(x *experiment, sub *submission, body []byte) *result {
	rep, err := x.dec.Decode(body)
	if err != nil {
		x.count(func(c *counters) { c.invalid++ })
		r := refusal(err)
		return &r
	}
	raw := body
	if !bytes.HasPrefix(body, []byte(protocol.Magic)) {
		if raw, err = protocol.EncodeBinary(rep); err != nil {
			r := refusal(err)
			return &r
		}
	}
	sub.rep, sub.raw = rep, raw
	return nil
}

// MaxBatch is the largest number of reports in one batch submission.
const MaxBatch = 256

// batchItem is one report of a batch submission: the headers of a single submission as
// fields, and the report's JSON.
type batchItem struct {
	User            string          `json:"user"`
	Credential      string          `json:"credential"`
	IdempotencyKey  string          `json:"idempotency_key"`
	SimulatedRegret *float64        `json:"simulated_regret,omitempty"`
	Report          json.RawMessage `json:"report"`
}

type batchResult struct {
	Status int       `json:"status"`
	Ack    *ack      `json:"ack,omitempty"`
	Error  *apiError `json:"error,omitempty"`
}

// submitBatch is POST /v1/experiments/{id}/reports/batch: up to MaxBatch users' reports (for a
// gateway that collects its users' reports, or a simulator), each with its own user,
// credential and idempotency key, checked exactly as a single submission, committed in the
// order given (one group commit) and answered one result per item. A refused item changes no
// state; the others are unaffected.
func (s *Server) submitBatch(w http.ResponseWriter, r *http.Request) {
	x := s.authorizedExperiment(w, r, s.client, "submitting reports needs the client token")
	if x == nil {
		return
	}
	var req struct {
		Reports []batchItem `json:"reports"`
	}
	if !readJSON(w, r, int64(MaxBatch)*(x.maxBytes*2+1024), &req) {
		return
	}
	if len(req.Reports) == 0 || len(req.Reports) > MaxBatch {
		fail(w, http.StatusBadRequest, "invalid_request", "reports", "reports: 1 to %d reports, got %d", MaxBatch, len(req.Reports))
		return
	}
	out := make([]batchResult, len(req.Reports))
	subs := make([]*submission, len(req.Reports))
	for i, it := range req.Reports {
		field := func(f string) string {
			if f == "Dprl-Simulated-Regret" {
				f = "simulated_regret" // the item's field
			}
			return fmt.Sprintf("reports[%d].%s", i, f)
		}
		rt := ""
		if it.SimulatedRegret != nil {
			rt = strconv.FormatFloat(*it.SimulatedRegret, 'g', -1, 64)
		}
		sub, bad := s.prepare(x, it.User, it.Credential, it.IdempotencyKey, rt, field)
		if bad == nil {
			bad = s.decode(x, sub, it.Report)
			if bad != nil {
				if e, ok := bad.body.(apiError); ok {
					e.Field = field(e.Field)
					bad.body = e
				}
			}
		}
		if bad != nil {
			out[i] = itemResult(*bad)
			continue
		}
		subs[i] = sub
	}
	for i, res := range x.submitAll(r.Context(), subs) {
		if subs[i] != nil {
			out[i] = itemResult(res)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": out})
}

func itemResult(r result) batchResult {
	br := batchResult{Status: r.status}
	switch b := r.body.(type) {
	case apiError:
		br.Error = &b
	case ack:
		br.Ack = &b
	}
	return br
}

// credentialsRequest is the body of POST /v1/experiments/{id}/credentials.
type credentialsRequest struct {
	Users []string `json:"users"`
}

func (s *Server) mintCredentials(w http.ResponseWriter, r *http.Request) {
	x, users := s.usersRequest(w, r, "minting credentials needs the admin token")
	if x == nil {
		return
	}
	out := make(map[string]string, len(users))
	for _, u := range users {
		out[u] = s.Credential(x.def.ID, u)
	}
	writeJSON(w, http.StatusOK, map[string]any{"experiment": x.def.ID, "credentials": out})
}

// usersRequest checks the admin token and the experiment and reads a {"users": [ids]} body
// (1 to MaxCredentialUsers printable IDs); nil when a check failed and was answered (need
// names what the token is for).
func (s *Server) usersRequest(w http.ResponseWriter, r *http.Request, need string) (*experiment, []string) {
	x := s.authorizedExperiment(w, r, s.admin, need)
	if x == nil {
		return nil, nil
	}
	var req credentialsRequest
	if !readJSON(w, r, int64(MaxCredentialUsers)*(MaxUserID+8)+1024, &req) {
		return nil, nil
	}
	if len(req.Users) == 0 || len(req.Users) > MaxCredentialUsers {
		fail(w, http.StatusBadRequest, "invalid_request", "users", "users: 1 to %d user IDs, got %d", MaxCredentialUsers, len(req.Users))
		return nil, nil
	}
	for i, u := range req.Users {
		if !printable(u, MaxUserID) {
			fail(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("users[%d]", i), "users[%d]: 1 to %d printable ASCII characters", i, MaxUserID)
			return nil, nil
		}
	}
	return x, req.Users
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	s.healthz(w)
}

func (s *Server) ready(w http.ResponseWriter, _ *http.Request) {
	s.mu.RLock()
	d := s.draining
	s.mu.RUnlock()
	if d {
		fail(w, http.StatusServiceUnavailable, "draining", "", "the server is shutting down")
		return
	}
	if since, _, err := s.storage.state(); err != nil {
		fail(w, http.StatusServiceUnavailable, "storage", "", "commits are failing since %s: %v", since.UTC().Format(time.RFC3339), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// Routes lists the API's routes as "METHOD /path" (for documentation checks).
func Routes() []string {
	var s Server
	var out []string
	for _, r := range s.routes() {
		out = append(out, r.pattern)
	}
	return out
}
