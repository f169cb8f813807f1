// Package rng derives independent, reproducible random streams from one run seed.
//
// Every source of randomness in dprl (the environment's users, an agent's tie-breaking, each
// noise mechanism) gets its own stream, derived from the run seed by a path of labels and
// indices:
//
//	root := rng.NewSeed(42)
//	users := root.Child("env").Child("users")
//	u7 := users.Index(7).Rand() // the 7th user's own stream
//
// Derivation is a pure function of the path, so the same run seed gives the same streams no
// matter how many workers run or in which order streams are created. There is no package-level
// state. Streams are math/rand/v2 PCG generators: fast, statistically sound, and not
// cryptographically secure — use them for simulations only (see privacy/noise for the secure
// source used in deployment).
package rng

import (
	"math/rand/v2"
)

// Seed identifies one node of the derivation tree. The zero value is a valid seed.
type Seed struct {
	hi, lo uint64
}

// NewSeed returns the root seed of a run.
func NewSeed(run uint64) Seed {
	return Seed{hi: mix(run ^ 0x6a09e667f3bcc909), lo: mix(run + 0x3c6ef372fe94f82b)}
}

// Child returns the seed of the stream named label below s.
func (s Seed) Child(label string) Seed {
	h := uint64(0xcbf29ce484222325) // FNV-1a over the label
	for i := 0; i < len(label); i++ {
		h ^= uint64(label[i])
		h *= 0x100000001b3
	}
	return s.step(h, 0x9e3779b97f4a7c15)
}

// Index returns the seed of the i-th stream below s (for example the i-th user).
func (s Seed) Index(i uint64) Seed {
	return s.step(i, 0xbf58476d1ce4e5b9)
}

func (s Seed) step(v, salt uint64) Seed {
	return Seed{
		hi: mix(s.hi ^ mix(v+salt)),
		lo: mix(s.lo + mix(v^salt) + 0x94d049bb133111eb),
	}
}

// Rand returns a new PCG generator seeded by s. Two calls return generators producing the
// same sequence.
func (s Seed) Rand() *rand.Rand {
	return rand.New(s.PCG())
}

// PCG returns a new PCG source seeded by s.
func (s Seed) PCG() *rand.PCG {
	return rand.NewPCG(s.hi, s.lo)
}

// Uint64 returns a 64-bit digest of s, for recording in manifests.
func (s Seed) Uint64() uint64 { return mix(s.hi ^ mix(s.lo)) }

// mix is the SplitMix64 finaliser.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Reseed resets p to the stream of s without allocating (hot loops that need one stream per
// user can reuse one generator).
func (s Seed) Reseed(p *rand.PCG) { p.Seed(s.hi, s.lo) }
