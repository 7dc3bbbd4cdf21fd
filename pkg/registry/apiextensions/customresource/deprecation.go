package customresource

import (
	"fmt"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilversion "k8s.io/apimachinery/pkg/version"
)

// DeprecationWarning is the warning every request to the version answers
// with ("" when the definition does not mark it deprecated).
func (s *Served) DeprecationWarning(version string) string { return s.r.warnings[version] }

// deprecationWarnings are the warnings of the deprecated versions of crd,
// by version, as kube's CRD handler sends them: the version's
// deprecationWarning, or by default "<group>/<version> <Kind> is
// deprecated", naming the newest served version that is not deprecated
// and newer than it, if any.
func deprecationWarnings(crd *apiextensionsv1.CustomResourceDefinition) map[string]string {
	warnings := map[string]string{}
	for _, v := range crd.Spec.Versions {
		switch {
		case !v.Deprecated:
		case v.DeprecationWarning != nil:
			warnings[v.Name] = *v.DeprecationWarning
		default:
			warnings[v.Name] = defaultDeprecationWarning(crd.Spec, v.Name)
		}
	}
	return warnings
}

func defaultDeprecationWarning(spec apiextensionsv1.CustomResourceDefinitionSpec, deprecated string) string {
	msg := fmt.Sprintf("%s/%s %s is deprecated", spec.Group, deprecated, spec.Names.Kind)
	var newer []string
	for _, v := range spec.Versions {
		if v.Served && !v.Deprecated && utilversion.CompareKubeAwareVersionStrings(deprecated, v.Name) < 0 {
			newer = append(newer, v.Name)
		}
	}
	if len(newer) == 0 {
		return msg
	}
	sort.Slice(newer, func(i, j int) bool { return utilversion.CompareKubeAwareVersionStrings(newer[i], newer[j]) > 0 })
	return msg + fmt.Sprintf("; use %s/%s %s", spec.Group, newer[0], spec.Names.Kind)
}
