package protocol

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"unsafe"
)

// Snapshotter is implemented by a curator whose complete state can be saved and restored: a
// service (`dprl serve`) snapshots it so that a restart restores the snapshot and replays only
// the reports after it, instead of the whole log, and may then delete the raw reports the
// snapshot covers. The state is everything Receive and Publish read or write, including the
// exact position of every noise source and public random stream: a restored curator draws
// exactly the noise the uninterrupted one would have drawn (none redrawn, none reused) and
// publishes bit-identical policies.
//
// RestoreState is called on a fresh curator built exactly as the snapshotted one was (same
// spec, same streams) before any report, and leaves it in the snapshotted state. A curator
// that does not implement Snapshotter is rebuilt by replaying its whole log.
type Snapshotter interface {
	MarshalState() ([]byte, error)
	RestoreState(b []byte) error
}

// stateMagic begins every encoded state (its format version).
const stateMagic = "dprl-state/1\n"

// MarshalState encodes the complete state reachable from root (a non-nil pointer, usually
// the curator itself) by walking its object graph: every number, string, slice, array, map,
// struct field (exported or not), pointer and interface, in field order. A value whose pointer
// implements encoding.BinaryMarshaler (the random sources of math/rand/v2, noise.Secure) is
// encoded by it. Functions are not state (they are rebuilt with the curator and skipped);
// channels and unsafe pointers cannot be encoded (an error). Pointers reached twice are
// encoded once and restored shared.
//
// It is the generic implementation the families' curators use for Snapshotter: RestoreState
// decodes it into a fresh root of the same construction.
func MarshalState(root any) ([]byte, error) {
	v := reflect.ValueOf(root)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, errors.New("state: the root must be a non-nil pointer")
	}
	e := &stateEncoder{ids: map[ptrKey]uint64{}, slices: map[sliceKey]uint64{}}
	e.buf.WriteString(stateMagic)
	if err := e.value(v, "root"); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

// RestoreState decodes b (from MarshalState) into root, a fresh value built exactly as the
// encoded one was. An interface the fresh root holds as nil (a source created lazily) is
// restored only if its dynamic type is the type of one of lazy (typed nil pointers, for
// example (*noise.Secure)(nil)). It fails when the encoding does not fit root's shape (an interface of
// another dynamic type, a truncated or trailing encoding); root is then in an unspecified
// state and must be discarded.
func RestoreState(root any, b []byte, lazy ...any) error {
	v := reflect.ValueOf(root)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return errors.New("state: the root must be a non-nil pointer")
	}
	if !bytes.HasPrefix(b, []byte(stateMagic)) {
		return errors.New("state: not an encoded curator state (bad magic)")
	}
	d := &stateDecoder{b: b[len(stateMagic):], lazy: map[string]reflect.Type{}}
	for _, l := range lazy {
		t := reflect.TypeOf(l)
		d.lazy[typeName(t)] = t
	}
	if err := d.value(v, "root"); err != nil {
		return err
	}
	if len(d.b) != 0 {
		return fmt.Errorf("state: %d bytes left after decoding", len(d.b))
	}
	return nil
}

type ptrKey struct {
	addr uintptr
	t    reflect.Type
}

var (
	binMarshaler   = reflect.TypeFor[encoding.BinaryMarshaler]()
	binUnmarshaler = reflect.TypeFor[encoding.BinaryUnmarshaler]()
)

// The tags of a pointer or slice: nil, a new value (it follows), or a reference to one encoded
// before.
const (
	tagNil = 0
	tagNew = 1
	tagRef = 2
)

type stateEncoder struct {
	buf    bytes.Buffer
	ids    map[ptrKey]uint64
	slices map[sliceKey]uint64
}

// sliceKey identifies a slice header: two fields holding the same header share their backing
// array (a release that is the counter's own prefix, say) and are restored shared.
type sliceKey struct {
	ptr      uintptr
	len, cap int
	t        reflect.Type
}

func (e *stateEncoder) uvarint(x uint64) { e.buf.Write(binary.AppendUvarint(nil, x)) }

func (e *stateEncoder) bytes(b []byte) {
	e.uvarint(uint64(len(b)))
	e.buf.Write(b)
}

// encodeShared writes the tag of a pointer or slice k: a reference to its id in seen when it was
// encoded before (done: true), else tagNew, k taking the next id (its value must follow).
func encodeShared[K comparable](e *stateEncoder, seen map[K]uint64, k K) (done bool) {
	if id, ok := seen[k]; ok {
		e.buf.WriteByte(tagRef)
		e.uvarint(id)
		return true
	}
	seen[k] = uint64(len(seen))
	e.buf.WriteByte(tagNew)
	return false
}

// exported returns v (addressable) as a value whose unexported origin is forgotten, so that
// it can be read and set.
func exported(v reflect.Value) reflect.Value {
	if v.CanAddr() && !v.CanSet() {
		return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	return v
}

func (e *stateEncoder) value(v reflect.Value, path string) error {
	v = exported(v)
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			e.buf.WriteByte(1)
		} else {
			e.buf.WriteByte(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.buf.Write(binary.AppendVarint(nil, v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.uvarint(v.Uint())
	case reflect.Float32, reflect.Float64:
		e.buf.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(v.Float())))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		e.buf.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(real(c))))
		e.buf.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(imag(c))))
	case reflect.String:
		e.bytes([]byte(v.String()))
	case reflect.Func:
		// Not state: rebuilt with the curator.
	case reflect.Array:
		return elems(v, path, e.value)
	case reflect.Slice:
		if v.IsNil() {
			e.buf.WriteByte(tagNil)
			return nil
		}
		if v.Cap() == 0 {
			e.buf.WriteByte(tagNew) // no backing array to share
		} else if encodeShared(e, e.slices, sliceKey{v.Pointer(), v.Len(), v.Cap(), v.Type()}) {
			return nil
		}
		e.uvarint(uint64(v.Cap()))
		e.uvarint(uint64(v.Len()))
		if v.Type().Elem().Kind() == reflect.Float64 {
			for _, x := range unsafe.Slice((*float64)(v.UnsafePointer()), v.Len()) {
				e.buf.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)))
			}
			return nil
		}
		return elems(v, path, e.value)
	case reflect.Map:
		if v.IsNil() {
			e.buf.WriteByte(0)
			return nil
		}
		e.buf.WriteByte(1)
		type entry struct{ k, v []byte }
		var entries []entry
		it := v.MapRange()
		for it.Next() {
			ke := &stateEncoder{ids: map[ptrKey]uint64{}, slices: map[sliceKey]uint64{}}
			if err := ke.value(copyOf(it.Key()), path+"[key]"); err != nil {
				return err
			}
			ve := &stateEncoder{ids: map[ptrKey]uint64{}, slices: map[sliceKey]uint64{}} // entries are sorted: no sharing across them
			if err := ve.value(copyOf(it.Value()), path+"[value]"); err != nil {
				return err
			}
			entries = append(entries, entry{ke.buf.Bytes(), ve.buf.Bytes()})
		}
		slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
		e.uvarint(uint64(len(entries)))
		for _, en := range entries {
			e.buf.Write(en.k)
			e.buf.Write(en.v)
		}
	case reflect.Pointer:
		if v.IsNil() {
			e.buf.WriteByte(tagNil)
			return nil
		}
		if encodeShared(e, e.ids, ptrKey{v.Pointer(), v.Type()}) {
			return nil
		}
		if v.Type().Implements(binMarshaler) && v.Type().Implements(binUnmarshaler) {
			b, err := v.Interface().(encoding.BinaryMarshaler).MarshalBinary()
			if err != nil {
				return fmt.Errorf("state: %s (%s): %w", path, v.Type(), err)
			}
			e.bytes(b)
			return nil
		}
		return e.value(v.Elem(), path)
	case reflect.Interface:
		if v.IsNil() {
			e.buf.WriteByte(0)
			return nil
		}
		e.buf.WriteByte(1)
		el := v.Elem()
		e.bytes([]byte(typeName(el.Type())))
		return e.value(copyOf(el), path)
	case reflect.Struct:
		return fields(v, path, e.value)
	default: // Chan, UnsafePointer
		return fmt.Errorf("state: %s: a %s cannot be snapshotted", path, v.Type())
	}
	return nil
}

// elems applies f (the encoder's or the decoder's value) to the elements of the array or slice
// v in order.
func elems(v reflect.Value, path string, f func(v reflect.Value, path string) error) error {
	for i := range v.Len() {
		if err := f(v.Index(i), path); err != nil {
			return err
		}
	}
	return nil
}

// fields applies f (the encoder's or the decoder's value) to the fields of the struct v in
// order, with their paths: every field but those tagged `state:"-"`.
func fields(v reflect.Value, path string, f func(v reflect.Value, path string) error) error {
	t := v.Type()
	for i := range v.NumField() {
		if t.Field(i).Tag.Get("state") == "-" {
			continue
		}
		if err := f(v.Field(i), path+"."+t.Field(i).Name); err != nil {
			return err
		}
	}
	return nil
}

// copyOf returns an addressable copy of v (a map entry or an interface's dynamic value, which
// are not addressable). A pointer is returned as is: it is followed, not copied.
func copyOf(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Pointer {
		return v
	}
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}

func typeName(t reflect.Type) string {
	if t.PkgPath() != "" {
		return t.PkgPath() + "." + t.Name()
	}
	return t.String()
}

type stateDecoder struct {
	b      []byte
	ptrs   []reflect.Value
	slices []reflect.Value
	lazy   map[string]reflect.Type
}

var errShort = errors.New("state: truncated encoding")

// present reads a nil marker: false (v zeroed) for a nil map or interface, true when a value
// follows.
func (d *stateDecoder) present(v reflect.Value) (bool, error) {
	c, err := d.byte1()
	if err != nil || c != 0 {
		return err == nil, err
	}
	v.SetZero()
	return false, nil
}

func (d *stateDecoder) byte1() (byte, error) {
	if len(d.b) == 0 {
		return 0, errShort
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c, nil
}

func (d *stateDecoder) uvarint() (uint64, error) {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, errShort
	}
	d.b = d.b[n:]
	return x, nil
}

func (d *stateDecoder) u64() (uint64, error) {
	if len(d.b) < 8 {
		return 0, errShort
	}
	x := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return x, nil
}

func (d *stateDecoder) bytes() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)) {
		return nil, errShort
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b, nil
}

// shared reads the tag of a pointer or slice (kind) and resolves it: nil (v zeroed) and a
// reference to the id-th value of seen (v set to it) are done; tagNew is not (the value
// follows).
func (d *stateDecoder) shared(v reflect.Value, path, kind string, seen []reflect.Value) (done bool, err error) {
	tag, err := d.byte1()
	if err != nil {
		return true, err
	}
	switch tag {
	case tagNil:
		v.SetZero()
		return true, nil
	case tagRef:
		id, err := d.uvarint()
		if err != nil {
			return true, err
		}
		if id >= uint64(len(seen)) || seen[id].Type() != v.Type() {
			return true, fmt.Errorf("state: %s: bad shared %s %d", path, kind, id)
		}
		v.Set(seen[id])
		return true, nil
	case tagNew:
		return false, nil
	}
	return true, fmt.Errorf("state: %s: bad %s tag %d", path, kind, tag)
}

// value decodes into v, which must be settable (or addressable through exported).
func (d *stateDecoder) value(v reflect.Value, path string) error {
	v = exported(v)
	switch v.Kind() {
	case reflect.Bool:
		c, err := d.byte1()
		if err != nil {
			return err
		}
		v.SetBool(c != 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, n := binary.Varint(d.b)
		if n <= 0 {
			return errShort
		}
		d.b = d.b[n:]
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x, err := d.uvarint()
		if err != nil {
			return err
		}
		v.SetUint(x)
	case reflect.Float32, reflect.Float64:
		x, err := d.u64()
		if err != nil {
			return err
		}
		v.SetFloat(math.Float64frombits(x))
	case reflect.Complex64, reflect.Complex128:
		re, err := d.u64()
		if err != nil {
			return err
		}
		im, err := d.u64()
		if err != nil {
			return err
		}
		v.SetComplex(complex(math.Float64frombits(re), math.Float64frombits(im)))
	case reflect.String:
		b, err := d.bytes()
		if err != nil {
			return err
		}
		v.SetString(string(b))
	case reflect.Func:
	case reflect.Array:
		return elems(v, path, d.value)
	case reflect.Slice:
		if done, err := d.shared(v, path, "slice", d.slices); done {
			return err
		}
		c64, err := d.uvarint()
		if err != nil {
			return err
		}
		n64, err := d.uvarint()
		if err != nil {
			return err
		}
		if n64 > uint64(len(d.b)) || c64 < n64 { // every element takes at least one byte
			return errShort
		}
		if c64 > n64+1<<20 { // a spare capacity beyond any curator's: keep the length only
			c64 = n64
		}
		n := int(n64)
		// A new backing array: the fresh curator's arrays may alias each other as built, not
		// as the snapshotted curator's do now.
		v.Set(reflect.MakeSlice(v.Type(), n, int(c64)))
		if c64 > 0 {
			d.slices = append(d.slices, v)
		}
		if v.Type().Elem().Kind() == reflect.Float64 {
			xs := unsafe.Slice((*float64)(v.UnsafePointer()), n)
			if len(d.b) < 8*n {
				return errShort
			}
			for i := range xs {
				xs[i] = math.Float64frombits(binary.LittleEndian.Uint64(d.b[8*i:]))
			}
			d.b = d.b[8*n:]
			return nil
		}
		return elems(v, path, d.value)
	case reflect.Map:
		if ok, err := d.present(v); !ok || err != nil {
			return err
		}
		n, err := d.uvarint()
		if err != nil {
			return err
		}
		if n > uint64(len(d.b)) {
			return errShort
		}
		m := reflect.MakeMapWithSize(v.Type(), int(n))
		saved, savedSlices := d.ptrs, d.slices
		defer func() { d.ptrs, d.slices = saved, savedSlices }()
		for range n {
			d.ptrs, d.slices = nil, nil // each entry was encoded on its own (see the encoder)
			k := reflect.New(v.Type().Key()).Elem()
			if err := d.value(k, path+"[key]"); err != nil {
				return err
			}
			x := reflect.New(v.Type().Elem()).Elem()
			if old := v.MapIndex(k); old.IsValid() && v.Type().Elem().Kind() == reflect.Interface {
				x.Set(old) // an interface needs its dynamic type from the fresh value
			}
			if err := d.value(x, path+"[value]"); err != nil {
				return err
			}
			m.SetMapIndex(k, x)
		}
		v.Set(m)
	case reflect.Pointer:
		if done, err := d.shared(v, path, "pointer", d.ptrs); done {
			return err
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.ptrs = append(d.ptrs, v)
		if v.Type().Implements(binMarshaler) && v.Type().Implements(binUnmarshaler) {
			b, err := d.bytes()
			if err != nil {
				return err
			}
			if err := v.Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary(b); err != nil {
				return fmt.Errorf("state: %s (%s): %w", path, v.Type(), err)
			}
			return nil
		}
		return d.value(v.Elem(), path)
	case reflect.Interface:
		if ok, err := d.present(v); !ok || err != nil {
			return err
		}
		name, err := d.bytes()
		if err != nil {
			return err
		}
		var el reflect.Value
		switch lt, ok := d.lazy[string(name)]; {
		case !v.IsNil() && typeName(v.Elem().Type()) == string(name):
			el = reflect.New(v.Elem().Type()).Elem() // settable, even for a pointer
			el.Set(v.Elem())
		case v.IsNil() && ok && lt.Kind() == reflect.Pointer:
			el = reflect.New(lt).Elem() // a nil pointer: decoding allocates it
		default:
			return fmt.Errorf("state: %s: the snapshot holds a %s, the fresh curator %s", path, name, dynName(v))
		}
		if err := d.value(el, path); err != nil {
			return err
		}
		v.Set(el)
	case reflect.Struct:
		return fields(v, path, d.value)
	default:
		return fmt.Errorf("state: %s: a %s cannot be restored", path, v.Type())
	}
	return nil
}

func dynName(v reflect.Value) string {
	if v.IsNil() {
		return "nil"
	}
	return typeName(v.Elem().Type())
}
