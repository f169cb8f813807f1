// Package benchfloor is the floor of scripts/bench-serve.sh: the least a durable report server
// does for each report `dprl serve` takes, measured with the same client on the same machine.
// It answers POST /v1/experiments/{id}/reports by checking the client token (SHA-256, constant
// time), reading the body (bounded), appending the user, the idempotency key and the body to
// one bbolt log under sequential keys in a group commit (one transaction and fsync for every
// report waiting), and acknowledging each report only after its commit returned. Nothing else:
// no credential, no participation index, no idempotency, no decoding, no curator, no policy.
// Every other request (creating the experiment, minting credentials, the policy the simulated
// users play, the ledger) is passed to a real `dprl serve` (Config.Backend), which does no
// per-report work during the measurement.
package benchfloor

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// MaxBody bounds a report body (dprl's reports at the benchmark's sizes are about 1 KiB).
const MaxBody = 1 << 20

// Config configures a floor server.
type Config struct {
	// Dir is the data directory (floor.db is created in it).
	Dir string
	// ClientToken is the token reports must carry (Authorization: Bearer).
	ClientToken string
	// Backend is the base URL of the dprl serve every other request is passed to.
	Backend string
	// MaxBatch bounds a group commit (default 512, as dprl serve's).
	MaxBatch int
}

// Server is a running floor server.
type Server struct {
	db       *bolt.DB
	client   [32]byte
	proxy    http.Handler
	queue    chan *pending
	maxBatch int
	done     chan struct{}
	once     sync.Once
	stop     chan struct{}
}

type pending struct {
	rec  []byte
	seq  uint64
	err  error
	done chan struct{}
}

var bLog = []byte("log")

// New opens (creating) the floor's database and starts its committer.
func New(cfg Config) (*Server, error) {
	if cfg.ClientToken == "" {
		return nil, errors.New("benchfloor: no client token")
	}
	u, err := url.Parse(cfg.Backend)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("backend: a base URL (http://host:port), got %q", cfg.Backend)
	}
	db, err := bolt.Open(filepath.Join(cfg.Dir, "floor.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, err
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bLog); return err }); err != nil {
		db.Close()
		return nil, err
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 512
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	s := &Server{db: db, client: sha256.Sum256([]byte(cfg.ClientToken)), proxy: rp, queue: make(chan *pending, 4096),
		maxBatch: cfg.MaxBatch, done: make(chan struct{}), stop: make(chan struct{})}
	go s.commit()
	return s, nil
}

// Close stops the committer (after the reports waiting) and closes the database.
func (s *Server) Close() error {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	return s.db.Close()
}

// Handler serves reports and passes everything else to the backend.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/experiments/{id}/reports", s.report)
	mux.Handle("/", s.proxy)
	return mux
}

type ack struct {
	Experiment     string `json:"experiment"`
	Sequence       uint64 `json:"sequence"`
	IdempotencyKey string `json:"idempotency_key"`
	PolicyVersion  uint64 `json:"policy_version"`
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]map[string]string{"error": {"code": code, "message": msg}})
	w.Write(b)
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	d := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(d[:], s.client[:]) != 1 || !strings.EqualFold(scheme, "Bearer") {
		fail(w, http.StatusUnauthorized, "unauthorized", "the client token is needed")
		return
	}
	if r.ContentLength < 0 || r.ContentLength > MaxBody {
		fail(w, http.StatusRequestEntityTooLarge, "too_large", "a report has a Content-Length of at most 1 MiB")
		return
	}
	user, idem := r.Header.Get("Dprl-User"), r.Header.Get("Idempotency-Key")
	if len(user) > 256 || len(idem) > 128 {
		fail(w, http.StatusBadRequest, "invalid_request", "user or idempotency key too long")
		return
	}
	rec := make([]byte, 0, 2+len(user)+len(idem)+int(r.ContentLength))
	rec = append(rec, byte(len(user)))
	rec = append(rec, user...)
	rec = append(rec, byte(len(idem)))
	rec = append(rec, idem...)
	body := rec[len(rec) : len(rec)+int(r.ContentLength)]
	if _, err := io.ReadFull(r.Body, body); err != nil {
		fail(w, http.StatusBadRequest, "invalid_request", "body: "+err.Error())
		return
	}
	p := &pending{rec: rec[:len(rec)+len(body)], done: make(chan struct{})}
	select {
	case s.queue <- p:
	case <-s.stop:
		fail(w, http.StatusServiceUnavailable, "draining", "the server is stopping")
		return
	}
	<-p.done
	if p.err != nil {
		fail(w, http.StatusServiceUnavailable, "storage", p.err.Error())
		return
	}
	b, _ := json.Marshal(ack{Experiment: r.PathValue("id"), Sequence: p.seq, IdempotencyKey: idem})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	w.Write(b)
}

// commit is the group committer: it takes every report waiting (at most maxBatch), appends
// them in one transaction (one fsync) and then answers them.
func (s *Server) commit() {
	defer close(s.done)
	batch := make([]*pending, 0, s.maxBatch)
	for {
		batch = batch[:0]
		select {
		case p := <-s.queue:
			batch = append(batch, p)
		case <-s.stop:
			return
		}
	fill:
		for len(batch) < s.maxBatch {
			select {
			case p := <-s.queue:
				batch = append(batch, p)
			default:
				break fill
			}
		}
		err := s.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bLog)
			b.FillPercent = 1 // sequential keys
			for _, p := range batch {
				seq, err := b.NextSequence()
				if err != nil {
					return err
				}
				p.seq = seq
				if err := b.Put(binary.BigEndian.AppendUint64(nil, seq), p.rec); err != nil {
					return err
				}
			}
			return nil
		})
		for _, p := range batch {
			p.err = err
			close(p.done)
		}
	}
}
