package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
)

// TestWriteAnswersEveryKind: the compact JSON answer of a create, an
// update, a patch and an update that changes nothing is, for every kind,
// exactly what the server's JSON serializer writes for the object it
// names (the server answers with the bytes it stored, without encoding
// the result again: the answer must not tell).
func TestWriteAnswersEveryKind(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	for _, res := range fixtureResources(t) {
		t.Run(res, func(t *testing.T) {
			obj := fixtureObject(t, ns, res)
			collection := collectionPath(t, res, ns)
			r := do(t, req{method: http.MethodPost, path: collection, body: obj, headers: []string{"Content-Type: application/json"}})
			if r.code != http.StatusCreated {
				t.Fatalf("create: %d %s", r.code, r.body)
			}
			created := sameAsEncoded(t, "create", r.body)
			path := collection + "/" + created.GetName()

			// Controllers may write the object after its create (a
			// namespace's finalizer, a service account's...): PUT what
			// is there now.
			var updated *unstructured.Unstructured
			for attempt := 0; ; attempt++ {
				current := do(t, req{path: path})
				if current.code != http.StatusOK {
					t.Fatalf("get: %d %s", current.code, current.body)
				}
				put := sameAsEncoded(t, "get", current.body)
				labels := put.GetLabels()
				if labels == nil {
					labels = map[string]string{}
				}
				labels["written"] = "put"
				put.SetLabels(labels)
				body, err := put.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				r = do(t, req{method: http.MethodPut, path: path, body: body, headers: []string{"Content-Type: application/json"}})
				if r.code == http.StatusConflict && attempt < 5 {
					continue
				}
				if r.code != http.StatusOK {
					t.Fatalf("update: %d %s", r.code, r.body)
				}
				updated = sameAsEncoded(t, "update", r.body)
				break
			}
			if updated.GetLabels()["written"] != "put" {
				t.Fatalf("the update's answer lacks its label: %v", updated.GetLabels())
			}

			r = do(t, req{method: http.MethodPatch, path: path, body: []byte(`{"metadata":{"labels":{"patched":"yes"}}}`),
				headers: []string{"Content-Type: application/merge-patch+json"}})
			if r.code != http.StatusOK {
				t.Fatalf("patch: %d %s", r.code, r.body)
			}
			patched := sameAsEncoded(t, "patch", r.body)
			if patched.GetLabels()["patched"] != "yes" {
				t.Fatalf("the patch's answer lacks its label: %v", patched.GetLabels())
			}
		})
	}
}

// TestWriteAnswerUnchanged: an update that changes nothing writes
// nothing, and answers with the state kept, byte for byte.
func TestWriteAnswerUnchanged(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	r := do(t, req{method: http.MethodPost, path: path, body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"same"},"data":{"a":"1"}}`),
		headers: []string{"Content-Type: application/json"}})
	if r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	created := sameAsEncoded(t, "create", r.body)
	for _, verb := range []req{
		{method: http.MethodPut, body: r.body, headers: []string{"Content-Type: application/json"}},
		{method: http.MethodPatch, body: []byte(`{"data":{"a":"1"}}`), headers: []string{"Content-Type: application/merge-patch+json"}},
	} {
		verb.path = path + "/same"
		again := do(t, verb)
		if again.code != http.StatusOK {
			t.Fatalf("%s without a change: %d %s", verb.method, again.code, again.body)
		}
		kept := sameAsEncoded(t, verb.method+" without a change", again.body)
		// The field manager keeps its entry's time when nothing changes.
		if !bytes.Equal(again.body, r.body) || kept.GetResourceVersion() != created.GetResourceVersion() {
			t.Errorf("%s without a change answered\n%s\nnot the state kept\n%s", verb.method, again.body, r.body)
		}
	}
}

// TestWriteAnswersOtherRepresentations: a write answered in another
// representation than the stored one (another version, YAML, pretty
// JSON, protobuf, a Table) is still encoded from the result.
func TestWriteAnswersOtherRepresentations(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	hpa := func(name string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":%q},`+
			`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":3,"targetCPUUtilizationPercentage":70}}`, name))
	}
	cm := func(name string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"a":"1"}}`, name))
	}
	for _, tc := range []struct {
		name, path string
		body       []byte
		accept     string
		check      func(t *testing.T, contentType string, body []byte)
	}{
		{"another version", "/apis/autoscaling/v1/namespaces/" + ns + "/horizontalpodautoscalers", hpa("v1"), "",
			func(t *testing.T, contentType string, body []byte) {
				obj := sameAsEncoded(t, "create", body)
				if obj.GetAPIVersion() != "autoscaling/v1" {
					t.Errorf("answered as %s, not autoscaling/v1", obj.GetAPIVersion())
				}
				if target, _, _ := unstructured.NestedInt64(obj.Object, "spec", "targetCPUUtilizationPercentage"); target != 70 {
					t.Errorf("targetCPUUtilizationPercentage %d, want 70: %s", target, body)
				}
			}},
		{"yaml", "/api/v1/namespaces/" + ns + "/configmaps", cm("yaml"), "application/yaml",
			func(t *testing.T, contentType string, body []byte) {
				if contentType != "application/yaml" || !bytes.HasPrefix(body, []byte("apiVersion: v1\n")) {
					t.Errorf("not YAML: %q %s", contentType, body)
				}
			}},
		{"pretty", "/api/v1/namespaces/" + ns + "/configmaps?pretty=true", cm("pretty"), "",
			func(t *testing.T, contentType string, body []byte) {
				if !bytes.HasPrefix(body, []byte("{\n  \"kind\": \"ConfigMap\",\n")) {
					t.Errorf("not pretty JSON: %s", body)
				}
			}},
		{"protobuf", "/api/v1/namespaces/" + ns + "/configmaps", cm("protobuf"), negotiation.MediaTypeProtobuf,
			func(t *testing.T, contentType string, body []byte) {
				if contentType != negotiation.MediaTypeProtobuf || !bytes.HasPrefix(body, []byte("k8s\x00")) {
					t.Errorf("not protobuf: %q %q", contentType, body)
				}
			}},
		{"table", "/api/v1/namespaces/" + ns + "/configmaps", cm("table"), acceptTable,
			func(t *testing.T, contentType string, body []byte) {
				if !bytes.Contains(body, []byte(`"kind":"Table"`)) || !bytes.Contains(body, []byte(`"table"`)) {
					t.Errorf("not a Table: %s", body)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headers := []string{"Content-Type: application/json"}
			if tc.accept != "" {
				headers = append(headers, "Accept: "+tc.accept)
			}
			r := do(t, req{method: http.MethodPost, path: tc.path, body: tc.body, headers: headers})
			if r.code != http.StatusCreated {
				t.Fatalf("create: %d %s", r.code, r.body)
			}
			tc.check(t, r.header.Get("Content-Type"), r.body)
		})
	}
}

// fixtureObject returns the JSON of testdata/objects/<resource>.json to
// create in ns, named apart from the objects other tests make of it.
func fixtureObject(t *testing.T, ns, resource string) []byte {
	t.Helper()
	obj := readFixture(t, ns, resource)
	switch {
	case resource == "ipaddresses": // named by its address; the table fixture has its own
		obj.SetName("192.168.201.1")
	case resource == "apiservices": // named by its version and group
		group := "written.example.com-" + ns
		if err := unstructured.SetNestedField(obj.Object, group, "spec", "group"); err != nil {
			t.Fatal(err)
		}
		obj.SetName("v1." + group)
	case !servedResources(t)[resource].namespaced:
		obj.SetName(obj.GetName() + "-written-" + ns)
	default:
		obj.SetName(obj.GetName() + "-written")
	}
	body, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// sameAsEncoded decodes body, the compact JSON of an object, and fails
// unless the server's JSON serializer writes exactly body for it.
func sameAsEncoded(t *testing.T, what string, body []byte) *unstructured.Unstructured {
	t.Helper()
	typed, _, err := negotiation.Codecs().UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		t.Fatalf("%s: decoding the answer: %v\n%s", what, err, body)
	}
	info, ok := negotiation.Serializer(negotiation.MediaTypeJSON)
	if !ok {
		t.Fatal("no JSON serializer")
	}
	var encoded bytes.Buffer
	if err := info.Serializer.Encode(typed, &encoded); err != nil {
		t.Fatalf("%s: encoding the answer again: %v", what, err)
	}
	if !bytes.Equal(encoded.Bytes(), body) {
		t.Fatalf("%s: the answer\n%s\nis not what the serializer writes for it\n%s", what, body, encoded.Bytes())
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(body); err != nil {
		t.Fatal(err)
	}
	return obj
}
