package crd

import (
	"errors"
	"fmt"
	"slices"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// groupNames are the names the definitions of one group have been
// granted (their status.acceptedNames): resource names (plurals,
// singulars, short names) and kinds (kinds, list kinds).
type groupNames struct {
	resources, kinds map[string]bool
}

func newGroupNames(crds []*apiextensionsv1.CustomResourceDefinition) groupNames {
	g := groupNames{resources: map[string]bool{}, kinds: map[string]bool{}}
	for _, crd := range crds {
		n := crd.Status.AcceptedNames
		for _, r := range append([]string{n.Plural, n.Singular}, n.ShortNames...) {
			g.resources[r] = true
		}
		g.kinds[n.Kind], g.kinds[n.ListKind] = true, true
	}
	return g
}

// acceptNames decides, as kube's naming controller, which of the names
// crd asks for it gets, given the names its group's definitions hold
// (its own included): a name it holds already, or one nobody holds. It
// returns the names granted and the NamesAccepted condition (False,
// with the last conflict found, when some name is refused).
func acceptNames(crd *apiextensionsv1.CustomResourceDefinition, used groupNames) (apiextensionsv1.CustomResourceDefinitionNames, apiextensionsv1.CustomResourceDefinitionCondition) {
	requested, accepted := crd.Spec.Names, crd.Status.AcceptedNames
	names := accepted
	cond := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue,
		Reason: "NoConflicts", Message: "no conflicts found",
	}
	refuse := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}
	grant := func(requested, accepted string, used map[string]bool, reason string, into *string) {
		if err := freeOrOwned(requested, accepted, used); err != nil {
			refuse(reason, err)
			return
		}
		*into = requested
	}
	grant(requested.Plural, accepted.Plural, used.resources, "PluralConflict", &names.Plural)
	grant(requested.Singular, accepted.Singular, used.resources, "SingularConflict", &names.Singular)
	if !slices.Equal(requested.ShortNames, accepted.ShortNames) {
		var errs []error
		for _, s := range requested.ShortNames {
			if !slices.Contains(accepted.ShortNames, s) {
				if err := freeOrOwned(s, "", used.resources); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if len(errs) > 0 {
			refuse("ShortNamesConflict", aggregate(errs))
		} else {
			names.ShortNames = requested.ShortNames
		}
	}
	grant(requested.Kind, accepted.Kind, used.kinds, "KindConflict", &names.Kind)
	grant(requested.ListKind, accepted.ListKind, used.kinds, "ListKindConflict", &names.ListKind)
	names.Categories = requested.Categories
	return names, cond
}

func freeOrOwned(requested, accepted string, used map[string]bool) error {
	if requested == accepted || !used[requested] {
		return nil
	}
	return fmt.Errorf("%q is already in use", requested)
}

// aggregate words several errors as apimachinery's aggregate does: one
// as itself, more as a bracketed list.
func aggregate(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msg := "["
	for i, e := range errs {
		if i > 0 {
			msg += ", "
		}
		msg += e.Error()
	}
	return errors.New(msg + "]")
}

// establishedCondition is the Established condition of crd once its
// names are decided: True stays True; accepted names establish it (the
// caller serves it first); otherwise it is not established.
func establishedCondition(crd *apiextensionsv1.CustomResourceDefinition, namesAccepted bool) apiextensionsv1.CustomResourceDefinitionCondition {
	if old := apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.Established); old != nil && old.Status == apiextensionsv1.ConditionTrue {
		return *old
	}
	switch {
	case !namesAccepted:
		return apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
			Reason: "NotAccepted", Message: "not all names are accepted"}
	case invalidCABundle(crd):
		return apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
			Reason: "InvalidCABundle", Message: "The conversion webhook CABundle is invalid"}
	}
	return apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue,
		Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"}
}
