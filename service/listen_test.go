package service_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/service"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dprl test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return cert, key, pool
}

// TestListenTLSAndDrain: with a certificate the server speaks HTTPS only; cancelling its
// context (SIGTERM in dprl serve) drains and closes the store, releasing its lock.
func TestListenTLSAndDrain(t *testing.T) {
	dir := t.TempDir()
	cert, key, pool := selfSigned(t, dir)
	s, err := service.New(testConfig(filepath.Join(dir, "data")))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- service.ListenAndServe(ctx, s, service.Listen{Addr: "127.0.0.1:0", CertFile: cert, KeyFile: key}, func(u string) { urls <- u })
	}()
	u := <-urls
	if !strings.HasPrefix(u, "https://") {
		t.Fatalf("URL %s", u)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Get(u + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz over TLS: %d", resp.StatusCode)
	}
	if resp, err := http.Get("http" + strings.TrimPrefix(u, "https") + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered on a TLS server")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The lock is released: the data directory opens again.
	s2, err := service.New(testConfig(filepath.Join(dir, "data")))
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
}

// TestDataDirLocked: a second server on a data directory in use is refused with a message
// saying so (dprl serve exits 2).
func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	s, err := service.New(testConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := testConfig(dir)
	cfg.LockWait = 100 * time.Millisecond
	_, err = service.New(cfg)
	if err == nil || !strings.Contains(err.Error(), "in use by another dprl serve") {
		t.Fatalf("second server: %v", err)
	}
	for _, c := range []struct {
		admin, client, want string
	}{{"short", clientTok, "at least 16"}, {adminTok, adminTok, "must differ"}} {
		if _, err := service.New(service.Config{Dir: t.TempDir(), Registry: registry(), AdminToken: c.admin, ClientToken: c.client}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tokens %q/%q: %v", c.admin, c.client, err)
		}
	}
}
