package generic

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRequestedName: an object is named by its generateName until the
// server generates its name.
func TestRequestedName(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct{ name, generateName, want string }{
		{"p1", "", "p1"},
		{"gen-x7k2q", "gen-", "gen-"},
		{long[:58] + "abcde", long, long},
		{"gen-chosen-by-client", "gen-", "gen-chosen-by-client"},
	} {
		m := &metav1.ObjectMeta{Name: tc.name, GenerateName: tc.generateName}
		if got := RequestedName(m); got != tc.want {
			t.Errorf("%s (%s): got %s, want %s", tc.name, tc.generateName, got, tc.want)
		}
	}
}
