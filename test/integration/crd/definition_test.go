package crd

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// TestCreateDefaultsAndEstablishes: a definition gets v1's defaults and
// the server's status (generation, stored version), then its names and
// the Established condition, as kube words them.
func TestCreateDefaultsAndEstablishes(t *testing.T) {
	t.Parallel()
	crd := createCRD(t, widgetCRD(group(t)))
	names := crd.Spec.Names
	if names.Singular != "widget" || names.ListKind != "WidgetList" || crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
		t.Errorf("defaults: names %+v, conversion %+v", names, crd.Spec.Conversion)
	}
	if crd.Generation != 1 || !slices.Equal(crd.Status.StoredVersions, []string{"v1"}) {
		t.Errorf("generation %d, storedVersions %v", crd.Generation, crd.Status.StoredVersions)
	}
	crd = waitForCRD(t, crd.Name, "established", established)
	if !reflect.DeepEqual(crd.Status.AcceptedNames, crd.Spec.Names) {
		t.Errorf("acceptedNames %+v, want the spec's %+v", crd.Status.AcceptedNames, crd.Spec.Names)
	}
	for typ, want := range map[apiextensionsv1.CustomResourceDefinitionConditionType][3]string{
		apiextensionsv1.NamesAccepted: {"True", "NoConflicts", "no conflicts found"},
		apiextensionsv1.Established:   {"True", "InitialNamesAccepted", "the initial names have been accepted"},
	} {
		s, reason, msg := condition(crd, typ)
		if got := [3]string{string(s), reason, msg}; got != want {
			t.Errorf("condition %s: got %q, want %q", typ, got, want)
		}
	}
}

// TestInvalidDefinitionsAsKube: an invalid definition is refused with
// kube's Status, every cause in kube's words (golden bodies recorded from
// kube-apiserver v1.37.2).
func TestInvalidDefinitionsAsKube(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"invalid-storage-versions", "invalid-names"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join("testdata", name+".request.json"))
			if err != nil {
				t.Fatal(err)
			}
			code, got := do(t, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", body)
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("code %d: %s", code, got)
			}
			compareGolden(t, filepath.Join("testdata", name+".json"), got)
		})
	}
}

// TestNameConflicts: within a group, a definition gets no name another
// holds (the last conflict found is the reason), is not established, and
// is once the conflict is gone; kube's conditions.
func TestNameConflicts(t *testing.T) {
	t.Parallel()
	g := group(t)
	createEstablished(t, widgetCRD(g))
	client := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()

	gadgets := createCRD(t, widgetCRD(g, func(c *apiextensionsv1.CustomResourceDefinition) {
		c.Name, c.Spec.Names = "gadgets."+g, apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Kind: "Gadget", ShortNames: []string{"wd"}}
	}))
	gadgets = waitForCRD(t, gadgets.Name, "refused a name", func(c *apiextensionsv1.CustomResourceDefinition) bool {
		s, _, _ := condition(c, apiextensionsv1.NamesAccepted)
		return s == apiextensionsv1.ConditionFalse
	})
	if s, r, m := condition(gadgets, apiextensionsv1.NamesAccepted); r != "ShortNamesConflict" || m != `"wd" is already in use` {
		t.Errorf("NamesAccepted: %s %s %q", s, r, m)
	}
	if s, r, m := condition(gadgets, apiextensionsv1.Established); s != apiextensionsv1.ConditionFalse || r != "NotAccepted" || m != "not all names are accepted" {
		t.Errorf("Established: %s %s %q", s, r, m)
	}
	if a := gadgets.Status.AcceptedNames; a.Plural != "gadgets" || a.Kind != "Gadget" || len(a.ShortNames) != 0 {
		t.Errorf("acceptedNames %+v: want every name but the short name", a)
	}

	things := createCRD(t, widgetCRD(g, func(c *apiextensionsv1.CustomResourceDefinition) {
		c.Name, c.Spec.Names = "things."+g, apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Kind: "Widget"}
	}))
	things = waitForCRD(t, things.Name, "refused a name", func(c *apiextensionsv1.CustomResourceDefinition) bool {
		s, _, _ := condition(c, apiextensionsv1.NamesAccepted)
		return s == apiextensionsv1.ConditionFalse
	})
	if _, r, m := condition(things, apiextensionsv1.NamesAccepted); r != "ListKindConflict" || m != `"WidgetList" is already in use` {
		t.Errorf("NamesAccepted of a kind in use: %s %q", r, m)
	}

	gadgets.Spec.Names.ShortNames = []string{"gd"}
	if _, err := client.Update(ctx(t), gadgets, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	gadgets = waitForCRD(t, gadgets.Name, "established", established)
	if !slices.Equal(gadgets.Status.AcceptedNames.ShortNames, []string{"gd"}) {
		t.Errorf("acceptedNames %+v after the conflict is gone", gadgets.Status.AcceptedNames)
	}
}

// TestUpdateRules: the generation counts spec changes, a new storage
// version is recorded in storedVersions, an update must name the
// resourceVersion it read, and the status is the status subresource's
// (which keeps the spec).
func TestUpdateRules(t *testing.T) {
	t.Parallel()
	client := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	crd := createEstablished(t, widgetCRD(group(t)))

	v2 := *crd.Spec.Versions[0].DeepCopy()
	v2.Name = "v2"
	crd.Spec.Versions[0].Storage = false
	crd.Spec.Versions = append(crd.Spec.Versions, v2)
	crd.Status.StoredVersions = nil // the main endpoint keeps the status
	updated, err := client.Update(ctx(t), crd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Generation != 2 || !slices.Equal(updated.Status.StoredVersions, []string{"v1", "v2"}) {
		t.Errorf("after adding storage version v2: generation %d, storedVersions %v", updated.Generation, updated.Status.StoredVersions)
	}

	unconditional := updated.DeepCopy()
	unconditional.ResourceVersion = ""
	_, err = client.Update(ctx(t), unconditional, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != `customresourcedefinitions.apiextensions.k8s.io "`+crd.Name+`" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update` {
		t.Errorf("update without resourceVersion: %v", err)
	}

	status := waitForCRD(t, crd.Name, "synced", func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Generation == 2 })
	status.Spec.Scope = apiextensionsv1.ClusterScoped
	status.Labels = map[string]string{"via": "status"}
	status.Status.StoredVersions = []string{"v2"}
	out, err := client.UpdateStatus(ctx(t), status, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Spec.Scope != apiextensionsv1.NamespaceScoped || out.Generation != 2 || !slices.Equal(out.Status.StoredVersions, []string{"v2"}) {
		t.Errorf("status update: scope %s, generation %d, storedVersions %v", out.Spec.Scope, out.Generation, out.Status.StoredVersions)
	}
	if out.Labels["via"] != "status" {
		t.Errorf("labels %v: kube 1.37 keeps the metadata a CRD status update sends", out.Labels)
	}

	out.Status.AcceptedNames.Plural = "Not Valid"
	_, err = client.UpdateStatus(ctx(t), out, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.HasPrefix(err.Error(), `CustomResourceDefinition.apiextensions.k8s.io "`+crd.Name+
		`" is invalid: status.acceptedNames.plural: Invalid value: "Not Valid": a DNS-1035 label must consist of`) {
		t.Errorf("invalid accepted names: %v", err)
	}
}

// TestSchemaWarnings: formats the server does not know are warned of, on
// create, and on update only when new.
func TestSchemaWarnings(t *testing.T) {
	t.Parallel()
	handler := &warnings{}
	cfg := config()
	cfg.WarningHandler = handler
	client := crdClientFor(t, cfg).ApiextensionsV1().CustomResourceDefinitions()
	crd := widgetCRD(group(t), func(c *apiextensionsv1.CustomResourceDefinition) {
		spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["color"] = apiextensionsv1.JSONSchemaProps{Type: "string", Format: "colour"}
		c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	})
	out, err := client.Create(ctx(t), crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Delete(ctx(t), crd.Name, metav1.DeleteOptions{}) }) //nolint:errcheck // best effort
	if got := handler.take(); !slices.Equal(got, []string{`unrecognized format "colour"`}) {
		t.Errorf("warnings on create: %q", got)
	}
	out = waitForCRD(t, crd.Name, "established", established)
	out.Labels = map[string]string{"a": "b"}
	if _, err := client.Update(ctx(t), out, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := handler.take(); len(got) != 0 {
		t.Errorf("warnings on an update that adds no format: %q", got)
	}
}

// warnings collects the warnings a client receives.
type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	w.got = append(w.got, text)
	w.mu.Unlock()
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	got := w.got
	w.got = nil
	return got
}

// response is what a raw request got back.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// do sends a raw request to the server under test and returns the code
// and body.
func do(t testing.TB, method, path, contentType string, body []byte, headers ...string) (int, []byte) {
	t.Helper()
	r := send(t, method, path, contentType, body, headers...)
	return r.code, r.body
}

// send sends a raw request (headers as name, value pairs) to the server
// under test.
func send(t testing.TB, method, path, contentType string, body []byte, headers ...string) response {
	t.Helper()
	cfg := config()
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx(t), method, cfg.Host+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: data}
}

// compareGolden compares a JSON body with a golden file, as JSON values.
func compareGolden(t testing.TB, file string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var g, w interface{}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("body is no JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("body differs from %s:\n got: %s\nwant: %s", file, got, want)
	}
}
