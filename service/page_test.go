package service_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/store"
)

var update = flag.Bool("update", false, "rewrite docs/serve-status.png from the screenshot of TestStatusPageInChromium")

// chromiumBinary returns the headless browser on PATH. Without one the test is skipped, unless
// DPRL_REQUIRE_CHROMIUM=1 (CI), where it fails.
func chromiumBinary(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium, chromium-browser or google-chrome on PATH (Debian: apt-get install chromium)"
	if os.Getenv("DPRL_REQUIRE_CHROMIUM") == "1" {
		t.Fatal(msg + "; DPRL_REQUIRE_CHROMIUM=1 requires it")
	}
	t.Skip(msg + "; skipping the browser test of the status page")
	return ""
}

// headless runs the browser on url with args (a fresh profile, 60 s at most) and returns its
// standard output.
func headless(t *testing.T, bin, url string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, lastLines(stderr.String(), 20))
	}
	return stdout.Bytes()
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// TestStatusPageInChromium renders the status page of a seeded server in headless Chromium
// and checks the DOM the browser built: every experiment's public quantities equal its
// ledger's, the simulated regret curve is drawn, the seeded-mode warning is shown, and
// nothing private (report contents, tokens, user IDs, credentials, keys, user digests)
// appears. With -update, its screenshot becomes docs/serve-status.png.
func TestStatusPageInChromium(t *testing.T) {
	bin := chromiumBinary(t)
	ctx := context.Background()
	dir := t.TempDir()
	// The raw reports are retained (audit mode), so that the test can check none of them
	// shows on the page.
	c, s, stop := live(t, dir, true, func(c *service.Config) { c.RetainReports = true })
	url := serverURL(t, s) + "/" // httptest: a real listener on 127.0.0.1
	create := func(agent string) *client.Ledger {
		l, err := c.Create(ctx, client.CreateRequest{Family: "tabular", Agent: agent, Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 10}},
			Epsilon: 1, Delta: 1e-5, Capacity: 1500, Seed: seedp(7), Simulation: true})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	jdp, ldp := create("practical-jdp"), create("practical-ldp")
	full, err := client.Simulate(ctx, c, client.SimOptions{Experiment: jdp.Experiment, Registry: registry(), Seed: seedp(7)})
	if err != nil {
		t.Fatal(err)
	}
	const some = 300
	part, err := client.Simulate(ctx, c, client.SimOptions{Experiment: ldp.Experiment, Registry: registry(), Seed: seedp(7), Users: some, UserPrefix: "other-"})
	if err != nil {
		t.Fatal(err)
	}
	if full.Accepted != jdp.Capacity || part.Accepted != some {
		t.Fatalf("%d and %d reports acknowledged, want %d and %d", full.Accepted, part.Accepted, jdp.Capacity, some)
	}
	simulated := map[string]int{jdp.Experiment: full.Accepted, ldp.Experiment: part.Accepted}
	// Credentials are deterministic (an HMAC of the experiment and user IDs): these are the
	// ones the simulated users sent.
	var creds []string
	for id, users := range map[string][]string{jdp.Experiment: {"sim-1", "sim-2", "sim-1500"}, ldp.Experiment: {"other-1", "other-300"}} {
		m, err := c.Credentials(ctx, id, users)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range m {
			creds = append(creds, v)
		}
	}

	// The screenshot shows the two seeded experiments (in the order of their random IDs).
	shot := filepath.Join(t.TempDir(), "status.png")
	headless(t, bin, url, "--screenshot="+shot, "--window-size=1200,1000")
	// A third experiment without a seed: it has a secret key (which must not show) and no
	// simulated users (so no curve).
	keyed, err := c.Create(ctx, client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 10}},
		Epsilon: 1, Delta: 1e-5, Capacity: 100})
	if err != nil {
		t.Fatal(err)
	}
	simulated[keyed.Experiment] = 0
	dom := string(headless(t, bin, url, "--dump-dom"))

	// What the browser shows.
	if !strings.Contains(dom, `id="seeded"`) || !strings.Contains(dom, "SEEDED TEST MODE") {
		t.Error("the seeded-mode warning is missing")
	}
	for _, id := range []string{jdp.Experiment, ldp.Experiment, keyed.Experiment} {
		led, err := c.Ledger(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		sec := section(t, dom, id)
		if sec == "" {
			continue
		}
		check := func(what, re, want string) {
			t.Helper()
			m := regexp.MustCompile(re).FindStringSubmatch(sec)
			if m == nil {
				t.Errorf("%s: no %s on the page", id, what)
			} else if got := strings.TrimSpace(html.UnescapeString(m[1])); got != want {
				t.Errorf("%s: %s %q on the page, %q in the ledger", id, what, got, want)
			}
		}
		check("family and agent", `<h2>[^<]*— ([^<]*)</h2>`, led.Family+" / "+led.Agent)
		check("users served", `<span class="users">([^<]*)</span>`, strconv.Itoa(led.UsersServed))
		check("capacity", `<span class="capacity">([^<]*)</span>`, strconv.Itoa(led.Capacity))
		check("guarantee", `(?s)<td class="guarantee">(.*?)</td>`, led.Statement)
		check("policy version", `<td class="version">(\d+) `, strconv.FormatUint(led.PolicyVersion, 10))
		check("release count", `<td class="version">\d+ \((\d+) versions recorded\)`, strconv.Itoa(len(led.Releases)))
		check("kind", `<tr><th>reports</th><td>(\w+)`, led.Kind)
		if led.Statement == "" || led.PolicyVersion == 0 || led.UsersServed != simulated[id] || led.Seeded != (id != keyed.Experiment) {
			t.Errorf("%s: ledger %+v after %d simulated users", id, led, simulated[id])
		}
		if simulated[id] == 0 {
			if strings.Contains(sec, "<svg") {
				t.Errorf("%s: a regret curve without simulated users", id)
			}
			continue
		}
		// The regret curve: an SVG polyline of the simulated users' cumulative regret (sampled:
		// users 1, 2, 4, … and then every 1/200 of the capacity), its axis ending at the last
		// sampled user.
		m := regexp.MustCompile(`(?s)<svg class="regret"[^>]*>.*?<text[^>]*>(\d+) users</text>.*?<polyline[^>]*points="([^"]*)".*?</svg>`).FindStringSubmatch(sec)
		if m == nil {
			t.Errorf("%s: no regret curve (%d simulated users)", id, simulated[id])
			continue
		}
		last, _ := strconv.Atoi(m[1])
		if step := max(led.Capacity/200, 1); last > simulated[id] || last <= simulated[id]-step {
			t.Errorf("%s: the curve's axis ends at %d users, %d were simulated", id, last, simulated[id])
		}
		pts, prev := strings.Fields(m[2]), -1.0
		for _, p := range pts {
			var x, y float64
			if _, err := fmt.Sscanf(p, "%g,%g", &x, &y); err != nil || x < prev || x > 480 || y < 0 || y > 200 {
				t.Errorf("%s: curve point %q out of the plot (%v)", id, p, err)
				break
			}
			prev = x
		}
		if len(pts) < 10 || len(pts) > simulated[id] || prev != 480 {
			t.Errorf("%s: a curve of %d points ending at x = %g", id, len(pts), prev)
		}
	}

	// What it must not show. The keys are read after the server released the store.
	st := stoppedStore(t, dir, stop)
	defer st.Close()
	private := newSecrets()
	for _, w := range []string{"states", "rewards", "actions", "blocks", "trajectory\":", "sim-", "other-1", "credential\":"} {
		private["report or user field "+w] = w
	}
	for i, v := range creds {
		private[fmt.Sprint("credential ", i)] = v
	}
	secret := private.addEncoded
	uk := st.UserKey()
	secret("server user key", uk[:])
	defs, err := st.Experiments()
	if err != nil || len(defs) != 3 {
		t.Fatalf("%d experiments in the store: %v", len(defs), err)
	}
	for _, d := range defs {
		// A seeded experiment draws its randomness from its seed and has no key; a real one's
		// key is 32 random bytes.
		if len(d.Key) > 0 || !d.Seeded {
			if len(d.Key) != 32 {
				t.Fatalf("%s: a %d-byte key", d.ID, len(d.Key))
			}
			secret("key of "+d.ID, d.Key)
		}
		n := 0
		if err := st.Replay(d.ID, func(seq uint64, r *store.Record) error {
			if n++; n <= 3 {
				secret(fmt.Sprintf("user digest %d of %s", seq, d.ID), r.User[:])
				secret(fmt.Sprintf("report %d of %s", seq, d.ID), r.Report[:min(len(r.Report), 24)])
			}
			return nil
		}); err != nil || n != simulated[d.ID] {
			t.Fatalf("%s: %d records replayed (%v)", d.ID, n, err)
		}
	}
	lower := strings.ToLower(dom)
	for what, v := range private {
		if strings.Contains(dom, v) || strings.Contains(lower, strings.ToLower(v)) {
			t.Errorf("the page shows the %s (%q)", what, v)
		}
	}

	// The screenshot: a PNG of the whole window.
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if r := img.Bounds(); r.Dx() != 1200 || r.Dy() != 1000 {
		t.Errorf("screenshot of %v, want 1200×1000", r)
	}
	t.Logf("%s: %d bytes of DOM, a %d-byte screenshot", filepath.Base(bin), len(dom), len(b))
	if *update {
		var small bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&small, paletted(img)); err != nil {
			t.Fatal(err)
		}
		if small.Len() > len(b) {
			small.Reset()
			small.Write(b)
		}
		out := filepath.Join("..", "docs", "serve-status.png")
		if err := os.WriteFile(out, small.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, small.Len())
	}
}

// section returns the experiment's section of the DOM ("" after reporting its absence).
func section(t *testing.T, dom, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<section class="experiment" id="exp-` + regexp.QuoteMeta(id) + `">(.*?)</section>`).FindStringSubmatch(dom)
	if m == nil {
		t.Errorf("no section exp-%s on the page", id)
		return ""
	}
	return m[1]
}

// paletted maps img to its 256 most frequent colours (nearest, no dithering: a page of text
// and flat colours loses nothing visible), for a small PNG in docs/.
func paletted(img image.Image) *image.Paletted {
	r := img.Bounds()
	count := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			count[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	cs := make([]color.RGBA, 0, len(count))
	for c := range count {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		if count[cs[i]] != count[cs[j]] {
			return count[cs[i]] > count[cs[j]]
		}
		a, b := cs[i], cs[j]
		return uint32(a.R)<<24|uint32(a.G)<<16|uint32(a.B)<<8|uint32(a.A) < uint32(b.R)<<24|uint32(b.G)<<16|uint32(b.B)<<8|uint32(b.A)
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range cs[:min(len(cs), 256)] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(r, pal)
	draw.Draw(out, r, img, r.Min, draw.Src)
	return out
}
