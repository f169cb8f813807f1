package protocol

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

type walkInner struct {
	xs  []float64
	n   int
	tag string
}

type walkRoot struct {
	a, b    *walkInner // shared: a == b
	whole   []float64
	view    []float64 // the same header as whole
	m       map[string][]int
	any     any
	lazy    any
	rng     *rand.Rand
	f       func() int
	skipped float64 `state:"-"`
	arr     [3]uint8
	c       complex128
	ok      bool
}

func newWalkRoot() *walkRoot {
	in := &walkInner{xs: make([]float64, 2)}
	w := &walkRoot{a: in, b: in, whole: make([]float64, 3), m: map[string][]int{}, any: &walkInner{},
		rng: rand.New(rand.NewChaCha8([32]byte{1})), f: func() int { return 1 }}
	w.view = w.whole
	return w
}

// TestStateRoundTrip: MarshalState/RestoreState restore every kind of value into a fresh root,
// keep shared pointers and slices shared, continue random streams exactly, skip `state:"-"`
// fields and functions, and refuse encodings that do not fit.
func TestStateRoundTrip(t *testing.T) {
	w := newWalkRoot()
	w.a.xs[1], w.a.n, w.a.tag = math.Inf(-1), -7, "é"
	w.whole = append(w.whole, 4) // view no longer shares whole's array
	w.view[0] = math.NaN()
	w.m["x"], w.m["y"] = []int{1, 2}, nil
	w.any.(*walkInner).n = 9
	w.lazy = &walkInner{n: 3}
	w.rng.Uint64()
	w.skipped, w.arr, w.c, w.ok = 5, [3]uint8{1, 2, 3}, complex(1, -2), true
	b, err := MarshalState(w)
	if err != nil {
		t.Fatal(err)
	}
	r := newWalkRoot()
	if err := RestoreState(r, b, (*walkInner)(nil)); err != nil {
		t.Fatal(err)
	}
	if r.a != r.b || r.a.n != -7 || r.a.tag != "é" || !math.IsInf(r.a.xs[1], -1) {
		t.Errorf("inner %+v (shared %v)", r.a, r.a == r.b)
	}
	if len(r.whole) != 4 || r.whole[3] != 4 || !math.IsNaN(r.view[0]) || &r.view[0] == &r.whole[0] {
		t.Errorf("slices: whole %v view %v", r.whole, r.view)
	}
	if !reflect.DeepEqual(r.m, w.m) || r.any.(*walkInner).n != 9 || r.lazy.(*walkInner).n != 3 {
		t.Errorf("map %v, any %+v, lazy %+v", r.m, r.any, r.lazy)
	}
	if r.skipped != 0 || r.arr != w.arr || r.c != w.c || !r.ok || r.f() != 1 {
		t.Errorf("skipped %v arr %v c %v ok %v", r.skipped, r.arr, r.c, r.ok)
	}
	for i := range 10 {
		if x, y := w.rng.Uint64(), r.rng.Uint64(); x != y {
			t.Fatalf("draw %d: restored %d, original %d", i, y, x)
		}
	}
	// A fresh root without the lazy type, truncated or trailing bytes, a bad magic: errors.
	if err := RestoreState(newWalkRoot(), b); err == nil || !strings.Contains(err.Error(), "lazy") && !strings.Contains(err.Error(), "fresh curator nil") {
		t.Errorf("lazy interface without its type: %v", err)
	}
	bads := [][]byte{append(append([]byte(nil), b...), 0), []byte("nope")}
	for n := len(stateMagic); n < len(b); n++ {
		bads = append(bads, b[:n])
	}
	for _, bad := range bads {
		if err := RestoreState(newWalkRoot(), bad, (*walkInner)(nil)); err == nil {
			t.Errorf("RestoreState accepted %d bad bytes", len(bad))
		}
	}
	for i := len(stateMagic); i < len(b); i++ { // a flipped byte: an error or a value, never a panic
		c := append([]byte(nil), b...)
		c[i] ^= 0xff
		_ = RestoreState(newWalkRoot(), c, (*walkInner)(nil))
	}
	if _, err := MarshalState(&struct{ c chan int }{make(chan int)}); err == nil {
		t.Error("a channel was encoded")
	}
}
