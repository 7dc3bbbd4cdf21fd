package fuzz

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
)

// FuzzListParameters lists with any resourceVersion, resourceVersionMatch,
// limit and continue token: configmaps from etcd (their cache is off)
// and secrets from the watch cache, whose paginated lists read snapshots
// kept for their tokens.
func FuzzListParameters(f *testing.F) {
	tg := newTarget(f, func(o *app.Options) { o.WatchCacheSizes = []string{"configmaps#0"} })
	uncached, cached := "/api/v1/namespaces/"+tg.ns+"/configmaps", "/api/v1/namespaces/"+tg.ns+"/secrets"
	for i := range 5 {
		for _, c := range []string{uncached, cached} {
			body := `{"metadata":{"name":"o` + strconv.Itoa(i) + `"}}`
			if a := tg.do(f, http.MethodPost, c, "application/json", []byte(body)); a.code != http.StatusCreated {
				f.Fatalf("creating in %s: %d %s", c, a.code, a.body)
			}
		}
	}
	// Real tokens and revisions as seeds.
	var page struct {
		Metadata struct{ ResourceVersion, Continue string }
	}
	first := tg.do(f, http.MethodGet, cached+"?limit=2", "", nil)
	if err := json.Unmarshal(first.body, &page); err != nil || page.Metadata.Continue == "" {
		f.Fatalf("a first page with a continue token: %v %s", err, first.body)
	}
	current, err := strconv.ParseInt(page.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		f.Fatal(err)
	}
	rv := page.Metadata.ResourceVersion
	for _, seed := range [][4]string{
		{"", "", "2", page.Metadata.Continue},
		{"0", "", "2", page.Metadata.Continue},
		{rv, "NotOlderThan", "", ""},
		{rv, "Exact", "1", ""},
		{"1", "Exact", "", ""},
		{"0", "", "500", ""},
		{rv, "", "3", ""},
		{"-1", "Bogus", "-5", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiLi4vIn0="},
		{"", "", "1", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIvLi4vLi4vc2VjcmV0cy8ifQ=="},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, resourceVersion, match, limit, token string) {
		q := url.Values{}
		for name, v := range map[string]string{"resourceVersion": resourceVersion, "resourceVersionMatch": match, "limit": limit, "continue": token} {
			if v != "" {
				q.Set(name, v)
			}
		}
		query := q.Encode()
		tg.do(t, http.MethodGet, uncached+"?"+query, "", nil).check(t, "list "+uncached+"?"+query, append(clientErrors, http.StatusGatewayTimeout)...)
		// A list from the cache at a revision it has not reached waits
		// for it (3 s, then 504, as test/integration/watchcache checks):
		// too slow to fuzz.
		if n, err := strconv.ParseInt(resourceVersion, 10, 64); err == nil && n > current && match != "Exact" && token == "" {
			return
		}
		tg.do(t, http.MethodGet, cached+"?"+query, "", nil).check(t, "list "+cached+"?"+query, append(clientErrors, http.StatusGatewayTimeout)...)
	})
}
