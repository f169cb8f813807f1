package protocol_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
)

// edge are floats whose bits a text encoding could lose.
var edge = []float64{math.Copysign(0, -1), 5e-324, math.MaxFloat64, -math.SmallestNonzeroFloat64, 1.0 / 3, 0.1, -2.5e-17, 1e21, 123456789.123456789}

func header(f protocol.Family, k protocol.Kind, d protocol.Dims) protocol.Header {
	return protocol.Header{Schema: protocol.SchemaVersion, Family: f, Agent: "test-agent", Kind: k, Dims: d}
}

// sample returns one valid report of each type (H, S, A, n, d, blocks as given), with the edge
// floats and random ones.
func sample(H, S, A, n, d int, blocks []int) []protocol.Report {
	r := rand.New(rand.NewPCG(1, 2))
	f := func(i int) float64 {
		if i < len(edge) {
			return edge[i]
		}
		return r.NormFloat64() * 30
	}
	tr := &protocol.Trajectory{Header: header(protocol.Tabular, protocol.KindTrajectory, protocol.Dims{Horizon: H, States: S, Actions: A})}
	for h := 0; h <= H; h++ {
		tr.States = append(tr.States, r.IntN(S))
	}
	for h := 0; h < H; h++ {
		tr.Actions, tr.Rewards = append(tr.Actions, r.IntN(A)), append(tr.Rewards, f(h))
	}
	lv := &protocol.Leaves{Header: header(protocol.LinMix, protocol.KindTrajectory, protocol.Dims{Horizon: H, Steps: H - 1, Regressors: []int{d, 2}})}
	for h := 0; h < H-1; h++ {
		x0, x1 := make([]float64, d), make([]float64, 2)
		for i := range x0 {
			x0[i] = f(h*d + i)
		}
		x1[0], x1[1] = f(h), -f(h+1)
		lv.X, lv.Y = append(lv.X, [][]float64{x0, x1}), append(lv.Y, []float64{f(h), f(h + 2)})
	}
	pa := &protocol.Path{Header: header(protocol.LQ, protocol.KindTrajectory, protocol.Dims{Horizon: H, StateDim: n, InputDim: d})}
	for h := 0; h <= H; h++ {
		x := make([]float64, n)
		for i := range x {
			x[i] = f(h + i)
		}
		pa.States = append(pa.States, x)
	}
	for h := 0; h < H; h++ {
		u := make([]float64, d)
		for i := range u {
			u[i] = f(2*h + i)
		}
		pa.Inputs = append(pa.Inputs, u)
	}
	pr := &protocol.Privatized{Header: header(protocol.Tabular, protocol.KindPrivatized, protocol.Dims{Horizon: H, States: S, Actions: A, Blocks: blocks})}
	for _, b := range blocks {
		v := make([]float64, b)
		for i := range v {
			v[i] = f(i)
		}
		pr.Blocks = append(pr.Blocks, v)
	}
	return []protocol.Report{tr, lv, pa, pr}
}

// floatsOf returns every float of r in order (to compare bits, -0 included).
func floatsOf(r protocol.Report) []float64 {
	var out []float64
	switch r := r.(type) {
	case *protocol.Trajectory:
		out = r.Rewards
	case *protocol.Leaves:
		for h := range r.X {
			for _, x := range r.X[h] {
				out = append(out, x...)
			}
			out = append(out, r.Y[h]...)
		}
	case *protocol.Path:
		for _, x := range append(append([][]float64{}, r.States...), r.Inputs...) {
			out = append(out, x...)
		}
	case *protocol.Privatized:
		for _, b := range r.Blocks {
			out = append(out, b...)
		}
	}
	return out
}

// TestRoundTripEveryType: every report type decodes, from JSON and from binary, to exactly the
// report encoded (every float bit for bit, −0 and subnormals included).
func TestRoundTripEveryType(t *testing.T) {
	for _, r := range sample(5, 4, 3, 3, 4, []int{7, 1, 12}) {
		for name, enc := range map[string]func(protocol.Report) ([]byte, error){"json": protocol.EncodeJSON, "binary": protocol.EncodeBinary} {
			b, err := enc(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := protocol.Decode(b, r.Head())
			if err != nil {
				t.Fatalf("%s %T: %v", name, r, err)
			}
			if !reflect.DeepEqual(got, r) {
				t.Fatalf("%s %T: round trip changed the report", name, r)
			}
			a, z := floatsOf(r), floatsOf(got)
			for i := range a {
				if math.Float64bits(a[i]) != math.Float64bits(z[i]) {
					t.Fatalf("%s %T: float %d: %g (%x) became %g (%x)", name, r, i, a[i], math.Float64bits(a[i]), z[i], math.Float64bits(z[i]))
				}
			}
		}
	}
}

// typical are reports of the reproductions' sizes: a RiverSwim trajectory (H = 20), a
// practical-ldp report on RiverSwim (84 numbers), a DP-UCBVI LDP report on RiverSwim at H = 20
// (1 920 numbers), practical-vtr leaves (TwoStateHard d = 5, H = 10) and an LQ-E1 path.
func typical() map[string]protocol.Report {
	rs := sample(20, 6, 2, 2, 1, []int{84})
	big := sample(20, 6, 2, 2, 1, []int{240, 1440, 240})
	lv := sample(10, 6, 2, 2, 5, nil)[1].(*protocol.Leaves)
	lv.Header.Dims.Regressors = lv.Header.Dims.Regressors[:1]
	for h := range lv.X {
		lv.X[h], lv.Y[h] = lv.X[h][:1], lv.Y[h][:1]
	}
	lqp := sample(10, 6, 2, 2, 1, nil)[2]
	return map[string]protocol.Report{"trajectory H=20": rs[0], "practical-ldp RiverSwim": rs[3], "dp-ucbvi-ldp RiverSwim H=20": big[3],
		"practical-vtr leaves": lv, "LQ-E1 path": lqp}
}

// TestBinaryPays measures the two encodings on reports of the reproductions' sizes: the binary
// one must be at least 2× smaller for privatised reports (their numbers are full-precision
// noise: ≈ 19 characters of JSON against 8 bytes), which is what justifies keeping it.
func TestBinaryPays(t *testing.T) {
	for name, r := range typical() {
		j, err := protocol.EncodeJSON(r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := protocol.EncodeBinary(r)
		if err != nil {
			t.Fatal(err)
		}
		ratio := float64(len(j)) / float64(len(b))
		t.Logf("%-28s JSON %6d bytes, binary %6d bytes (%.2f×)", name, len(j), len(b), ratio)
		if _, ok := r.(*protocol.Privatized); ok && ratio < 2 {
			t.Errorf("%s: binary is only %.2f× smaller than JSON", name, ratio)
		}
	}
}

// BenchmarkCodec measures encoding and decoding (with validation) of the typical reports, by
// Decode and by a curator's Decoder.
func BenchmarkCodec(b *testing.B) {
	for name, r := range typical() {
		for enc, f := range map[string]func(protocol.Report) ([]byte, error){"json": protocol.EncodeJSON, "binary": protocol.EncodeBinary} {
			data, err := f(r)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(name+"/"+enc+"/encode", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := f(r); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/"+enc+"/decode", func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for i := 0; i < b.N; i++ {
					if _, err := protocol.Decode(data, r.Head()); err != nil {
						b.Fatal(err)
					}
				}
			})
			dec := protocol.NewDecoder(r.Head())
			b.Run(name+"/"+enc+"/decoder", func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for i := 0; i < b.N; i++ {
					if _, err := dec.Decode(data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestDecodeRefusesNullAndCase: a null in a number array (encoding/json would decode it as 0,
// a reward the user never earned) or for a field, and a key in another case than its field's
// (encoding/json matches keys case-insensitively), are refused in JSON reports and in the
// binary form's header, naming the field.
func TestDecodeRefusesNullAndCase(t *testing.T) {
	h := header(protocol.Tabular, protocol.KindTrajectory, protocol.Dims{Horizon: 2, States: 3, Actions: 2})
	good, err := protocol.EncodeJSON(&protocol.Trajectory{Header: h, States: []int{0, 1, 2}, Actions: []int{1, 0}, Rewards: []float64{0.5, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.Decode(good, h); err != nil {
		t.Fatalf("the honest report is refused: %v", err)
	}
	pr := header(protocol.Tabular, protocol.KindPrivatized, protocol.Dims{Horizon: 2, States: 3, Actions: 2, Blocks: []int{2}})
	goodPr, err := protocol.EncodeJSON(&protocol.Privatized{Header: pr, Blocks: [][]float64{{0.25, -1}}})
	if err != nil {
		t.Fatal(err)
	}
	bin, err := protocol.EncodeBinary(&protocol.Trajectory{Header: h, States: []int{0, 1, 2}, Actions: []int{1, 0}, Rewards: []float64{0.5, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field, doc string
		want       protocol.Header
	}{
		{"rewards[1]", strings.Replace(string(good), `"rewards":[0.5,1]`, `"rewards":[0.5,null]`, 1), h},
		{"rewards", strings.Replace(string(good), `"rewards":[0.5,1]`, `"rewards":null`, 1), h},
		{"states[0]", strings.Replace(string(good), `"states":[0,1,2]`, `"states":[null,1,2]`, 1), h},
		{"blocks[0][1]", strings.Replace(string(goodPr), `[[0.25,-1]]`, `[[0.25,null]]`, 1), pr},
		{"blocks[0]", strings.Replace(string(goodPr), `[[0.25,-1]]`, `[null]`, 1), pr},
		{"Rewards", strings.Replace(string(good), `"rewards"`, `"Rewards"`, 1), h},
		{"STATES", strings.Replace(string(good), `"states":[`, `"STATES":[`, 1), h},
		{"Header", strings.Replace(string(good), `"header"`, `"Header"`, 1), h},
		{"header.dims.Horizon", strings.Replace(string(good), `"horizon"`, `"Horizon"`, 1), h},
		{"header.Kind", string(bytes.Replace(bin, []byte(`"kind"`), []byte(`"Kind"`), 1)), h},
	} {
		if _, err := protocol.Decode([]byte(c.doc), c.want); fieldOf(err) != c.field {
			t.Errorf("%.90s…: got %v, want an error naming %s", c.doc, err, c.field)
		}
	}
}

// TestDecoderAgreesWithDecode: the Decoder's shortcut (a binary header byte for byte the
// curator's own encoding is not parsed again) changes nothing. For every report type and
// header bytes that are the canonical encoding, the same header written otherwise (spaces,
// another key order), or a header that must be refused (another agent or dimension, a key in
// another case, a duplicate key, a null, trailing data, the canonical bytes truncated or
// extended), Decoder.Decode returns exactly what Decode returns: the same report or the same
// error.
func TestDecoderAgreesWithDecode(t *testing.T) {
	for _, r := range sample(5, 4, 3, 3, 4, []int{7, 1, 12}) {
		want := r.Head()
		bin, err := protocol.EncodeBinary(r)
		if err != nil {
			t.Fatal(err)
		}
		// bin = Magic, version, uvarint len, header JSON, payload.
		rest := bin[len(protocol.Magic)+1:]
		n, k := binary.Uvarint(rest)
		canon, payload := string(rest[k:k+int(n)]), rest[k+int(n):]
		with := func(hd string) []byte {
			b := append([]byte(protocol.Magic), protocol.SchemaVersion)
			b = binary.AppendUvarint(b, uint64(len(hd)))
			return append(append(b, hd...), payload...)
		}
		other := want
		other.Agent = "other-agent"
		otherJSON, _ := json.Marshal(other)
		reordered := strings.Replace(canon, `{"schema":1,`, `{`, 1)
		reordered = reordered[:len(reordered)-1] + `,"schema":1}`
		variants := map[string]string{
			"canonical":     canon,
			"spaced":        strings.ReplaceAll(canon, ",", ", "),
			"reordered":     reordered,
			"other agent":   string(otherJSON),
			"other horizon": strings.Replace(canon, `"horizon":5`, `"horizon":6`, 1),
			"key case":      strings.Replace(canon, `"agent"`, `"Agent"`, 1),
			"duplicate key": strings.Replace(canon, `{"schema":1,`, `{"schema":1,"schema":1,`, 1),
			"null":          strings.Replace(canon, `"agent":"test-agent"`, `"agent":null`, 1),
			"trailing":      canon + " {}",
			"truncated":     canon[:len(canon)-1],
			"extended":      canon + " ",
			"empty":         "",
		}
		dec := protocol.NewDecoder(want)
		for name, hd := range variants {
			data := with(hd)
			got, gerr := dec.Decode(data)
			exp, eerr := protocol.Decode(data, want)
			if (gerr == nil) != (eerr == nil) || (gerr != nil && gerr.Error() != eerr.Error()) {
				t.Fatalf("%T, header %s: Decoder: %v; Decode: %v", r, name, gerr, eerr)
			}
			if !reflect.DeepEqual(got, exp) {
				t.Fatalf("%T, header %s: Decoder and Decode return different reports", r, name)
			}
			if ok := name == "canonical" || name == "spaced" || name == "reordered" || name == "extended"; ok != (eerr == nil) {
				t.Fatalf("%T, header %s: accepted %v, error %v", r, name, ok, eerr)
			}
		}
		// The decoded header shares nothing with the decoder's: a curator changing one report
		// changes no other.
		a, _ := dec.Decode(bin)
		b, _ := dec.Decode(bin)
		if h := a.Head(); len(h.Dims.Blocks) > 0 {
			a.(*protocol.Privatized).Header.Dims.Blocks[0]++
			if b.Head().Dims.Blocks[0] != want.Dims.Blocks[0] {
				t.Fatal("two decoded reports share their header's blocks")
			}
		}
	}
}

// TestNilReportMissing: a nil report of every type is refused naming the field "report".
func TestNilReportMissing(t *testing.T) {
	for _, r := range []protocol.Report{(*protocol.Trajectory)(nil), (*protocol.Leaves)(nil), (*protocol.Path)(nil), (*protocol.Privatized)(nil)} {
		var fe *protocol.FieldError
		if err := r.Validate(protocol.Header{}); !errors.As(err, &fe) || fe.Field != "report" || fe.Msg != "missing" {
			t.Errorf("%T: nil report gave %v, want report.report: missing", r, err)
		}
	}
}
