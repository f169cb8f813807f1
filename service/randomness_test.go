package service_test

import (
	"crypto/sha256"
	"encoding/json"
	"math/bits"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/store"
)

// TestProductionRefusesASeed: a production server (not --seeded) refuses a creation naming a
// seed (400, field seed) and creates nothing; an experiment created in seeded test mode is
// not served by a production server after a restart (its noise is predictable).
func TestProductionRefusesASeed(t *testing.T) {
	dir := t.TempDir()
	_, url, stop := liveURL(t, dir, false)
	for _, seed := range []string{"0", "1", "18446744073709551615"} {
		code, body := rawReq(t, url, "POST", "/v1/experiments", adminTok, []byte(`{"family":"tabular","agent":"practical-jdp","env":{"name":"riverswim"},"epsilon":1,"delta":1e-5,"capacity":100,"seed":`+seed+`}`), nil)
		if code != http.StatusBadRequest || !strings.Contains(body, `"field":"seed"`) {
			t.Errorf("seed %s on a production server: %d %s", seed, code, body)
		}
	}
	if _, body := rawReq(t, url, "GET", "/v1/experiments", "", nil, nil); body != "{\"experiments\":[]}\n" {
		t.Errorf("refused creations left experiments: %s", body)
	}
	stop()
	seededDir := t.TempDir()
	c, _, stop := live(t, seededDir, true)
	createRiverSwim(t, c, "practical-jdp", 100)
	stop()
	if _, err := service.New(testConfig(seededDir)); err == nil || !strings.Contains(err.Error(), "--seeded") {
		t.Errorf("a production server on a seeded experiment: %v", err)
	}
}

// TestExperimentKeysAreRandom: the keys of many experiments created at once on two production
// servers are 32 bytes, pairwise distinct and far apart (Hamming distance), balanced in their
// bits, and none is a hash of the experiment's ID or creation time.
func TestExperimentKeysAreRandom(t *testing.T) {
	var defs []*store.Experiment
	for range 2 {
		dir := t.TempDir()
		_, url, stop := liveURL(t, dir, false)
		for range 20 {
			if code, body := rawReq(t, url, "POST", "/v1/experiments", adminTok, []byte(`{"family":"tabular","agent":"practical-jdp","env":{"name":"riverswim"},"epsilon":1,"delta":1e-5,"capacity":100}`), nil); code != http.StatusCreated {
				t.Fatalf("create: %d %s", code, body)
			}
		}
		st := stoppedStore(t, dir, stop)
		d, err := st.Experiments()
		st.Close()
		if err != nil || len(d) != 20 {
			t.Fatalf("%d experiments: %v", len(d), err)
		}
		defs = append(defs, d...)
	}
	ones := 0
	for i, d := range defs {
		if len(d.Key) != 32 || d.Seeded {
			t.Fatalf("%s: a %d-byte key (seeded %v)", d.ID, len(d.Key), d.Seeded)
		}
		created, _ := json.Marshal(d.Created)
		for what, h := range map[string][32]byte{"ID": sha256.Sum256([]byte(d.ID)), "creation time": sha256.Sum256(created),
			"creation time (ns)": sha256.Sum256([]byte(d.Created.Format(time.RFC3339Nano)))} {
			if string(h[:]) == string(d.Key) {
				t.Errorf("%s: the key is the SHA-256 of its %s", d.ID, what)
			}
		}
		if strings.Contains(string(d.Key), d.ID) {
			t.Errorf("%s: the key holds its ID", d.ID)
		}
		for _, b := range d.Key {
			ones += bits.OnesCount8(b)
		}
		for _, e := range defs[i+1:] {
			dist := 0
			for k := range d.Key {
				dist += bits.OnesCount8(d.Key[k] ^ e.Key[k])
			}
			// Independent uniform keys: 128 ± 8 bits apart; 64 is 8 standard deviations.
			if dist < 64 {
				t.Errorf("the keys of %s and %s are %d bits apart", d.ID, e.ID, dist)
			}
		}
	}
	// 40 keys: 10 240 bits, 5 120 ± 51 ones; 300 is ≈ 6 standard deviations.
	if n := len(defs) * 256; ones < n/2-300 || ones > n/2+300 {
		t.Errorf("%d of %d key bits are ones", ones, n)
	}
}
