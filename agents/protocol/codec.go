package protocol

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dprl/dprl/internal/strictdecode"
)

// The Report message has two encodings with the same content: JSON (stable, readable; the
// reference) and a compact binary form (the JSON header, then the numbers as varints and
// little-endian IEEE-754 doubles). The binary form pays for the float-heavy reports: a
// privatised report (full-precision noise: ≈ 19 characters of JSON per number against 8
// bytes) is 2.0–2.3 × smaller and decodes 9–90 × faster (DP-UCBVI's LDP report on RiverSwim at
// H = 20, 1 920 numbers: 36 kB and 2.0 ms in JSON, 15 kB and 23 µs in binary); a trajectory is
// 1.6–1.8 × smaller (TestBinaryPays and BenchmarkCodec measure it; docs/engine.md records the
// numbers). Decode accepts either (the binary form starts with Magic).
//
// JSON layout (schema 1): {"header": {"schema": 1, "family": …, "agent": …, "kind": …,
// "dims": {…}}, then the payload of the report type: "states"/"actions"/"rewards"
// (Trajectory), "x"/"y" (Leaves), "states"/"inputs" (Path) or "blocks" (Privatized)}. Unknown
// fields, duplicate keys, keys in another case than the field's ("Rewards"), null (in a
// number array or for any field) and trailing data are refused, naming the field. Floats are written in Go's shortest
// round-trip form, so decoding returns exactly the numbers encoded (a report that went through
// the network gives the same curator state, bit for bit, as the in-process one).
//
// Binary layout (schema 1): Magic, one byte SchemaVersion, uvarint n, n bytes of the header's
// JSON, then per report type: Trajectory: uvarint count + zigzag varints (states; at most
// H+1), the same for actions (at most H), uvarint count + float64s (rewards; at most H: a
// terminated episode has L < H steps and L+1 states); Leaves: uvarint steps, per step uvarint
// regressions and per regression uvarint dim + float64s, then per step uvarint count +
// float64s (y); Path: uvarint rows, per row uvarint dim + float64s (states), the same for
// inputs; Privatized: uvarint blocks, per block uvarint length + float64s. Nothing may follow.

// Magic starts every binary report.
const Magic = "DPRL"

// MaxBytes is the largest encoded report a curator with header h accepts (either encoding):
// 4 KiB of header (plus 8 bytes per terminal state it lists) plus 40 bytes for every number
// the dimensions allow, far above what the encoders write (a double takes at most 24
// characters of JSON). A larger message is refused before it is parsed.
func MaxBytes(h Header) int {
	d := h.Dims
	n := 0
	switch {
	case h.Kind == KindPrivatized:
		for _, b := range d.Blocks {
			n += b
		}
	case h.Family == LinMix:
		w := 0
		for _, r := range d.Regressors {
			w += r + 1
		}
		n = d.Steps * w
	case h.Family == LQ:
		n = (d.Horizon+1)*d.StateDim + d.Horizon*d.InputDim
	default:
		n = 3*d.Horizon + 1
	}
	return 4096 + 8*len(d.Terminal) + 40*n
}

// EncodeJSON returns the JSON encoding of r. Non-finite numbers cannot be encoded (a user
// whose report holds one has a bug; the curator would refuse it anyway).
func EncodeJSON(r Report) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return b, nil
}

// EncodeBinary returns the binary encoding of r.
func EncodeBinary(r Report) ([]byte, error) {
	hd, err := json.Marshal(r.Head())
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	b := make([]byte, 0, 64+len(hd))
	b = append(b, Magic...)
	b = append(b, SchemaVersion)
	b = binary.AppendUvarint(b, uint64(len(hd)))
	b = append(b, hd...)
	switch r := r.(type) {
	case *Trajectory:
		b = appendInts(b, r.States)
		b = appendInts(b, r.Actions)
		b = appendFloats(b, r.Rewards)
	case *Leaves:
		b = binary.AppendUvarint(b, uint64(len(r.X)))
		for _, step := range r.X {
			b = binary.AppendUvarint(b, uint64(len(step)))
			for _, x := range step {
				b = appendFloats(b, x)
			}
		}
		for _, y := range r.Y {
			b = appendFloats(b, y)
		}
	case *Path:
		b = appendRows(b, r.States)
		b = appendRows(b, r.Inputs)
	case *Privatized:
		b = appendRows(b, r.Blocks)
	default:
		return nil, fmt.Errorf("report: unknown report type %T", r)
	}
	return b, nil
}

func appendInts(b []byte, xs []int) []byte {
	b = binary.AppendUvarint(b, uint64(len(xs)))
	for _, x := range xs {
		b = binary.AppendVarint(b, int64(x))
	}
	return b
}

func appendFloats(b []byte, xs []float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(xs)))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func appendRows(b []byte, rows [][]float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(rows)))
	for _, r := range rows {
		b = appendFloats(b, r)
	}
	return b
}

// Decode decodes a report (JSON or binary) addressed to a curator that expects header want,
// and validates it (Report.Validate). It refuses, with an error naming the field, a message
// larger than MaxBytes(want), an unknown schema version, a header other than want — in
// particular kind trajectory for a curator that accepts only privatized reports, before the
// payload is decoded into a report — unknown or duplicate fields, trailing data, and every
// size, range or non-finite number that Validate refuses.
func Decode(data []byte, want Header) (Report, error) {
	return (&Decoder{want: want}).Decode(data)
}

// Decoder decodes the reports of one curator, whose header is want, exactly as Decode does,
// but faster for the usual binary report: it holds want's encoding as EncodeBinary writes it
// (json.Marshal) and the header that encoding strictly decodes to, checked once against want
// (NewDecoder). A binary report whose header bytes are exactly that encoding therefore needs
// no parse of its header: the strict decoder would return that same header and Check would
// accept it. Any other header bytes are decoded strictly and checked, as by Decode.
type Decoder struct {
	want  Header
	canon []byte // want's JSON encoding (nil: no shortcut)
	head  Header // what canon strictly decodes to
}

// NewDecoder returns the decoder of the reports a curator with header want accepts.
func NewDecoder(want Header) *Decoder {
	d := &Decoder{want: want}
	canon, err := json.Marshal(want)
	if err != nil {
		return d
	}
	var h Header
	if strictdecode.Decode(canon, "json", &h) != nil || h.Check(want) != nil {
		return d // never for a header a curator gives; the strict path then decodes every report
	}
	d.canon, d.head = canon, h
	return d
}

// clone returns a copy of h that shares no slice with it.
func (h Header) clone() Header {
	h.Dims.Regressors, h.Dims.Blocks = slices.Clone(h.Dims.Regressors), slices.Clone(h.Dims.Blocks)
	return h
}

// Decode decodes and validates one report (Decode's contract).
func (d *Decoder) Decode(data []byte) (Report, error) {
	if max := MaxBytes(d.want); len(data) > max {
		return nil, fieldf("size", "%d bytes, more than the %d a report of these dimensions can take", len(data), max)
	}
	var r Report
	var err error
	if bytes.HasPrefix(data, []byte(Magic)) {
		r, err = d.decodeBinary(data)
	} else {
		r, err = decodeJSON(data, d.want)
	}
	if err != nil {
		return nil, err
	}
	if err := r.Validate(d.want); err != nil {
		return nil, err
	}
	return r, nil
}

// DecodeFor decodes a report for curator c and returns it as the report type c accepts: for an
// LDP curator only a *Privatized ever comes out.
func DecodeFor[T any, R Report](c Curator[T, R], data []byte) (R, error) {
	var zero R
	r, err := Decode(data, c.Expect())
	if err != nil {
		return zero, err
	}
	out, ok := r.(R)
	if !ok {
		return zero, fieldf("header.kind", "a %T does not go to this curator (it takes %T)", r, zero)
	}
	return out, nil
}

// newReport returns an empty report of the type a curator with header want accepts.
func newReport(want Header) (Report, error) {
	switch {
	case want.Kind == KindPrivatized:
		return &Privatized{}, nil
	case want.Kind != KindTrajectory:
		return nil, fieldf("header.kind", "unknown kind %q", want.Kind)
	case want.Family == Tabular || want.Family == LinMDP:
		return &Trajectory{}, nil
	case want.Family == LinMix:
		return &Leaves{}, nil
	case want.Family == LQ:
		return &Path{}, nil
	}
	return nil, fieldf("header.family", "unknown family %q", want.Family)
}

func decodeJSON(data []byte, want Header) (Report, error) {
	// The header first (other fields ignored), so that a report of the wrong kind is refused
	// before its payload is read.
	var head struct {
		Header *Header `json:"header"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fieldf("json", "%v", err)
	}
	if head.Header == nil {
		return nil, fieldf("header", "missing")
	}
	if head.Header.Schema != SchemaVersion {
		return nil, fieldf("header.schema", "unsupported schema version %d (this decoder reads %d)", head.Header.Schema, SchemaVersion)
	}
	if err := head.Header.Check(want); err != nil {
		return nil, err
	}
	r, err := newReport(want)
	if err != nil {
		return nil, err
	}
	if err := strictdecode.Decode(data, "json", r); err != nil {
		return nil, jsonError("json", err)
	}
	return r, nil
}

// jsonError is a strict decoding error as a FieldError: under the field strictdecode names (a
// null in rewards[3], a key in another case, a duplicate key; below prefix when the JSON is
// the header alone), else under prefix.
func jsonError(prefix string, err error) error {
	var fe *strictdecode.FieldError
	if errors.As(err, &fe) && fe.Field != "" {
		if prefix != "json" {
			return fieldf(prefix+"."+fe.Field, "%s", fe.Msg)
		}
		return fieldf(fe.Field, "%s", fe.Msg)
	}
	return fieldf(prefix, "%v", err)
}

// reader reads the binary payload; every count is bounded by the bytes left, so a hostile
// count cannot make it allocate more than the (size-limited) message.
type reader struct {
	b     []byte
	field string
	err   error
}

// at names the field the next reads decode (errors name it) and returns d.
func (d *reader) at(field string) *reader {
	d.field = field
	return d
}

func (d *reader) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fieldf(d.field, format, args...)
	}
}

func (d *reader) uvarint(size int) int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("truncated or malformed count")
		return 0
	}
	d.b = d.b[n:]
	if size > 0 && v > uint64(len(d.b)/size) {
		d.fail("count %d does not fit in the %d bytes left", v, len(d.b))
		return 0
	}
	return int(v)
}

// count reads a count of items of at least size bytes each (see uvarint) that may not exceed
// max (the public dimensions: a trajectory has at most H+1 states), before anything is
// allocated for them.
func (d *reader) count(size, max int) int {
	n := d.uvarint(size)
	if d.err == nil && n > max {
		d.fail("count %d exceeds %d (the dimensions' bound)", n, max)
		return 0
	}
	return n
}

// ints reads a count (at most max) and that many zigzag varints.
func (d *reader) ints(max int) []int {
	n := d.count(1, max)
	out := make([]int, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		v, m := binary.Varint(d.b)
		if m <= 0 || v < math.MinInt32 || v > math.MaxInt32 {
			d.fail("malformed integer")
			return nil
		}
		d.b = d.b[m:]
		out = append(out, int(v))
	}
	return out
}

func (d *reader) floats() []float64 { return d.floatsMax(math.MaxInt) }

// floatsMax reads a count (at most max) and that many float64s.
func (d *reader) floatsMax(max int) []float64 {
	n := d.count(8, max)
	if d.err != nil {
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
	}
	return out
}

func (d *reader) rows() [][]float64 {
	n := d.uvarint(1)
	out := make([][]float64, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.floats())
	}
	return out
}

func (dec *Decoder) decodeBinary(data []byte) (Report, error) {
	want := dec.want
	d := &reader{b: data[len(Magic):], field: "binary"}
	if len(d.b) == 0 {
		return nil, fieldf("header.schema", "truncated binary report")
	}
	if v := d.b[0]; v != SchemaVersion {
		return nil, fieldf("header.schema", "unsupported schema version %d (this decoder reads %d)", v, SchemaVersion)
	}
	d.b = d.b[1:]
	n := d.uvarint(1)
	if d.err != nil {
		return nil, d.err
	}
	var h Header
	if dec.canon != nil && bytes.Equal(d.b[:n], dec.canon) {
		h = dec.head.clone() // the strict decoding of these bytes, checked by NewDecoder
	} else {
		if err := strictdecode.Decode(d.b[:n], "json", &h); err != nil {
			return nil, jsonError("header", err)
		}
		if err := h.Check(want); err != nil {
			return nil, err
		}
	}
	d.b = d.b[n:]
	r, err := newReport(want)
	if err != nil {
		return nil, err
	}
	switch r := r.(type) {
	case *Trajectory:
		r.Header = h
		// At most H steps (H+1 states): bounded before allocating; Validate checks the exact
		// lengths (H, or fewer ending in a terminal state).
		H := want.Dims.Horizon
		r.States = d.at("states").ints(H + 1)
		r.Actions = d.at("actions").ints(H)
		r.Rewards = d.at("rewards").floatsMax(H)
	case *Leaves:
		r.Header = h
		steps := d.at("x").uvarint(1)
		for i := 0; i < steps && d.err == nil; i++ {
			nr := d.uvarint(1)
			var step [][]float64
			for j := 0; j < nr && d.err == nil; j++ {
				step = append(step, d.floats())
			}
			r.X = append(r.X, step)
		}
		d.field = "y"
		for i := 0; i < steps && d.err == nil; i++ {
			r.Y = append(r.Y, d.floats())
		}
	case *Path:
		r.Header = h
		r.States = d.at("states").rows()
		r.Inputs = d.at("inputs").rows()
	case *Privatized:
		r.Header = h
		r.Blocks = d.at("blocks").rows()
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fieldf("binary", "%d bytes of trailing data", len(d.b))
	}
	return r, nil
}
