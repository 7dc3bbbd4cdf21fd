package apiserver

import (
	"context"
	"k8s.io/client-go/util/retry"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCreateErrors checks the exact Status of each failing POST, as kube
// writes it, and that nothing was stored.
func TestCreateErrors(t *testing.T) {
	ns := namespace(t)
	createConfigMap(t, ns, "exists", nil)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	cases := []struct {
		name   string
		stored string // the name that must not exist afterwards
		req    req
		code   int
		want   string
	}{{
		name: "already exists", req: req{method: "POST", path: path, body: `{"metadata":{"name":"exists"}}`},
		code: 409,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"exists\" already exists","reason":"AlreadyExists","details":{"name":"exists","kind":"configmaps"},"code":409}`,
	}, {
		name: "invalid with causes", stored: "BAD_NAME",
		req:  req{method: "POST", path: path, body: `{"metadata":{"name":"BAD_NAME"},"data":{"a b":"x"}}`},
		code: 422,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap \"BAD_NAME\" is invalid: [metadata.name: Invalid value: \"BAD_NAME\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')]","reason":"Invalid","details":{"name":"BAD_NAME","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"BAD_NAME\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')","field":"metadata.name"},{"reason":"FieldValueInvalid","message":"Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')","field":"data[a b]"}]},"code":422}`,
	}, {
		name: "malformed JSON", stored: "t",
		req:  req{method: "POST", path: path, body: `{"metadata":{"name":"t"`},
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"metadata\":{\"name\":\"t\")","reason":"BadRequest","code":400}`,
	}, {
		name: "malformed YAML", stored: "t",
		req:  req{method: "POST", path: path, body: "metadata:\n  name: [t", headers: []string{"Content-Type: application/yaml"}},
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the object provided is unrecognized (must be of type ConfigMap): yaml: line 2: did not find expected ',' or ']' (6d657461646174613a0a20206e616d653a205b74)","reason":"BadRequest","code":400}`,
	}, {
		name: "wrong kind", stored: "t",
		req:  req{method: "POST", path: path, body: `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"t"}}`},
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion","reason":"BadRequest","code":400}`,
	}, {
		name: "unknown version", stored: "t",
		req:  req{method: "POST", path: path, body: `{"kind":"ConfigMap","apiVersion":"v2","metadata":{"name":"t"}}`},
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap in version \"v2\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"v2\" in scheme \"pkg/runtime/scheme.go:111\"","reason":"BadRequest","code":400}`,
	}, {
		name: "apiVersion of another group", stored: "t",
		req:  req{method: "POST", path: path, body: `{"kind":"ConfigMap","apiVersion":"apps/v1","metadata":{"name":"t"}}`},
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap in version \"v1\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"apps/v1\" in scheme \"pkg/runtime/scheme.go:111\"","reason":"BadRequest","code":400}`,
	}, {
		name: "unknown fields with Strict", stored: "u2",
		req:  req{method: "POST", path: path + "?fieldValidation=Strict", body: `{"metadata":{"name":"u2"},"data":{"k":"v"},"bogus":1,"spec":{"x":1}}`},
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"bogus\", unknown field \"spec\"","reason":"BadRequest","code":400}`,
	}, {
		name: "invalid dryRun and fieldValidation", stored: "u3",
		req:  req{method: "POST", path: path + "?fieldValidation=Bogus&dryRun=X", body: `{"metadata":{"name":"u3"}}`},
		code: 422,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"CreateOptions.meta.k8s.io \"\" is invalid: [dryRun: Unsupported value: [\"X\"]: supported values: \"All\", fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"]","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"CreateOptions","causes":[{"reason":"FieldValueNotSupported","message":"Unsupported value: [\"X\"]: supported values: \"All\"","field":"dryRun"},{"reason":"FieldValueNotSupported","message":"Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"","field":"fieldValidation"}]},"code":422}`,
	}, {
		name: "namespace in body differs", stored: "u4",
		req:  req{method: "POST", path: path, body: `{"metadata":{"name":"u4","namespace":"other"}}`},
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the namespace of the provided object does not match the namespace sent on the request","reason":"BadRequest","code":400}`,
	}, {
		name: "unsupported content type", stored: "u5",
		req:  req{method: "POST", path: path, body: `{"metadata":{"name":"u5"}}`, headers: []string{"Content-Type: text/plain"}},
		code: 415,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf","reason":"UnsupportedMediaType","code":415}`,
	}, {
		name: "missing namespace",
		req:  req{method: "POST", path: "/api/v1/namespaces/missing-ns/configmaps", body: `{"metadata":{"name":"u6"}}`},
		code: 404,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"missing-ns\" not found","reason":"NotFound","details":{"name":"missing-ns","kind":"namespaces"},"code":404}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			do(t, tc.req).wantStatus(t, tc.code, tc.want)
			if tc.stored != "" {
				wantNotStored(t, ns, tc.stored)
			}
		})
	}
}

// TestOversizeBody checks that a body over 3 MiB is refused with 413 and
// nothing is stored, whether its length is announced or not.
func TestOversizeBody(t *testing.T) {
	ns := namespace(t)
	big := `{"metadata":{"name":"big"},"data":{"k":"` + strings.Repeat("x", 3*1024*1024) + `"}}`
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}`
	do(t, req{method: "POST", path: "/api/v1/namespaces/" + ns + "/configmaps", body: big}).wantStatus(t, 413, want)
	// Without Content-Length (chunked): the server stops reading at the limit.
	r, err := http.NewRequest("POST", srv.URL+"/api/v1/namespaces/"+ns+"/configmaps", struct{ *strings.Reader }{strings.NewReader(big)})
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	resp, err := httpClient(t).Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked: got %d, want 413", resp.StatusCode)
	}
	wantNotStored(t, ns, "big")
}

// TestUnknownFieldsWarn checks the default field validation: the object
// is stored, and each unknown or duplicate field is a Warning header.
func TestUnknownFieldsWarn(t *testing.T) {
	ns := namespace(t)
	r := do(t, req{method: "POST", path: "/api/v1/namespaces/" + ns + "/configmaps",
		body: `{"metadata":{"name":"w1"},"data":{"k":"v"},"bogus":1,"spec":{"x":1},"data":{"k":"v2"}}`})
	if r.code != 201 {
		t.Fatalf("got %d %s", r.code, r.body)
	}
	want := []string{`299 - "unknown field \"bogus\""`, `299 - "unknown field \"spec\""`, `299 - "duplicate field \"data\""`}
	if got := r.header.Values("Warning"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("warnings: got %q, want %q", got, want)
	}
	if _, cm := getConfigMap(t, ns, "w1"); cm == nil || cm.Data["k"] != "v2" {
		t.Errorf("stored: %+v", cm)
	}
}

// TestUnknownFieldsIgnored: with fieldValidation=Ignore, unknown fields
// are dropped silently (no Warning), for creates and patches alike.
func TestUnknownFieldsIgnored(t *testing.T) {
	ns := namespace(t)
	r := do(t, req{method: "POST", path: "/api/v1/namespaces/" + ns + "/configmaps?fieldValidation=Ignore",
		body: `{"metadata":{"name":"i1"},"data":{"k":"v"},"bogus":1}`})
	if r.code != 201 || len(r.header.Values("Warning")) != 0 {
		t.Fatalf("create: got %d, warnings %q", r.code, r.header.Values("Warning"))
	}
	r = do(t, req{method: "PATCH", path: "/api/v1/namespaces/" + ns + "/configmaps/i1?fieldValidation=Ignore",
		headers: []string{"Content-Type: application/merge-patch+json"}, body: `{"bogus":2}`})
	if r.code != 200 || len(r.header.Values("Warning")) != 0 {
		t.Fatalf("patch: got %d, warnings %q", r.code, r.header.Values("Warning"))
	}
}

// TestTerminatingNamespace checks that nothing can be created in a
// namespace being deleted (403, as kube's NamespaceLifecycle).
func TestTerminatingNamespace(t *testing.T) {
	ns := namespace(t)
	old := createConfigMap(t, ns, "before", nil)
	client := clientset(t)
	// A finalizer of its own keeps "before" (and so the namespace) while
	// the namespace controller empties the namespace.
	old.Finalizers = []string{"example.com/hold"}
	old, err := client.CoreV1().ConfigMaps(ns).Update(context.Background(), old, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cur, err := client.CoreV1().ConfigMaps(ns).Get(context.Background(), "before", metav1.GetOptions{})
		if err == nil {
			cur.Finalizers = nil
			client.CoreV1().ConfigMaps(ns).Update(context.Background(), cur, metav1.UpdateOptions{})
		}
	})
	if err := client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("namespace after delete: %v %+v", err, got)
	}
	r := do(t, req{method: "POST", path: "/api/v1/namespaces/" + ns + "/configmaps", body: `{"metadata":{"name":"after"}}`})
	r.wantStatus(t, 403, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"after\" is forbidden: unable to create new content in namespace `+ns+` because it is being terminated","reason":"Forbidden","details":{"name":"after","kind":"configmaps","causes":[{"reason":"NamespaceTerminating","message":"namespace `+ns+` is being terminated","field":"metadata.namespace"}]},"code":403}`)
	wantNotStored(t, ns, "after")
	// Updates of what is there still work (retried: the namespace
	// controller marks "before" deleted meanwhile).
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.CoreV1().ConfigMaps(ns).Get(context.Background(), "before", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Data = map[string]string{"k": "changed"}
		_, err = client.CoreV1().ConfigMaps(ns).Update(context.Background(), cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Errorf("update in a terminating namespace: %v", err)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "typed"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) || !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		t.Errorf("client-go create: got %v, want Forbidden with a NamespaceTerminating cause", err)
	}
}
