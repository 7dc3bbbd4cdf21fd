package apiserver

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestProfiling checks --profiling: off by default (no /debug/pprof at
// all), on it serves Go's profiles to authenticated clients only.
func TestProfiling(t *testing.T) {
	get := func(t *testing.T, client *http.Client, url string) (int, string) {
		t.Helper()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}

	t.Run("off by default", func(t *testing.T) {
		if code, body := get(t, srv.HTTPClient(t), srv.ClientConfig.Host+"/debug/pprof/"); code != http.StatusNotFound {
			t.Errorf("got %d %s, want 404", code, body)
		}
	})

	ts := testserver.Start(t, func(o *app.Options) { o.Profiling = true; o.Auth.AnonymousAuth = false })
	client := ts.HTTPClient(t)
	base := ts.ClientConfig.Host + "/debug/pprof/"
	if code, body := get(t, client, base); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("index: got %d %.200s", code, body)
	}
	if code, body := get(t, client, base+"heap?debug=1"); code != http.StatusOK || !strings.Contains(body, "heap profile") {
		t.Errorf("heap: got %d %.200s", code, body)
	}
	if code, body := get(t, client, base+"cmdline"); code != http.StatusOK || body == "" {
		t.Errorf("cmdline: got %d %q", code, body)
	}

	// Profiles say a lot about the server: no credentials, no profile
	// (here anonymous requests are refused).
	tlsConfig, err := rest.TLSConfigFor(ts.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	if code, body := get(t, anonymous, base); code != http.StatusUnauthorized {
		t.Errorf("without a token: got %d %.200s, want 401", code, body)
	}
}
