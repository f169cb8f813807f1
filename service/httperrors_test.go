package service_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestAuthSchemeAnyCase: the Authorization scheme is matched in any case (RFC 7235), with one
// or more spaces before the token; another scheme or no space is refused.
func TestAuthSchemeAnyCase(t *testing.T) {
	_, url, id := seededRiverSwim(t)
	body := []byte(`{"users":["a"]}`)
	for _, c := range []struct {
		auth string
		want int
	}{
		{"Bearer " + adminTok, 200},
		{"bearer " + adminTok, 200},
		{"BEARER " + adminTok, 200},
		{"bEaReR " + adminTok, 200},
		{"Bearer   " + adminTok, 200},
		{"Basic " + adminTok, 401},
		{"Bearer" + adminTok, 401},
		{"bearer " + clientTok, 401},
		{adminTok, 401},
	} {
		code, resp := rawReq(t, url, "POST", "/v1/experiments/"+id+"/credentials", "", body, map[string]string{"Authorization": c.auth})
		if code != c.want {
			t.Errorf("Authorization %.12q…: %d, want %d (%s)", c.auth, code, c.want, resp)
		}
	}
}

// TestPolicyIfNoneMatch: If-None-Match is compared as RFC 9110 says: "*", the weak form of
// the current ETag and a list holding it give 304; anything else the policy.
func TestPolicyIfNoneMatch(t *testing.T) {
	_, url, id := seededRiverSwim(t)
	get := func(inm ...string) (int, string) {
		req, _ := http.NewRequest("GET", url+"/v1/experiments/"+id+"/policy", nil)
		for _, v := range inm {
			req.Header.Add("If-None-Match", v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("ETag")
	}
	code, etag := get()
	if code != 200 || etag == "" || strings.HasPrefix(etag, "W/") {
		t.Fatalf("GET policy: %d, ETag %q", code, etag)
	}
	for _, c := range []struct {
		inm  []string
		want int
	}{
		{[]string{etag}, 304},
		{[]string{"*"}, 304},
		{[]string{"W/" + etag}, 304},
		{[]string{`"nope", ` + etag}, 304},
		{[]string{`"nope",W/` + etag + `, "other"`}, 304},
		{[]string{`"nope"`, etag}, 304},
		{[]string{`"nope"`}, 200},
		{[]string{`W/"nope"`}, 200},
		{[]string{`"nope", "other"`}, 200},
		{[]string{strings.Trim(etag, `"`)}, 200}, // not a quoted entity tag
	} {
		if code, _ := get(c.inm...); code != c.want {
			t.Errorf("If-None-Match %q: %d, want %d", c.inm, code, c.want)
		}
	}
}

// TestRouterErrorsAreJSON: an unknown path and a method a path does not take are answered
// with the API's JSON error body (404, 405 with the Allow header), not plain text.
func TestRouterErrorsAreJSON(t *testing.T) {
	_, url, id := seededRiverSwim(t)
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/v1/nope", 404, ""},
		{"GET", "/nope/deeper", 404, ""},
		{"DELETE", "/v1/experiments", 405, "GET, HEAD, POST"},
		{"POST", "/v1/experiments/" + id + "/policy", 405, "GET, HEAD"},
		{"GET", "/v1/experiments/" + id + "/reports", 405, "POST"},
	} {
		req, _ := http.NewRequest(c.method, url+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Error struct{ Code, Field, Message string }
		}
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &e) != nil || e.Error.Message == "" || e.Error.Code == "" {
			t.Errorf("%s %s: %d %q %q, want %d and a JSON error", c.method, c.path, resp.StatusCode, resp.Header.Get("Content-Type"), b, c.status)
		}
		if got := resp.Header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
}
