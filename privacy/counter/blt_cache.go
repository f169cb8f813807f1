package counter

import "sync"

//go:generate go test -run ^TestWriteSqrtBLTTable$ -write-blt-table .

// bltKey identifies a square-root BLT fit: it depends on these two public numbers only.
type bltKey struct{ capacity, buffers int }

// maxBLTMemo bounds the in-process memo of fresh fits (tests sweep many small capacities; a
// fit outside the table and the memo is simply recomputed).
const maxBLTMemo = 512

var bltMemo struct {
	sync.Mutex
	m map[bltKey]BLTParams
}

// cachedSqrtBLT returns the fit of fitSqrtBLT(capacity, buffers), bit for bit: from the
// committed table (blt_table.go), else from the memo, else fitted afresh (and memoised). The
// result is a copy the caller may modify.
func cachedSqrtBLT(capacity, buffers int) (BLTParams, error) {
	k := bltKey{capacity, buffers}
	if p, ok := sqrtBLTTable[k]; ok {
		return p.clone(), nil
	}
	bltMemo.Lock()
	p, ok := bltMemo.m[k]
	bltMemo.Unlock()
	if ok {
		return p.clone(), nil
	}
	p, err := fitSqrtBLT(capacity, buffers)
	if err != nil {
		return BLTParams{}, err
	}
	bltMemo.Lock()
	if bltMemo.m == nil {
		bltMemo.m = make(map[bltKey]BLTParams)
	}
	if len(bltMemo.m) < maxBLTMemo {
		bltMemo.m[k] = p.clone()
	}
	bltMemo.Unlock()
	return p, nil
}

// clone returns a deep copy of p.
func (p BLTParams) clone() BLTParams {
	return BLTParams{Theta: append([]float64(nil), p.Theta...), Omega: append([]float64(nil), p.Omega...)}
}
