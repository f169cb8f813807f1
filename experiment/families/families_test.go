package families

import (
	"strings"
	"testing"
)

// TestNew: every family is registered, the old family names point to their new family, and
// every reproduction belongs to a registered family.
func TestNew(t *testing.T) {
	r := New()
	if got := strings.Join(r.Names(), ","); got != "linmdp,linmix,lq,tabular" {
		t.Errorf("families %s", got)
	}
	for old, now := range map[string]string{"practical-lq": "lq", "practical-tabular": "tabular"} {
		if _, err := r.Lookup(old); err == nil || !strings.Contains(err.Error(), `family "`+now+`"`) {
			t.Errorf("%s: %v", old, err)
		}
	}
	if len(r.ReproductionNames()) < 8 {
		t.Errorf("reproductions %v", r.ReproductionNames())
	}
	for name, e := range r.Reproductions() {
		if _, err := r.Lookup(e.Family); err != nil {
			t.Errorf("reproduction %s: %v", name, err)
		}
	}
}
