// Package privacytest holds the checks every family's privacy tests share, so that the same
// property is asserted the same way for tabular, linear-MDP, linear-mixture and LQ agents:
//
//   - OffGrid: every release of the Secure source is an exact multiple of its noise's grid
//     step (practical-privacy spec §7);
//   - Reach: which values are reachable from an object (to show, by reflection over live
//     values, that an LDP server holds no noise source, random stream or seed from which it
//     could regenerate the users' noise);
//   - Hostile: the non-finite and out-of-range inputs a buggy or hostile client can send.
//
// It is imported by tests only.
package privacytest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// Hostile lists reward/feature/value inputs a hostile client can send: non-finite values,
// huge and negative ones, and values just outside the unit interval.
var Hostile = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e9, -5, 1 + 1e-9, -1e-300, 1e308}

// OffGrid returns the index of the first value that is not an exact integer multiple of
// gamma(i) (a grid step, > 0), or −1 if every value lies on its grid.
func OffGrid(values []float64, gamma func(i int) float64) int {
	for i, v := range values {
		q := v / gamma(i)
		if math.IsNaN(q) || math.IsInf(q, 0) || q != math.Trunc(q) {
			return i
		}
	}
	return -1
}

// Grid returns the grid step of Secure noise of calibration c with its scale multiplied by mult.
func Grid(c noise.Calibration, mult float64) float64 {
	switch c.Kind {
	case noise.Laplace:
		return noise.LaplaceGranularity(c.Scale * mult)
	case noise.Gaussian:
		return noise.GaussianGranularity(c.Scale * mult)
	}
	return math.NaN()
}

// RandomState reports whether v is randomness state or its origin: a noise source (Seeded,
// Secure or any value implementing noise.Source), a math/rand/v2 generator or source, or an
// rng.Seed from which streams can be derived.
func RandomState(v reflect.Value) bool {
	t := v.Type()
	src := reflect.TypeOf((*noise.Source)(nil)).Elem()
	rsrc := reflect.TypeOf((*rand.Source)(nil)).Elem()
	switch {
	case t.Kind() != reflect.Interface && (t.Implements(src) || t.Implements(rsrc)):
		return true
	case t == reflect.TypeOf(rng.Seed{}) || t == reflect.TypeOf(rand.Rand{}):
		return true
	case t.Kind() != reflect.Interface && t.Kind() != reflect.Pointer && (reflect.PointerTo(t).Implements(src) || reflect.PointerTo(t).Implements(rsrc)):
		return true
	}
	return false
}

// Reach walks every value reachable from root — through pointers, interfaces, slices, arrays,
// maps and all struct fields, exported or not — and returns the path of the first one for
// which match is true ("" and false if none). Function values are opaque and not followed: the
// types checked here have none on their data path.
func Reach(root any, match func(reflect.Value) bool) (string, bool) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value, path string) (string, bool)
	walk = func(v reflect.Value, path string) (string, bool) {
		if !v.IsValid() {
			return "", false
		}
		if match(v) {
			return path, true
		}
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return "", false
			}
			seen[v.Pointer()] = true
			return walk(v.Elem(), path)
		case reflect.Interface:
			if v.IsNil() {
				return "", false
			}
			return walk(v.Elem(), path)
		case reflect.Slice, reflect.Array:
			if v.Kind() == reflect.Slice && v.IsNil() {
				return "", false
			}
			if k := v.Type().Elem().Kind(); k == reflect.Float64 || k == reflect.Int || k == reflect.Bool {
				return "", false // scalar data
			}
			for i := 0; i < v.Len(); i++ {
				if p, ok := walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); ok {
					return p, true
				}
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				if p, ok := walk(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key())); ok {
					return p, true
				}
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if p, ok := walk(v.Field(i), path+"."+v.Type().Field(i).Name); ok {
					return p, true
				}
			}
		}
		return "", false
	}
	return walk(reflect.ValueOf(root), strings.TrimPrefix(reflect.TypeOf(root).String(), "*"))
}

// NoiseOrSeed reports whether v is a noise source (any value implementing noise.Source) or an
// rng.Seed: state no LDP server has any use for, since with it the server could regenerate
// noise. (A server may own other random streams, e.g. for tie-breaking; SharedState checks
// that none of them is a user's.)
func NoiseOrSeed(v reflect.Value) bool {
	t := v.Type()
	src := reflect.TypeOf((*noise.Source)(nil)).Elem()
	if t == reflect.TypeOf(rng.Seed{}) {
		return true
	}
	if t.Kind() == reflect.Interface {
		return false
	}
	return t.Implements(src) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(src))
}

// SharedState returns the path (from server) of a pointer to randomness state that is also
// reachable from client, e.g. the users' noise generator, or "" and false if they share none.
func SharedState(client, server any) (string, bool) {
	ptrs := map[uintptr]bool{}
	Reach(client, func(v reflect.Value) bool {
		if v.Kind() == reflect.Pointer && !v.IsNil() && RandomState(v) {
			ptrs[v.Pointer()] = true
		}
		return false
	})
	if len(ptrs) == 0 {
		return "", false
	}
	return Reach(server, func(v reflect.Value) bool {
		return v.Kind() == reflect.Pointer && !v.IsNil() && ptrs[v.Pointer()]
	})
}
