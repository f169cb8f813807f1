package store

// The server's two secrets and the revocations.
//
// The participation key (meta "user-key", drawn once, never changed) digests user IDs for the
// participation index (users/<id>) and the log: single participation is checked by these
// digests, so the key can never change without forgetting who contributed.
//
// The credential key (meta "credential-key", with its version "credential-key-version",
// 8 bytes big-endian) signs the users' credentials. It is rotatable: RotateCredentialKey
// draws a new key under the next version and erases the old one, so every credential of an
// earlier version is refused from then on (no grace period: a rotation answers a suspected
// leak). A database written before the split has only "user-key": Open migrates it by
// making that key also the credential key of version 1, so every credential minted before
// keeps working until the first rotation.
//
// Revocations (bucket revoked/<id>) are keyed by the user's participation digest, never her
// ID: a revoked user's credentials of every version are refused for that experiment.

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

var (
	kUserKey       = []byte("user-key")
	kCredKey       = []byte("credential-key")
	kCredKeyVer    = []byte("credential-key-version")
	errNoCredKey   = errors.New("the database has no credential key")
	errNoUserKey   = errors.New("the database has no participation key (meta user-key)")
	errBadCredKeys = errors.New("the database's credential key or its version is malformed")
)

func revokedBucket(id string) []byte { return []byte("revoked/" + id) }

// CredentialKey is the key that signs users' credentials, with its version (1, 2, …).
type CredentialKey struct {
	Version uint64
	Key     [32]byte
}

// loadCredentialKey reads the credential key from the meta bucket m, creating it when absent:
// the participation key itself for a database that already has one (a database written before
// the keys were split: its credentials stay valid), a new random key otherwise. fresh reports
// that the participation key was drawn in this transaction (a new database).
func loadCredentialKey(m *bolt.Bucket, fresh bool) (CredentialKey, error) {
	var ck CredentialKey
	k, v := m.Get(kCredKey), m.Get(kCredKeyVer)
	switch {
	case k != nil || v != nil:
		if len(k) != 32 || len(v) != 8 || binary.BigEndian.Uint64(v) == 0 {
			return ck, errBadCredKeys
		}
		copy(ck.Key[:], k)
		ck.Version = binary.BigEndian.Uint64(v)
		return ck, nil
	case fresh:
		if _, err := rand.Read(ck.Key[:]); err != nil {
			return ck, err
		}
	default:
		uk := m.Get(kUserKey)
		if len(uk) != 32 {
			return ck, errNoUserKey
		}
		copy(ck.Key[:], uk) // migration: the old user key signed the existing credentials
	}
	ck.Version = 1
	return ck, putCredentialKey(m, ck)
}

func putCredentialKey(m *bolt.Bucket, ck CredentialKey) error {
	if err := m.Put(kCredKey, ck.Key[:]); err != nil {
		return err
	}
	return m.Put(kCredKeyVer, binary.BigEndian.AppendUint64(nil, ck.Version))
}

// CredentialKey returns the current credential key and its version.
func (s *Store) CredentialKey() CredentialKey { return s.credKey }

// RotateCredentialKey draws a new credential key under the next version and erases the
// current one, in one transaction: from then on only credentials of the new version are
// valid. The participation key, the experiments, their logs and revocations are untouched.
// It returns the new key. A running server keeps the key it read at start: rotate with the
// server stopped (dprl serve rotate-key holds the store's lock).
func (s *Store) RotateCredentialKey() (CredentialKey, error) {
	var ck CredentialKey
	err := s.update(func(tx *bolt.Tx) error {
		m := tx.Bucket(bMeta)
		v := m.Get(kCredKeyVer)
		if len(v) != 8 {
			return errNoCredKey
		}
		ck.Version = binary.BigEndian.Uint64(v) + 1
		if _, err := rand.Read(ck.Key[:]); err != nil {
			return err
		}
		return putCredentialKey(m, ck)
	})
	if err != nil {
		return CredentialKey{}, fmt.Errorf("rotating the credential key: %w", err)
	}
	s.credKey = ck
	return ck, nil
}

// Revoke records that the users of the given participation digests are revoked for
// experiment id (durably, in one transaction); revoking twice is harmless. It returns how many
// were not revoked before.
func (s *Store) Revoke(id string, users [][32]byte) (int, error) {
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		if tx.Bucket(bExperiments).Get([]byte(id)) == nil {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		b, err := tx.CreateBucketIfNotExists(revokedBucket(id))
		if err != nil {
			return err
		}
		for _, u := range users {
			if b.Get(u[:]) != nil {
				continue
			}
			if err := b.Put(u[:], []byte{1}); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// HasRevocations reports whether any credential of experiment id was ever revoked (a server
// skips the per-report revocation lookup of an experiment that has none).
func (s *Store) HasRevocations(id string) (bool, error) {
	var r bool
	err := s.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(revokedBucket(id)); b != nil {
			k, _ := b.Cursor().First()
			r = k != nil
		}
		return nil
	})
	return r, err
}

// Revoked reports whether the user of participation digest user is revoked for experiment id.
func (s *Store) Revoked(id string, user [32]byte) (bool, error) {
	var r bool
	err := s.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(revokedBucket(id)); b != nil {
			r = b.Get(user[:]) != nil
		}
		return nil
	})
	return r, err
}
