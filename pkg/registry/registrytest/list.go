package registrytest

import (
	"context"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// listOptions parses a label and a field selector ("" selects all).
func listOptions(t testing.TB, labelSelector, fieldSelector string) *metainternalversion.ListOptions {
	t.Helper()
	opts := &metainternalversion.ListOptions{}
	var err error
	if labelSelector != "" {
		if opts.LabelSelector, err = labels.Parse(labelSelector); err != nil {
			t.Fatalf("label selector %q: %v", labelSelector, err)
		}
	}
	if fieldSelector != "" {
		if opts.FieldSelector, err = fields.ParseSelector(fieldSelector); err != nil {
			t.Fatalf("field selector %q: %v", fieldSelector, err)
		}
	}
	return opts
}

// list returns the names (namespace/name when listing across namespaces)
// of the objects ctx's list selects, sorted.
func (e *env) list(t testing.TB, ctx context.Context, labelSelector, fieldSelector string) []string {
	t.Helper()
	res, err := e.tr.Storage.List(ctx, listOptions(t, labelSelector, fieldSelector))
	if err != nil {
		t.Fatalf("list (labels %q, fields %q): %v", labelSelector, fieldSelector, err)
	}
	var names []string
	for _, item := range res.Items {
		obj := e.tr.Storage.New()
		if err := item.Decode(obj); err != nil {
			t.Fatalf("decoding %s: %v", item.Key, err)
		}
		m := accessor(t, obj)
		names = append(names, qualified(m.GetNamespace(), m.GetName()))
	}
	slices.Sort(names)
	return names
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// names returns the qualified names of objs, sorted.
func names(t testing.TB, objs ...runtime.Object) []string {
	t.Helper()
	var out []string
	for _, obj := range objs {
		m := accessor(t, obj)
		out = append(out, qualified(m.GetNamespace(), m.GetName()))
	}
	slices.Sort(out)
	return out
}

// wantList checks what a list selects.
func (e *env) wantList(t testing.TB, ctx context.Context, labelSelector, fieldSelector string, want []string) {
	t.Helper()
	if got := e.list(t, ctx, labelSelector, fieldSelector); !slices.Equal(got, want) {
		t.Errorf("list (labels %q, fields %q) = %q, want %q", labelSelector, fieldSelector, got, want)
	}
}

// listFixture creates three objects of the case's, labelled by the
// case's prefix ("registrytest=<prefix>") and a=1, a=1, a=2, and, for
// namespaced resources, one more in another namespace; it returns them
// and the label selector of the case's objects.
func (e *env) listFixture(t *testing.T) (one1, one2, two, elsewhere runtime.Object, mine string) {
	t.Helper()
	mine = "registrytest=" + e.prefix
	one1 = e.createValid(t, map[string]string{"registrytest": e.prefix, "a": "1"})
	one2 = e.createValid(t, map[string]string{"registrytest": e.prefix, "a": "1"})
	two = e.createValid(t, map[string]string{"registrytest": e.prefix, "a": "2"})
	if e.ns != "" {
		other := e.tr.Valid(e.name())
		accessor(t, other).SetNamespace(e.ns + "-other")
		accessor(t, other).SetLabels(map[string]string{"registrytest": e.prefix, "a": "1"})
		elsewhere = e.createIn(t, e.ns+"-other", other)
	}
	return one1, one2, two, elsewhere, mine
}

func (tr *Tester) listCases() []testCase {
	return []testCase{
		{"selectors", func(t *testing.T, e *env) {
			one1, one2, two, elsewhere, mine := e.listFixture(t)
			ctx := e.ctx()
			e.wantList(t, ctx, mine, "", names(t, one1, one2, two))
			e.wantList(t, ctx, mine+",a=1", "", names(t, one1, one2))
			e.wantList(t, ctx, mine+",a!=1", "", names(t, two))
			e.wantList(t, ctx, mine+",a=3", "", nil)
			e.wantList(t, ctx, "", "metadata.name="+accessor(t, two).GetName(), names(t, two))
			e.wantList(t, ctx, mine, "metadata.name!="+accessor(t, two).GetName(), names(t, one1, one2))
			e.wantList(t, ctx, "a=1", "metadata.name="+accessor(t, one2).GetName(), names(t, one2))
			e.wantList(t, ctx, "a=2", "metadata.name="+accessor(t, one2).GetName(), nil)
			if elsewhere == nil {
				// Cluster-scoped kinds need not support metadata.namespace
				// (kube's nodes and namespaces do not).
				return
			}
			e.wantList(t, ctx, mine, "metadata.namespace="+e.ns, names(t, one1, one2, two))
			if tr.Storage.NamespaceScoped() {
				e.wantList(t, ctx, "", "", names(t, one1, one2, two))
			}
			all := e.ctxIn("")
			e.wantList(t, all, mine, "", names(t, one1, one2, two, elsewhere))
			e.wantList(t, all, mine, "metadata.namespace="+e.ns+"-other", names(t, elsewhere))
			e.wantList(t, all, mine+",a=1", "metadata.namespace!="+e.ns, names(t, elsewhere))
		}},
		{"unknown field", func(t *testing.T, e *env) {
			if _, err := tr.Storage.List(e.ctx(), listOptions(t, "", "registrytest.no.such.field=x")); !apierrors.IsBadRequest(err) {
				t.Errorf("list by a field the kind does not have: %v, want BadRequest", err)
			}
		}},
	}
}

// listNames returns the qualified names of a list's items, sorted.
func (e *env) listNames(t testing.TB, list runtime.Object) []string {
	t.Helper()
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatalf("items of %T: %v", list, err)
	}
	return names(t, items...)
}

func equalNames(a, b []string) bool { return slices.Equal(a, b) }
