package handlers

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDeleteOptions: the options of a DELETE come from its body when it
// has one, whatever the query carries beside (kube's rule), else from the
// query. Decoding the query after the body reset the body's dryRun: a
// dry-run delete-collection with a label selector deleted for real.
func TestDeleteOptions(t *testing.T) {
	t.Parallel()
	grace := func(opts *metav1.DeleteOptions) int64 {
		if opts.GracePeriodSeconds == nil {
			return -1
		}
		return *opts.GracePeriodSeconds
	}
	cases := []struct {
		name, query, body string
		dryRun            []string
		grace             int64
	}{
		{"body alone", "", `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`, []string{"All"}, -1},
		{"body beside a selector", "labelSelector=app%3Ddd", `{"dryRun":["All"]}`, []string{"All"}, -1},
		{"body beside query options", "gracePeriodSeconds=0&dryRun=", `{"dryRun":["All"],"gracePeriodSeconds":5}`, []string{"All"}, 5},
		{"query alone", "dryRun=All&gracePeriodSeconds=3", "", []string{"All"}, 3},
		{"query, no dry run", "labelSelector=app%3Ddd", "", nil, -1},
	}
	s := &Scope{}
	for _, c := range cases {
		r := httptest.NewRequest("DELETE", "/api/v1/namespaces/ns/configmaps?"+c.query, strings.NewReader(c.body))
		if c.body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		opts, err := s.deleteOptions(r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(opts.DryRun, c.dryRun) || grace(opts) != c.grace {
			t.Errorf("%s: dryRun %v, grace %d; want %v, %d", c.name, opts.DryRun, grace(opts), c.dryRun, c.grace)
		}
	}
}
