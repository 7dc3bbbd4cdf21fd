package crd

import (
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func names(plural, kind string, short ...string) apiextensionsv1.CustomResourceDefinitionNames {
	return apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: plural[:len(plural)-1], Kind: kind, ListKind: kind + "List", ShortNames: short}
}

func TestAcceptNames(t *testing.T) {
	holder := &apiextensionsv1.CustomResourceDefinition{Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: names("widgets", "Widget", "wd", "w")}}
	cases := []struct {
		name         string
		spec, status apiextensionsv1.CustomResourceDefinitionNames
		wantNames    apiextensionsv1.CustomResourceDefinitionNames
		wantReason   string
		wantMessage  string
	}{
		{name: "fresh names", spec: names("gadgets", "Gadget", "gd"), wantNames: names("gadgets", "Gadget", "gd"), wantReason: "NoConflicts", wantMessage: "no conflicts found"},
		{name: "a singular in use as a short name", spec: names("wds", "Wd"),
			wantNames:  apiextensionsv1.CustomResourceDefinitionNames{Plural: "wds", Kind: "Wd", ListKind: "WdList"},
			wantReason: "SingularConflict", wantMessage: `"wd" is already in use`},
		{name: "short names in use are refused together", spec: names("gadgets", "Gadget", "wd", "gd", "w"),
			wantNames:  apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			wantReason: "ShortNamesConflict", wantMessage: `["wd" is already in use, "w" is already in use]`},
		{name: "the last conflict is the reason", spec: names("things", "Widget"),
			wantNames:  apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing"},
			wantReason: "ListKindConflict", wantMessage: `"WidgetList" is already in use`},
		{name: "names held already stay", spec: names("gadgets", "Widget"), status: names("gadgets", "Widget"),
			wantNames: names("gadgets", "Widget"), wantReason: "NoConflicts", wantMessage: "no conflicts found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{
				Spec:   apiextensionsv1.CustomResourceDefinitionSpec{Names: tc.spec},
				Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: tc.status},
			}
			got, cond := acceptNames(crd, newGroupNames([]*apiextensionsv1.CustomResourceDefinition{holder, crd}))
			if !reflect.DeepEqual(got, tc.wantNames) {
				t.Errorf("names: got %+v, want %+v", got, tc.wantNames)
			}
			if cond.Reason != tc.wantReason || cond.Message != tc.wantMessage {
				t.Errorf("condition: got %s %q, want %s %q", cond.Reason, cond.Message, tc.wantReason, tc.wantMessage)
			}
		})
	}
}
