package storage

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ListPlan is what a list must read, worked out from its options the way
// kube's storage does for a server without a cache.
type ListPlan struct {
	// KeyPrefix is the prefix of a recursive list ("/registry/pods/").
	KeyPrefix string
	// StartKey is where the range begins (KeyPrefix, or the continue key).
	StartKey string
	// Rev is the revision to read at, 0 for the latest.
	Rev int64
	// MinRev is a revision the latest state must not be older than.
	MinRev int64
}

// PlanList validates opts for a list of key and says what to read:
//   - a continue token fixes the revision (its own, or the latest for a
//     negative one) and forbids a resourceVersion other than "" or "0";
//   - resourceVersionMatch=Exact reads at resourceVersion;
//   - NotOlderThan, or a legacy resourceVersion without a limit, reads the
//     latest state and requires it to be at least resourceVersion;
//   - a legacy resourceVersion > 0 with a limit reads at it (kube's
//     behaviour for a paged list without a cache).
//
// Errors are InvalidObj (400 for a list).
func PlanList(key string, opts ListOptions) (ListPlan, error) {
	plan := ListPlan{KeyPrefix: key, StartKey: key}
	if opts.Recursive && !strings.HasSuffix(key, "/") {
		plan.KeyPrefix += "/"
		plan.StartKey = plan.KeyPrefix
	}
	pred := opts.Predicate
	if opts.Recursive && pred.Continue != "" {
		continueKey, rev, err := DecodeContinue(pred.Continue, plan.KeyPrefix)
		if err != nil {
			return plan, NewInvalidError("invalid continue token: " + err.Error())
		}
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return plan, NewInvalidError("specifying resource version is not allowed when using continue")
		}
		plan.StartKey = continueKey
		if rev > 0 {
			plan.Rev = rev
		}
		return plan, nil
	}
	if opts.ResourceVersion == "" {
		return plan, nil
	}
	rv, err := ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return plan, NewInvalidError(fmt.Sprintf("invalid resource version: %v", err))
	}
	switch opts.ResourceVersionMatch {
	case metav1.ResourceVersionMatchNotOlderThan:
		plan.MinRev = rv
	case metav1.ResourceVersionMatchExact:
		plan.Rev = rv
	case "":
		if opts.Recursive && pred.Limit > 0 && rv > 0 {
			plan.Rev = rv
		} else {
			plan.MinRev = rv
		}
	default:
		return plan, NewInvalidError(fmt.Sprintf("unknown ResourceVersionMatch value: %v", opts.ResourceVersionMatch))
	}
	return plan, nil
}
