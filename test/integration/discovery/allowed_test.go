package discovery

import (
	"fmt"
	"strings"
)

// The only differences from kube-apiserver's discovery the tests accept.
// An entry names a group ("apiextensions.k8s.io"), a resource
// ("batch/v1 jobs", "v1 componentstatuses") or a subresource
// ("v1 pods/eviction"); a group or resource entry covers everything under
// it. An entry that no longer differs fails the tests: delete it (and the
// tests then compare what it named field by field).

// owned are the groups and resources other open issues add.
var owned = []struct {
	issue int
	what  string
}{}

// notYetServed are the resources issue 9 adds and the server does not
// serve yet, one per line. Whoever lands one deletes its line. Each group
// is a block of its own (pods/eviction with policy, which it needs), kept
// apart by blank lines so that branches landing different groups never
// change neighbouring lines, which git would call a conflict.
const notYetServed = `

`

// fieldDifferences are the fields in which a served resource differs
// from kube-apiserver's on purpose, by "gv resource" and field name, each
// with why. A field that no longer differs fails the tests.
var fieldDifferences = map[string]map[string]string{
	"apiextensions.k8s.io/v1 customresourcedefinitions":   {"storageVersionHash": storedAtV1},
	"certificates.k8s.io/v1 clustertrustbundles":          {"storageVersionHash": storedAtV1},
	"certificates.k8s.io/v1 podcertificaterequests":       {"storageVersionHash": storedAtV1},
	"storagemigration.k8s.io/v1 storageversionmigrations": {"storageVersionHash": storedAtV1},
	"resource.k8s.io/v1 devicetaintrules":                 {"storageVersionHash": "kube 1.37 stores DeviceTaintRules at resource.k8s.io/v1beta2, a version it does not serve by default (v1 is new in 1.37); this server stores them at v1, the one version it serves"},
}

// storedAtV1 is why the kinds kube 1.37 stores at v1beta1 (the version
// before, for downgrades) hash differently: this server serves v1 only and
// stores it as it serves it (issue 9).
const storedAtV1 = "stored at v1 here, at v1beta1 by kube-apiserver v1.37 (issue 9)"

// allowance is one accepted difference and why.
type allowance struct {
	what, why string
}

// allowances returns every accepted difference, keyed by what it names.
func allowances() map[string]allowance {
	all := map[string]allowance{}
	for _, o := range owned {
		all[o.what] = allowance{o.what, fmt.Sprintf("owned by issue %d", o.issue)}
	}
	for _, line := range strings.Split(notYetServed, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			all[line] = allowance{line, "not yet served (issue 9)"}
		}
	}
	return all
}

// allowedBy returns the allowance covering key ("gv resource" or
// "gv resource/subresource", gv being "v1" for the core group), if any.
func allowedBy(all map[string]allowance, key string) (allowance, bool) {
	gv, name, _ := strings.Cut(key, " ")
	resource, _, _ := strings.Cut(name, "/")
	group, _, _ := strings.Cut(gv, "/")
	for _, k := range []string{key, gv + " " + resource, group} {
		if a, ok := all[k]; ok && (k != group || strings.Contains(gv, "/")) {
			return a, true
		}
	}
	return allowance{}, false
}
