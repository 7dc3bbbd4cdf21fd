package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDelete checks DELETE with DeleteOptions bodies: failed
// preconditions are conflicts, a propagation policy is recorded as kube's
// finalizer and answered with the object, a plain delete with a Status.
func TestDelete(t *testing.T) {
	ns := namespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps/"
	d1 := createConfigMap(t, ns, "d1", nil)
	t.Run("uid precondition", func(t *testing.T) {
		r := do(t, req{method: "DELETE", path: path + "d1", body: `{"preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}`})
		r.wantStatus(t, 409, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on ConfigMap \"d1\": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (%s). The object might have been deleted and then recreated","reason":"Conflict","details":{"name":"d1","kind":"ConfigMap"},"code":409}`, d1.UID))
		wantUnchanged(t, d1)
	})
	t.Run("resourceVersion precondition", func(t *testing.T) {
		r := do(t, req{method: "DELETE", path: path + "d1", body: `{"preconditions":{"resourceVersion":"1"}}`})
		r.wantStatus(t, 409, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on ConfigMap \"d1\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%s). The object might have been modified","reason":"Conflict","details":{"name":"d1","kind":"ConfigMap"},"code":409}`, d1.ResourceVersion))
		wantUnchanged(t, d1)
	})
	t.Run("invalid propagation policy", func(t *testing.T) {
		r := do(t, req{method: "DELETE", path: path + "d1", body: `{"propagationPolicy":"Bogus"}`})
		r.wantStatus(t, 422, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Bogus\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"DeleteOptions","causes":[{"reason":"FieldValueNotSupported","message":"Unsupported value: \"Bogus\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"","field":"propagationPolicy"}]},"code":422}`)
		wantUnchanged(t, d1)
	})
	t.Run("plain delete answers a Status", func(t *testing.T) {
		r := do(t, req{method: "DELETE", path: path + "d1", body: `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"` + string(d1.UID) + `"}}`})
		r.wantStatus(t, 200, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"d1","kind":"configmaps","uid":"%s"}}`, d1.UID))
		wantNotStored(t, ns, "d1")
		do(t, req{method: "DELETE", path: path + "d1"}).wantStatus(t, 404,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"d1\" not found","reason":"NotFound","details":{"name":"d1","kind":"configmaps"},"code":404}`)
	})
	for policy, finalizer := range map[string]string{"Foreground": "foregroundDeletion", "Orphan": "orphan"} {
		t.Run(policy, func(t *testing.T) {
			name := "p-" + strings.ToLower(policy)
			createConfigMap(t, ns, name, nil)
			r := do(t, req{method: "DELETE", path: path + name, body: `{"propagationPolicy":"` + policy + `"}`})
			var got corev1.ConfigMap
			r.object(t, &got)
			if r.code != 200 || got.Kind != "ConfigMap" || got.DeletionTimestamp == nil || !slices.Equal(got.Finalizers, []string{finalizer}) ||
				got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 0 {
				t.Fatalf("got %d %s", r.code, r.body)
			}
			if _, stored := getConfigMap(t, ns, name); stored == nil || stored.DeletionTimestamp == nil {
				t.Errorf("stored: %+v", stored)
			}
		})
	}
}

// TestDeleteCollection checks that DELETE on a collection deletes what
// the selectors choose and answers the list of it, as kube.
func TestDeleteCollection(t *testing.T) {
	ns := namespace(t)
	for _, n := range []string{"e1", "e2", "e3"} {
		createConfigMap(t, ns, n, map[string]string{"grp": "dc"})
	}
	keep := createConfigMap(t, ns, "other", map[string]string{"grp": "keep"})
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	t.Run("dry run", func(t *testing.T) {
		r := do(t, req{method: "DELETE", path: path + "?labelSelector=grp%3Ddc&dryRun=All"})
		if got := listNames(t, r); !slices.Equal(got, []string{"e1", "e2", "e3"}) || r.code != 200 {
			t.Errorf("got %d %v", r.code, got)
		}
		if code, _ := getConfigMap(t, ns, "e1"); code != 200 {
			t.Errorf("dry run deleted e1")
		}
	})
	t.Run("label and field selectors", func(t *testing.T) {
		r := do(t, req{method: "DELETE", path: path + "?labelSelector=grp%3Ddc&fieldSelector=metadata.name!%3De3"})
		var list struct {
			Kind, APIVersion string
			Metadata         metav1.ListMeta
			Items            []map[string]interface{}
		}
		r.object(t, &list)
		if r.code != 200 || list.Kind != "ConfigMapList" || list.APIVersion != "v1" || list.Metadata.ResourceVersion == "" || len(list.Items) != 2 {
			t.Fatalf("got %d %s", r.code, r.body)
		}
		for _, item := range list.Items {
			if _, hasKind := item["kind"]; hasKind {
				t.Errorf("items carry no kind in kube's lists: %v", item)
			}
		}
		wantNotStored(t, ns, "e1")
		wantNotStored(t, ns, "e2")
		if code, _ := getConfigMap(t, ns, "e3"); code != 200 {
			t.Errorf("e3 was deleted")
		}
		wantUnchanged(t, keep)
	})
	t.Run("nothing selected", func(t *testing.T) {
		r := do(t, req{method: "DELETE", path: path + "?labelSelector=grp%3Dnone"})
		if got := listNames(t, r); r.code != 200 || len(got) != 0 {
			t.Errorf("got %d %s", r.code, r.body)
		}
	})
}

// listNames returns the names of a JSON list's items, sorted.
func listNames(t *testing.T, r response) []string {
	t.Helper()
	var list corev1.ConfigMapList
	r.object(t, &list)
	names := []string{}
	for _, item := range list.Items {
		names = append(names, item.Name)
	}
	sort.Strings(names)
	return names
}

// TestListSelectors checks label selector operators and field selectors.
func TestListSelectors(t *testing.T) {
	ns := namespace(t)
	createConfigMap(t, ns, "a", map[string]string{"env": "prod", "tier": "web"})
	createConfigMap(t, ns, "b", map[string]string{"env": "dev"})
	createConfigMap(t, ns, "c", nil)
	cases := []struct {
		label, field string
		want         []string
	}{
		{label: "env=prod", want: []string{"a"}},
		{label: "env==dev", want: []string{"b"}},
		{label: "env!=prod", want: []string{"b", "c"}},
		{label: "env in (prod,dev)", want: []string{"a", "b"}},
		{label: "env notin (prod)", want: []string{"b", "c"}},
		{label: "tier", want: []string{"a"}},
		{label: "!tier", want: []string{"b", "c"}},
		{label: "env,!tier", want: []string{"b"}},
		{field: "metadata.name=b", want: []string{"b"}},
		{field: "metadata.name!=b", want: []string{"a", "c"}},
		{field: "metadata.namespace=" + ns, want: []string{"a", "b", "c"}},
		{field: "metadata.namespace=elsewhere", want: []string{}},
		{label: "env", field: "metadata.name!=a", want: []string{"b"}},
	}
	for _, tc := range cases {
		t.Run(tc.label+"|"+tc.field, func(t *testing.T) {
			q := url.Values{}
			if tc.label != "" {
				q.Set("labelSelector", tc.label)
			}
			if tc.field != "" {
				q.Set("fieldSelector", tc.field)
			}
			r := do(t, req{path: "/api/v1/namespaces/" + ns + "/configmaps?" + q.Encode()})
			if got := listNames(t, r); r.code != 200 || !slices.Equal(got, tc.want) {
				t.Errorf("got %d %v, want %v", r.code, got, tc.want)
			}
			// The same through client-go.
			list, err := clientset(t).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: tc.label, FieldSelector: tc.field})
			if err != nil || len(list.Items) != len(tc.want) {
				t.Errorf("client-go: %v, %d items", err, len(list.Items))
			}
		})
	}
}

// TestListErrors checks the refusals of bad list options, with kube's
// bodies.
func TestListErrors(t *testing.T) {
	ns := namespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps?"
	cases := []struct {
		name, query string
		code        int
		want        string
	}{
		{"bad label selector", "labelSelector=x%20in%20(1", 400,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"unable to parse requirement: found '', expected: ',' or ')'","reason":"BadRequest","code":400}`},
		{"bad field selector", "fieldSelector=a%3D%3D%3Db", 400,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid field selector: unescaped character in value: 61","reason":"BadRequest","code":400}`},
		{"unknown field", "fieldSelector=metadata.foo%3Dx", 400,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"\"metadata.foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"","reason":"BadRequest","code":400}`},
		{"bad limit", "limit=abc", 400,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"strconv.ParseInt: parsing \"abc\": invalid syntax","reason":"BadRequest","code":400}`},
		{"bad continue", "continue=garbage", 400,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid continue token: continue key is not valid: invalid character '\\u0081' looking for beginning of value","reason":"BadRequest","code":400}`},
		{"resourceVersionMatch without resourceVersion", "resourceVersionMatch=Exact", 422,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided","field":"resourceVersionMatch"}]},"code":422}`},
		{"Exact with resourceVersion 0", "resourceVersionMatch=Exact&resourceVersion=0", 422,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"","field":"resourceVersionMatch"}]},"code":422}`},
		{"unknown resourceVersionMatch", "resourceVersionMatch=Foo&resourceVersion=1", 422,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"Foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueNotSupported","message":"Unsupported value: \"Foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"","field":"resourceVersionMatch"}]},"code":422}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			do(t, req{path: path + tc.query}).wantStatus(t, tc.code, tc.want)
		})
	}
	t.Run("bad resourceVersion", func(t *testing.T) {
		r := do(t, req{path: path + "resourceVersion=abc"})
		if s := r.status(t); r.code != 400 || s.Reason != metav1.StatusReasonBadRequest {
			t.Errorf("got %d %s", r.code, r.body)
		}
	})
}

// TestPagination checks that limit and continue return every object
// exactly once, with remainingItemCount, at the first page's revision.
func TestPagination(t *testing.T) {
	ns := namespace(t)
	const total = 7
	for i := 0; i < total; i++ {
		createConfigMap(t, ns, fmt.Sprintf("p%d", i), nil)
	}
	seen := map[string]int{}
	cont, firstRV := "", ""
	for page := 0; page < total+1; page++ {
		r := do(t, req{path: "/api/v1/namespaces/" + ns + "/configmaps?limit=3&continue=" + url.QueryEscape(cont)})
		var list corev1.ConfigMapList
		r.object(t, &list)
		if r.code != 200 {
			t.Fatalf("page %d: %d %s", page, r.code, r.body)
		}
		if page == 0 {
			firstRV = list.ResourceVersion
			// A write between pages must not show in later pages.
			createConfigMap(t, ns, "p-late", nil)
		} else if list.ResourceVersion != firstRV {
			t.Errorf("page %d at revision %s, want the first page's %s", page, list.ResourceVersion, firstRV)
		}
		for _, item := range list.Items {
			seen[item.Name]++
		}
		remaining := total - len(seen)
		if list.Continue == "" {
			if list.RemainingItemCount != nil {
				t.Errorf("last page has remainingItemCount %d", *list.RemainingItemCount)
			}
			break
		}
		if list.RemainingItemCount == nil || *list.RemainingItemCount != int64(remaining) {
			t.Errorf("page %d: remainingItemCount %v, want %d", page, list.RemainingItemCount, remaining)
		}
		cont = list.Continue
	}
	if len(seen) != total {
		t.Errorf("saw %d objects, want %d: %v", len(seen), total, seen)
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s seen %d times", name, n)
		}
	}
	raw, _ := json.Marshal(seen)
	if seen["p-late"] != 0 {
		t.Errorf("an object created after the first page showed: %s", raw)
	}
}

// TestDeleteCollectionTimeout: a DELETE of a collection whose ?timeout=
// passes before the work is done is answered as kube answers it, 504 with
// reason Timeout, not a 500 with the context's error (the load tool's
// cleanup of 20,000 pods met the latter).
func TestDeleteCollectionTimeout(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	for i := range 3 {
		createConfigMap(t, ns, fmt.Sprintf("t%d", i), nil)
	}
	r := do(t, req{method: "DELETE", path: "/api/v1/namespaces/" + ns + "/configmaps?timeout=1ns"})
	r.wantStatus(t, 504, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within requested timeout - context deadline exceeded","reason":"Timeout","details":{},"code":504}`)
}
