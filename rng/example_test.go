package rng_test

import (
	"fmt"

	"github.com/dprl/dprl/rng"
)

// One run seed derives independent, reproducible streams by path.
func ExampleSeed() {
	root := rng.NewSeed(42)
	a := root.Child("users").Index(7).Rand()
	b := rng.NewSeed(42).Child("users").Index(7).Rand()
	fmt.Println(a.Uint64() == b.Uint64())
	// Output: true
}
