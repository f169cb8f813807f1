package store

import (
	"errors"
	"fmt"
	"io"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the whole database to w: every page the database holds
// as of one read transaction (bbolt's Tx.WriteTo), so the copy is the database at one commit —
// a group of reports is either all in it or not at all, with its log records, participation
// entries and the snapshots and keys of that commit. Commits go on while it is written (a read
// transaction blocks no writer; only a growth of the file's memory map waits for it to end).
// begin, if non-nil, is called with the copy's size before the first byte is written (an
// error stops the backup). It returns the bytes written.
//
// The copy holds everything secret the database holds (the participation and credential keys,
// every experiment's key, the user digests, the raw reports not yet covered by a snapshot):
// keep it as secret as the database.
func (s *Store) Backup(w io.Writer, begin func(size int64) error) (n int64, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		if begin != nil {
			if err := begin(tx.Size()); err != nil {
				return err
			}
		}
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// CheckBackup checks that the file at path is a complete dprl database: its header and meta
// pages are valid and cover the file (the checks Open makes), every page of its B+tree reads
// back (bbolt's consistency check), and it holds dprl's buckets, schema and keys. It opens the
// file read-only and changes nothing.
func CheckBackup(path string) error {
	if _, err := checkFile(path); err != nil {
		return err
	}
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		var errs []error
		for e := range tx.Check() {
			errs = append(errs, e)
		}
		if err := errors.Join(errs...); err != nil {
			return &CorruptError{Path: path, Problem: err.Error()}
		}
		m := tx.Bucket(bMeta)
		if m == nil || tx.Bucket(bExperiments) == nil {
			return &CorruptError{Path: path, Problem: "not a dprl database (no meta or experiments bucket)"}
		}
		if v := m.Get([]byte("schema")); string(v) != fmt.Sprint(Schema) {
			return &CorruptError{Path: path, Problem: fmt.Sprintf("database schema %q, this dprl reads %d", v, Schema)}
		}
		if len(m.Get([]byte("user-key"))) != 32 {
			return &CorruptError{Path: path, Problem: "no participation key"}
		}
		return nil
	})
}
