package servefuzz

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/internal/atomicfile"
)

func floatBytes(xs ...float64) []byte {
	b := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// seeds returns the seed corpus of target tg (file name → content, go test fuzz v1): for
// every agent, one report of huge finite values (±1e308, 1e200, ±max float64, the smallest
// subnormal, −0, ±1e154 whose squares overflow) received 8 times; huge values through the JSON
// and binary encodings; NaN and ±Inf; a wrong length; a JSON message with 1e308 (the report
// that took `dprl serve` down, issue 25 item 2) and a binary one with max float64 or NaN bits;
// then three malformed messages.
func seeds(t *testing.T, tg Target) map[string][]byte {
	huge := []float64{1e308, -1e308, 1e200, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, math.Copysign(0, -1), 1e154, -1e154}
	out := map[string][]byte{}
	add := func(agent, mode uint8, data []byte) {
		out[fmt.Sprintf("seed-%03d", len(out)+1)] = fmt.Appendf(nil, "go test fuzz v1\nbyte(%q)\nbyte(%q)\n[]byte(%q)\n", agent, mode, data)
	}
	for i, name := range tg.Agents {
		s, err := tg.Session(reg(), name, 1)
		if err != nil {
			t.Fatal(err)
		}
		a := uint8(i)
		add(a, 1|0xE0, floatBytes(huge...))
		add(a, 7|0x60, floatBytes(1e308, -1e200, math.MaxFloat64))
		add(a, 1, floatBytes(math.NaN(), math.Inf(1), math.Inf(-1), 1))
		add(a, 1|[]uint8{0x08, 0x10}[a%2], floatBytes(1e308))
		if b, err := protocol.EncodeJSON(Build(s.Expect(), []float64{1e308, -1e200}, 0)); err == nil {
			add(a, 0xE0, b)
		}
		if b, err := protocol.EncodeBinary(Build(s.Expect(), []float64{[]float64{math.MaxFloat64, math.NaN()}[a%2]}, 0)); err == nil {
			add(a, 0x60, b)
		}
	}
	add(0, 0, []byte(`{"header":{"schema":1}}`))
	add(0, 0, []byte("DPRL\x01\xff\xff\xff\xff\x0f"))
	add(0, 1, nil)
	return out
}

// TestSeedCorpus: the seed corpus in testdata/fuzz holds every seed of seeds (so the plain
// `go test` run exercises each agent with huge, non-finite and wrong-length reports).
// DPRL_WRITE_CORPUS=1 (re)writes it.
func TestSeedCorpus(t *testing.T) {
	write := os.Getenv("DPRL_WRITE_CORPUS") == "1"
	for name, tg := range map[string]Target{"FuzzServeTabular": tabular, "FuzzServeLinMDP": linmdp, "FuzzServeLinMix": linmix, "FuzzServeLQ": lq} {
		dir := filepath.Join("testdata", "fuzz", name)
		for file, want := range seeds(t, tg) {
			path := filepath.Join(dir, file)
			if write {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := atomicfile.WriteBytes(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: missing or stale seed (err %v); DPRL_WRITE_CORPUS=1 go test -run TestSeedCorpus rewrites it", path, err)
			}
		}
	}
}
