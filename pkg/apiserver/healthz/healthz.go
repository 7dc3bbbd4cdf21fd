// Package healthz serves /healthz, /livez and /readyz as kube does: one
// line per check with ?verbose, a check of its own at /readyz/NAME, and
// ?exclude=NAME to leave one out.
package healthz

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
)

// Check is one named health check.
type Check struct {
	Name string
	// Fn returns nil when healthy; its error is logged, never shown.
	Fn func(ctx context.Context) error
}

// PingCheck always passes: the server answers.
var PingCheck = Check{Name: "ping", Fn: func(context.Context) error { return nil }}

// checkTimeout bounds each check so that a probe never hangs.
const checkTimeout = 5 * time.Second

// Install mounts the endpoint at path (and path/NAME for each check).
func Install(r chi.Router, path string, checks ...Check) {
	r.Get(path, handler(path, checks))
	for _, c := range checks {
		r.Get(path+"/"+c.Name, handler(path, []Check{c}))
	}
}

func handler(path string, checks []Check) http.HandlerFunc {
	name := strings.TrimPrefix(path, "/")
	return func(w http.ResponseWriter, r *http.Request) {
		excluded := map[string]bool{}
		for _, e := range r.URL.Query()["exclude"] {
			excluded[e] = true
		}
		var out bytes.Buffer
		failed := false
		for _, c := range checks {
			if excluded[c.Name] {
				fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.Name)
				continue
			}
			ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
			err := c.Fn(ctx)
			cancel()
			if err != nil {
				failed = true
				fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.Name)
				continue
			}
			fmt.Fprintf(&out, "[+]%s ok\n", c.Name)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if failed {
			w.WriteHeader(http.StatusInternalServerError)
			out.WriteString(name + " check failed\n")
			w.Write(out.Bytes())
			return
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			out.WriteString(name + " check passed\n")
			w.Write(out.Bytes())
			return
		}
		w.Write([]byte("ok"))
	}
}
