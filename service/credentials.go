package service

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dprl/dprl/service/store"
)

// Credentials (docs/serve.md, "Credentials and keys").
//
// A user's credential for an experiment is
//
//	base64url(HMAC-SHA-256(credential key, "dprl/credential/v1" ‖ 0 ‖ experiment ‖ 0 ‖ user))
//
// prefixed with "<version>." when the credential key's version is above 1 (version 1 has no
// prefix: the credentials minted before keys were versioned stay valid). Only credentials of
// the current version are valid: `dprl serve rotate-key` erases the old key, so a rotation
// refuses every earlier credential at once (no grace period; mint new ones). The participation
// index is keyed by a separate key that never changes (userMAC), so a user who contributed
// before a rotation is still refused a second contribution with a new credential.

// wrongCredential is the message of every refused credential: wrong, of another user or
// experiment, malformed, or revoked — byte-identical answers, so a revocation reveals nothing.
const wrongCredential = "not this user's credential for this experiment (header Dprl-User-Credential)"

// credentialMAC returns HMAC-SHA-256(key, "dprl/credential/v1" ‖ 0 ‖ exp ‖ 0 ‖ user).
func credentialMAC(key [32]byte, exp, user string) []byte {
	m := hmac.New(sha256.New, key[:])
	m.Write([]byte("dprl/credential/v1"))
	m.Write([]byte{0})
	m.Write([]byte(exp))
	m.Write([]byte{0})
	m.Write([]byte(user))
	return m.Sum(nil)
}

// credential returns user's credential for experiment exp under ck.
func credential(ck store.CredentialKey, exp, user string) string {
	mac := base64.RawURLEncoding.EncodeToString(credentialMAC(ck.Key, exp, user))
	if ck.Version == 1 {
		return mac
	}
	return strconv.FormatUint(ck.Version, 10) + "." + mac
}

// checkCredential returns "" when cred is user's credential for experiment exp under the
// current credential key, else the message of the 403: wrongCredential, or, for a well-formed
// credential of an earlier key version, a message saying it must be minted again (the version
// is the caller's own input and the key's version is public: nothing about the user).
func (s *Server) checkCredential(exp, user, cred string) string {
	ck := s.st.CredentialKey()
	ver, mac := uint64(1), cred
	if v, m, ok := strings.Cut(cred, "."); ok {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n < 2 {
			return wrongCredential
		}
		ver, mac = n, m
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	ok := hmac.Equal(got, credentialMAC(ck.Key, exp, user))
	switch {
	case ok && err == nil && ver == ck.Version:
		return ""
	case ver < ck.Version && len(got) == sha256.Size && err == nil:
		return fmt.Sprintf("a credential of key version %d: the server's credential key was rotated (version %d), mint the user a new credential (header Dprl-User-Credential)", ver, ck.Version)
	}
	return wrongCredential
}

// revokeCredentials is POST /v1/experiments/{id}/credentials/revoke {"users": [ids]} (admin):
// the users' credentials for the experiment, of every key version, are refused from then on,
// exactly as a wrong credential. The store keeps the users' digests, never their IDs.
func (s *Server) revokeCredentials(w http.ResponseWriter, r *http.Request) {
	x, users := s.usersRequest(w, r, "revoking credentials needs the admin token")
	if x == nil {
		return
	}
	ds := make([][32]byte, len(users))
	for i, u := range users {
		copy(ds[i][:], s.userMAC("dprl/user/v1", x.def.ID, u))
	}
	x.mayRevoke.Store(true) // before the commit: from then on every submission reads the revocations
	n, err := s.st.Revoke(x.def.ID, ds)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "storage", "", "storing the revocations: %v", err)
		return
	}
	s.cfg.Logf("experiment %s: %d credentials revoked (%d newly)", x.def.ID, len(ds), n)
	writeJSON(w, http.StatusOK, map[string]any{"experiment": x.def.ID, "revoked": len(ds), "newly_revoked": n})
}

// RotateKey rotates the credential key of the data directory dir offline (`dprl serve
// rotate-key`): it opens the store with its lock (waiting at most wait for a server to release
// it), draws a new credential key under the next version, erases the old one, and closes the
// store. Experiments, logs, revocations and the participation key are untouched. It returns
// the new version.
func RotateKey(dir string, wait time.Duration) (uint64, error) {
	if _, err := os.Stat(filepath.Join(dir, store.FileName)); err != nil {
		return 0, fmt.Errorf("--data: %w (rotate-key rotates the key of an existing data directory)", err)
	}
	st, err := store.Open(dir, wait)
	if err != nil {
		return 0, err
	}
	ck, err := st.RotateCredentialKey()
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return ck.Version, err
}
