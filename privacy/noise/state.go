package noise

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
)

// MarshalBinary encodes the source's exact position: its ChaCha8 state and the unused sign
// bits it buffered. A source restored from it (UnmarshalBinary) draws exactly the noise this
// one would draw next, so a snapshotted curator continues its noise stream: nothing redrawn,
// nothing reused. The encoding holds the generator's key material: it is as secret as the key.
func (s *Secure) MarshalBinary() ([]byte, error) {
	c, err := s.c.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := binary.LittleEndian.AppendUint64(nil, s.signs)
	b = append(b, byte(s.nbits))
	return append(b, c...), nil
}

// UnmarshalBinary restores a position encoded by MarshalBinary.
func (s *Secure) UnmarshalBinary(b []byte) error {
	if len(b) < 9 || b[8] > 64 {
		return errors.New("noise: bad Secure state")
	}
	if s.c == nil {
		s.c = new(rand.ChaCha8)
		s.r = rand.New(s.c)
	}
	if err := s.c.UnmarshalBinary(b[9:]); err != nil {
		return err
	}
	s.signs, s.nbits = binary.LittleEndian.Uint64(b), int(b[8])
	return nil
}
