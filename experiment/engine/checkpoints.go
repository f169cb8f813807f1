package engine

import (
	"fmt"

	"github.com/dprl/dprl/internal/membudget"
)

// CheckpointTerms are the memory terms of the results of a plan whose units each record at most
// pts numbers (a curve's checkpoints): per unit, the record and its encoding (unit names it);
// for the collection, every one of the units' records (named "<collected> of <units> units",
// shrunk by lowerSeeds) and the figures and CSVs of figures curves.
func CheckpointTerms(unit, collected string, pts int64, units, figures int, lowerSeeds string) (membudget.Term, membudget.Terms) {
	n := int64(units)
	return membudget.Term{What: unit, Bytes: membudget.Floats(pts) + EncodeBytes(pts)},
		membudget.Terms{{What: fmt.Sprintf("%s of %d units", collected, n), Bytes: membudget.Mul(n, membudget.Floats(pts)+2<<10), Lower: lowerSeeds},
			{What: "figures and CSVs", Bytes: membudget.Mul(int64(figures), 16*membudget.Floats(pts)) + 8<<20}}
}
