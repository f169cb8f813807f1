package service

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/internal/boundedread"
)

// TokensFile is the file in the data directory that holds generated tokens.
const TokensFile = "tokens.json"

// Tokens are the admin and client tokens.
type Tokens struct {
	Admin  string `json:"admin"`
	Client string `json:"client"`
}

// LoadTokens returns the tokens: those given (flags or environment) when both are, else the
// data directory's tokens.json, generated (256 random bits each, file mode 0600) on first use.
// generated reports that the file was written now.
func LoadTokens(dir string, given Tokens) (t Tokens, path string, generated bool, err error) {
	if given.Admin != "" && given.Client != "" {
		return given, "", false, nil
	}
	if given.Admin != "" || given.Client != "" {
		return t, "", false, errors.New("tokens: give both the admin and the client token, or neither (then they are generated in the data directory)")
	}
	path = filepath.Join(dir, TokensFile)
	if b, err := boundedread.ReadFile(path, 1<<16); err == nil {
		if err := json.Unmarshal(b, &t); err != nil || len(t.Admin) < MinTokenLength || len(t.Client) < MinTokenLength {
			return t, path, false, fmt.Errorf("%s: not a tokens file of dprl serve", path)
		}
		return t, path, false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return t, path, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return t, path, false, err
	}
	for _, p := range []*string{&t.Admin, &t.Client} {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return t, path, false, err
		}
		*p = hex.EncodeToString(b[:])
	}
	b, _ := json.MarshalIndent(t, "", "  ")
	if err := atomicfile.WriteBytes(path, append(b, '\n'), 0o600); err != nil {
		return t, path, false, err
	}
	return t, path, true, nil
}

// ReadTokens reads the tokens dprl serve generated into the data directory dir (its
// tokens.json): what a client on the server's machine uses. It never generates them.
func ReadTokens(dir string) (Tokens, error) {
	path := filepath.Join(dir, TokensFile)
	var t Tokens
	b, err := boundedread.ReadFile(path, 1<<16)
	if errors.Is(err, os.ErrNotExist) {
		return t, fmt.Errorf("%s does not exist: dprl serve --data %s generates it when it starts without tokens", path, dir)
	}
	if err != nil {
		return t, err
	}
	if err := json.Unmarshal(b, &t); err != nil || len(t.Admin) < MinTokenLength || len(t.Client) < MinTokenLength {
		return Tokens{}, fmt.Errorf("%s: not a tokens file of dprl serve", path)
	}
	return t, nil
}

// Listen holds the address and TLS files of ListenAndServe.
type Listen struct {
	// Addr is host:port (port 0 picks a free port).
	Addr string
	// CertFile and KeyFile enable TLS when both are set.
	CertFile, KeyFile string
	// Drain bounds the graceful shutdown (default 30 s).
	Drain time.Duration
}

// Bound is a listening socket opened, with its TLS certificate loaded, before anything else
// of the server is created (Bind): a busy port or a bad certificate then fails before the data
// directory exists and before "listening" is printed.
type Bound struct {
	ln    net.Listener
	tls   *tls.Config
	drain time.Duration
}

// Bind checks the TLS files — both given or neither, and a certificate and key that load and
// match — and opens the listening socket; its errors name the flag at fault (--tls-cert and
// --tls-key, --addr). The caller serves the result (Serve) or closes it.
func Bind(l Listen) (*Bound, error) {
	if (l.CertFile == "") != (l.KeyFile == "") {
		return nil, errors.New("--tls-cert and --tls-key: give both or neither")
	}
	b := &Bound{drain: l.Drain}
	if b.drain <= 0 {
		b.drain = 30 * time.Second
	}
	if l.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(l.CertFile, l.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert %s and --tls-key %s: not a certificate and its key: %w", l.CertFile, l.KeyFile, err)
		}
		b.tls = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return nil, fmt.Errorf("--addr: %w", err)
	}
	b.ln = ln
	return b, nil
}

// URL is the base URL the bound socket serves (https with a certificate).
func (b *Bound) URL() string {
	if b.tls != nil {
		return "https://" + b.ln.Addr().String()
	}
	return "http://" + b.ln.Addr().String()
}

// Close closes a bound socket that is not served.
func (b *Bound) Close() error { return b.ln.Close() }

// ListenAndServe binds l (Bind) and serves s on it (Serve); s is closed on every path.
func ListenAndServe(ctx context.Context, s *Server, l Listen, ready func(url string)) error {
	b, err := Bind(l)
	if err != nil {
		s.Close()
		return err
	}
	return Serve(ctx, s, b, ready)
}

// start serves h on b (with TLS when b has it) in a goroutine whose Serve error errc receives,
// then calls ready (if not nil) with b's URL.
func (b *Bound) start(h http.Handler, ready func(url string)) (hs *http.Server, errc <-chan error) {
	hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10, TLSConfig: b.tls}
	ec := make(chan error, 1)
	go func() {
		if b.tls != nil {
			ec <- hs.ServeTLS(b.ln, "", "")
		} else {
			ec <- hs.Serve(b.ln)
		}
	}()
	if ready != nil {
		ready(b.URL())
	}
	return hs, ec
}

// Serve runs s on the bound socket b until ctx is cancelled (SIGTERM/SIGINT in dprl serve),
// then stops accepting, lets the requests in flight finish — their reports committed and
// acknowledged —, stops the committers and closes the store. ready receives the server's base
// URL once it serves.
func Serve(ctx context.Context, s *Server, b *Bound, ready func(url string)) error {
	hs, errc := b.start(s.Handler(), ready)
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), b.drain)
	defer cancel()
	serr := hs.Shutdown(sctx)
	cerr := s.Close()
	return errors.Join(serr, cerr)
}
