package pgstore

import (
	"context"
	"encoding/binary"
	"sync"

	"github.com/dprl/dprl/service/store"
)

// The participation filter. The service checks every report's participation (Contributed)
// before the curator takes it, one report after the other in the experiment's committer: on
// PostgreSQL each check would be a round trip to the database, which would bound the whole
// server's throughput by the network's latency. The leader therefore keeps, per experiment, a
// Bloom filter of the participation digests the database holds: a user the filter does not
// know has certainly not contributed (answered at once); one it may know is looked up in the
// database (every contributor, and about 1 % of the others). The filter never holds a user
// ID, only bits derived from the digests (HMACs under the participation key, which the
// database also holds).
//
// It stays a superset of the database's participation index because only the leader writes
// (every write fenced), the filter is built after the leadership's epoch bump (which waits for
// every write of the previous leader), and Append adds its users once its commit returned.
// The same filter answers the revocation check every report makes (Revoked): revocations are
// written only by the leader too (Revoke adds them once committed).
//
// A filter past its sizing keeps answering correctly with more false positives until it is
// rebuilt from the database at twice the size, in the background (add, finish): appends and
// checks go on meanwhile on the old filter.

// filterHashes is the number of bit positions per digest (k); filterBitsPerUser the bits per
// user the filter is sized for (m/n): about 1 % false positives at its sizing.
const (
	filterHashes      = 7
	filterBitsPerUser = 10
	filterMinUsers    = 1 << 16
)

// bloom is one experiment's filter.
type bloom struct {
	bits  []uint64
	n     int // digests added
	sized int // users it is sized for
	// rebuilding is set while a larger filter is built from the database (in the background);
	// pending holds the digests added meanwhile, which the new filter takes when it is
	// installed (finish).
	rebuilding bool
	pending    [][32]byte
}

func newBloom(users int) *bloom {
	users = max(users, filterMinUsers)
	m := users * filterBitsPerUser
	return &bloom{bits: make([]uint64, (m+63)/64), sized: users}
}

// positions are k bit positions taken from disjoint bytes of the digest (an HMAC output:
// uniformly random).
func (b *bloom) positions(d []byte, f func(i uint64)) {
	m := uint64(len(b.bits) * 64)
	for j := 0; j < filterHashes; j++ {
		f(uint64(binary.LittleEndian.Uint32(d[4*j:])) % m)
	}
}

func (b *bloom) add(d []byte) {
	b.positions(d, func(i uint64) { b.bits[i/64] |= 1 << (i % 64) })
	b.n++
}

func (b *bloom) mayHold(d []byte) bool {
	in := true
	b.positions(d, func(i uint64) { in = in && b.bits[i/64]&(1<<(i%64)) != 0 })
	return in
}

// filters are the leader's filters, by experiment.
type filters struct {
	mu sync.Mutex
	by map[string]*bloom
}

// loadFilter builds experiment id's filter of the digests in table (dprl_users: participation,
// dprl_revoked: revocations) from the database.
func (s *Store) loadFilter(ctx context.Context, table, id string) (*bloom, error) {
	var n int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM "+table+" WHERE exp = $1", id).Scan(&n); err != nil {
		return nil, err
	}
	b := newBloom(2 * n)
	rows, err := s.pool.Query(ctx, "SELECT digest FROM "+table+" WHERE exp = $1", id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var d []byte
	for rows.Next() {
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		if len(d) == 32 {
			b.add(d)
		}
	}
	return b, rows.Err()
}

// mayHold reports whether experiment id's filter may hold user's digest: false is
// certain; true must be checked in the database. An experiment without a filter (not loaded
// yet, or unknown) answers true.
func (f *filters) mayHold(id string, user [32]byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.by[id]
	return b == nil || b.mayHold(user[:])
}

// add records the users of committed records. It reports whether the filter outgrew its
// sizing and no rebuild runs: the caller then rebuilds it (a larger filter from the database,
// read after this call, then finish). Every digest added from now until finish is kept for the
// new filter too, so it covers what the database held when it was read and everything added
// since.
func (f *filters) add(id string, recs []*store.Record) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.by[id]
	if b == nil {
		return false
	}
	for _, r := range recs {
		b.add(r.User[:])
		if b.rebuilding {
			b.pending = append(b.pending, r.User)
		}
	}
	if b.n > b.sized && !b.rebuilding {
		b.rebuilding = true
		return true
	}
	return false
}

// finish installs experiment id's rebuilt filter nb with the digests added while it was built;
// nb nil (the rebuild failed) keeps the current filter, which a later add rebuilds again.
func (f *filters) finish(id string, nb *bloom) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.by[id]
	if b == nil {
		return
	}
	if nb == nil {
		b.rebuilding, b.pending = false, nil
		return
	}
	for _, d := range b.pending {
		nb.add(d[:])
	}
	f.by[id] = nb
}

// addDigests is add for bare digests.
func (f *filters) addDigests(id string, ds [][32]byte) bool {
	recs := make([]*store.Record, len(ds))
	for i := range ds {
		recs[i] = &store.Record{User: ds[i]}
	}
	return f.add(id, recs)
}

// set installs experiment id's filter.
func (f *filters) set(id string, b *bloom) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.by == nil {
		f.by = map[string]*bloom{}
	}
	f.by[id] = b
}
