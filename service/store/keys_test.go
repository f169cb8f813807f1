package store

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestCredentialKeyMigrationAndRotation: a new database has distinct participation and
// credential keys (version 1); a database written before the split (only "user-key") gets its
// user key as the credential key of version 1, so the credentials minted before stay valid;
// a rotation draws a new credential key under the next version, durably, and never changes
// the participation key; revocations are durable and per experiment.
func TestCredentialKeyMigrationAndRotation(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	uk, ck := s.UserKey(), s.CredentialKey()
	if ck.Version != 1 || ck.Key == uk || ck.Key == ([32]byte{}) {
		t.Fatalf("a new database: credential key version %d, equal to the participation key: %v", ck.Version, ck.Key == uk)
	}
	// A database of before the split: drop the credential key.
	if err := s.db.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket(bMeta)
		if err := m.Delete(kCredKey); err != nil {
			return err
		}
		return m.Delete(kCredKeyVer)
	}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "e")
	s.Close()
	s = mustOpen(t, dir)
	if got := s.CredentialKey(); got.Version != 1 || got.Key != uk || s.UserKey() != uk {
		t.Fatalf("migrated: credential key version %d, equal to the old user key: %v", got.Version, got.Key == uk)
	}
	u := [32]byte{7}
	if n, err := s.Revoke("e", [][32]byte{u, u}); err != nil || n != 1 {
		t.Fatalf("Revoke: %d new, %v", n, err)
	}
	if _, err := s.Revoke("nope", [][32]byte{u}); err == nil {
		t.Error("revoking on a missing experiment: no error")
	}
	r1, err := s.RotateCredentialKey()
	if err != nil || r1.Version != 2 || r1.Key == uk {
		t.Fatalf("rotation: version %d, %v", r1.Version, err)
	}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	if got := s.CredentialKey(); got != r1 || s.UserKey() != uk {
		t.Errorf("after a reopening: credential key version %d (want %d), participation key kept: %v", got.Version, r1.Version, s.UserKey() == uk)
	}
	for _, c := range []struct {
		id   string
		user [32]byte
		want bool
	}{{"e", u, true}, {"e", [32]byte{8}, false}, {"other", u, false}} {
		if got, err := s.Revoked(c.id, c.user); err != nil || got != c.want {
			t.Errorf("Revoked(%s, %x): %v %v", c.id, c.user[:1], got, err)
		}
	}
}
