package authn

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecret "k8s.io/cluster-bootstrap/util/secrets"
)

// TestBootstrapHelpersMatchKube checks the bootstrap token helpers
// against k8s.io/cluster-bootstrap's, which they replace.
func TestBootstrapHelpersMatchKube(t *testing.T) {
	tokens := []string{
		"abcdef.0123456789abcdef", "abcdef.0123456789abcde", "abcdef.0123456789abcdefg",
		"abcde.0123456789abcdef", "ABCDEF.0123456789abcdef", "abcdef.0123456789ABCDEF",
		"abcdef0123456789abcdef", "abcdef.0123456789abcdef.", "abcdef.01234567.9abcdef",
		"abc-ef.0123456789abcdef", "", ".", "abcdef.", "é12345.0123456789abcdef",
	}
	for _, tok := range tokens {
		if got, want := isBootstrapToken(tok), bootstraputil.IsValidBootstrapToken(tok); got != want {
			t.Errorf("isBootstrapToken(%q) = %v, want %v", tok, got, want)
		}
	}

	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, exp := range []string{"", "2026-12-07T12:00:00Z", "2026-12-07T12:00:01Z", "2026-12-07T11:59:59Z", "2026-12-07T13:00:00+01:00", "tomorrow", "2026-12-07"} {
		s := &corev1.Secret{Data: map[string][]byte{bootstrapapi.BootstrapTokenExpirationKey: []byte(exp)}}
		if exp == "" {
			s.Data = nil
		}
		if got, want := bootstrapTokenExpired(s, now), bootstrapsecret.HasExpired(s, now); got != want {
			t.Errorf("expiration %q: expired %v, want %v", exp, got, want)
		}
	}

	long := "system:bootstrappers:" + strings.Repeat("a", 256)
	for _, extra := range []string{
		"", "system:bootstrappers:x", "system:bootstrappers:b,system:bootstrappers:a,system:bootstrappers:b",
		"system:bootstrappers:kubeadm:default-node-token", "system:bootstrappers:", "system:bootstrappers:a-",
		"system:bootstrappers:a:", "system:bootstrappers:A", "system:masters", "system:bootstrappers:a,",
		"system:bootstrappers:a b", long, long + "a", "system:bootstrappers:-a", "system:bootstrappers::a",
	} {
		s := &corev1.Secret{Data: map[string][]byte{bootstrapapi.BootstrapTokenExtraGroupsKey: []byte(extra)}}
		got, gotErr := bootstrapTokenGroups(s)
		want, wantErr := bootstrapsecret.GetGroups(s)
		if !slices.Equal(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("groups %q: got %q, %v; want %q, %v", extra, got, gotErr, want, wantErr)
		}
	}
}
