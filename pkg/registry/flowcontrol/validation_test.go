package flowcontrol

import (
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// TestPriorityLevelUnionsRatchet: kube's declarative union rules check
// what an update changes only; a stored object that breaks them may
// still be updated elsewhere.
func TestPriorityLevelUnionsRatchet(t *testing.T) {
	broken := flowcontrolv1.PriorityLevelConfigurationSpec{
		Type:    flowcontrolv1.PriorityLevelEnablementLimited,
		Exempt:  &flowcontrolv1.ExemptPriorityLevelConfiguration{},
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: "Queue"}},
	}
	p := field.NewPath("spec")
	if errs := validatePriorityLevelUnions(&broken, nil, p); len(errs) != 2 {
		t.Errorf("create: %v, want exempt forbidden and queuing required", errs)
	}
	if errs := validatePriorityLevelUnions(&broken, broken.DeepCopy(), p); len(errs) != 0 {
		t.Errorf("unchanged update: %v", errs)
	}
	// Each rule looks at its own member (and the type).
	changed := broken.DeepCopy()
	changed.Limited.NominalConcurrencyShares = ptr.To[int32](3)
	if errs := validatePriorityLevelUnions(changed, &broken, p); len(errs) != 0 {
		t.Errorf("update of limited's shares: %v", errs)
	}
	changed.Exempt.LendablePercent = ptr.To[int32](10)
	if errs := validatePriorityLevelUnions(changed, &broken, p); len(errs) != 1 || errs[0].Field != "spec.exempt" {
		t.Errorf("update of exempt: %v, want the exempt error alone", errs)
	}
}

func TestCheckNonResourceURL(t *testing.T) {
	for url, want := range map[string]string{
		"/": "", "/healthz": "", "/apis/*": "", "/*": "",
		"":        "must not be empty",
		"healthz": "must start with slash",
		"/a b":    "white-space",
		"/a//b":   "double slash",
		"/a*":     "suffix matching",
		"/a/*/b":  "suffix matching",
		"/a/**":   "suffix matching",
	} {
		got := checkNonResourceURL(url)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%q: %q, want %q", url, got, want)
		}
	}
}
