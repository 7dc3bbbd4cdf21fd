package storage

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzPlanList: whatever the list options (a continue token, a
// resourceVersion and its match, a limit), PlanList either plans a read
// that stays under the list's prefix at a valid revision, or refuses with
// an InvalidObj error (the registry's 400/422). A token it accepts
// decodes to what encoding it again gives.
func FuzzPlanList(f *testing.F) {
	const prefix = "/registry/secrets/ns"
	token := func(key string, rev int64) string {
		t, err := EncodeContinue(prefix+"/"+key, prefix+"/", rev)
		if err != nil {
			f.Fatal(err)
		}
		return t
	}
	f.Add(token("a\x00", 10), "", "", int64(2), true)
	f.Add(token("b", -1), "0", "", int64(0), true)
	f.Add(token("../other/x", 5), "", "", int64(1), true)
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIvLi4vLi4vc2VjcmV0cy8ifQ", "", "", int64(1), true)
	f.Add("", "12", string(metav1.ResourceVersionMatchNotOlderThan), int64(0), true)
	f.Add("", "12", string(metav1.ResourceVersionMatchExact), int64(5), false)
	f.Add("", "-3", "Bogus", int64(-1), true)
	f.Fuzz(func(t *testing.T, cont, rv, match string, limit int64, recursive bool) {
		opts := ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatch(match), Recursive: recursive}
		opts.Predicate.Continue, opts.Predicate.Limit = cont, limit
		plan, err := PlanList(prefix, opts)
		if err != nil {
			if CodeOf(err) != ErrCodeInvalidObj {
				t.Fatalf("PlanList: %v, want an InvalidObj error", err)
			}
			return
		}
		if !strings.HasPrefix(plan.StartKey, plan.KeyPrefix) || !strings.HasPrefix(plan.KeyPrefix, prefix) {
			t.Fatalf("plan reads from %q, outside %q", plan.StartKey, plan.KeyPrefix)
		}
		if plan.Rev < 0 || plan.MinRev < 0 {
			t.Fatalf("plan at revision %d, not older than %d", plan.Rev, plan.MinRev)
		}
		if cont == "" || !recursive {
			return
		}
		key, rev, err := DecodeContinue(cont, plan.KeyPrefix)
		if err != nil {
			t.Fatalf("PlanList took a token DecodeContinue refuses: %v", err)
		}
		again, err := EncodeContinue(key, plan.KeyPrefix, rev)
		if err != nil {
			t.Fatal(err)
		}
		if key2, rev2, err := DecodeContinue(again, plan.KeyPrefix); err != nil || key2 != key || rev2 != rev {
			t.Fatalf("token of %q at %d decodes to %q at %d (%v)", key, rev, key2, rev2, err)
		}
	})
}
