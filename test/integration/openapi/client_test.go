package openapi

import (
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/util/proto/validation"
)

func discoveryClient(t *testing.T) *discovery.DiscoveryClient {
	t.Helper()
	// client-go's discovery gives up after 32 s by default; the first
	// protobuf encoding of /openapi/v2 can take half of that under -race
	// on a busy machine.
	cfg := rest.CopyConfig(srv.ClientConfig)
	cfg.Timeout = 2 * time.Minute
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// TestClientGoOpenAPIV3 reads the documents as kubectl explain does.
func TestClientGoOpenAPIV3(t *testing.T) {
	dc := discoveryClient(t)
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	if got, want := strings.Join(names, " "), servedPaths(t); got != want {
		t.Errorf("paths: got %s, want %s", got, want)
	}
	root := openapi3.NewRoot(dc.OpenAPIV3())
	for _, tc := range []struct {
		gv     schema.GroupVersion
		schema string
	}{
		{schema.GroupVersion{Version: "v1"}, "io.k8s.api.core.v1.Pod"},
		{schema.GroupVersion{Group: "apps", Version: "v1"}, "io.k8s.api.apps.v1.Deployment"},
		{schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}, "io.k8s.api.coordination.v1.Lease"},
		{schema.GroupVersion{Group: "autoscaling", Version: "v1"}, "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"},
		{schema.GroupVersion{Group: "autoscaling", Version: "v2"}, "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"},
		{schema.GroupVersion{Group: "events.k8s.io", Version: "v1"}, "io.k8s.api.events.v1.Event"},
		{schema.GroupVersion{Group: "certificates.k8s.io", Version: "v1"}, "io.k8s.api.certificates.v1.CertificateSigningRequest"},
		{schema.GroupVersion{Group: "admissionregistration.k8s.io", Version: "v1"}, "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy"},
		{schema.GroupVersion{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}, "io.k8s.api.flowcontrol.v1.FlowSchema"},
		{schema.GroupVersion{Group: "storagemigration.k8s.io", Version: "v1"}, "io.k8s.api.storagemigration.v1.StorageVersionMigration"},
		{schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"},
		{schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"}, "io.k8s.api.resource.v1.ResourceClaim"},
		{schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}, "io.k8s.api.rbac.v1.ClusterRole"},
		{schema.GroupVersion{Group: "authorization.k8s.io", Version: "v1"}, "io.k8s.api.authorization.v1.SubjectAccessReview"},
	} {
		doc, err := root.GVSpec(tc.gv)
		if err != nil {
			t.Fatalf("%s: %v", tc.gv, err)
		}
		s := doc.Components.Schemas[tc.schema]
		if s == nil || s.Extensions["x-kubernetes-group-version-kind"] == nil || s.Description == "" {
			t.Errorf("%s: schema %s: %+v", tc.gv, tc.schema, s)
		}
	}
	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatal(err)
	}
	// Every served group version has a document: api/v1 and one per
	// apis/<group>/<version>.
	if want := strings.Count(servedPaths(t), "/v"); len(gvs) != want {
		t.Errorf("group versions: %v, want %d", gvs, want)
	}
}

// servedPaths are the paths of the OpenAPI v3 index kube serves for the
// group versions discovery lists: api, api/v1, apis, apis/<group> and
// apis/<group>/<version> for each, and version; sorted, space separated.
func servedPaths(t *testing.T) string {
	t.Helper()
	groups, err := discoveryClient(t).ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"api", "apis", "version"}
	for _, g := range groups.Groups {
		prefix := "apis/" + g.Name
		if g.Name == "" {
			prefix = "api"
		} else {
			paths = append(paths, prefix)
		}
		for _, v := range g.Versions {
			paths = append(paths, prefix+"/"+v.Version)
		}
	}
	sort.Strings(paths)
	return strings.Join(paths, " ")
}

// TestClientSideValidation validates manifests against /openapi/v2 as
// kubectl does when a server does not validate fields itself.
func TestClientSideValidation(t *testing.T) {
	doc, err := discoveryClient(t).OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatal(err)
	}
	deployment := lookup(t, models, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	cases := []struct {
		name     string
		manifest string
		want     []string
	}{
		{name: "valid", manifest: validDeployment},
		{name: "unknown field", manifest: strings.Replace(validDeployment, "ports:", "prots:", 1),
			want: []string{`ValidationError(Deployment.spec.template.spec.containers[0]): unknown field "prots" in io.k8s.api.core.v1.Container`}},
		{name: "wrong type", manifest: strings.Replace(validDeployment, "replicas: 1", "replicas: one", 1),
			want: []string{`ValidationError(Deployment.spec.replicas): invalid type for io.k8s.api.apps.v1.DeploymentSpec.replicas: got "string", expected "integer"`}},
		{name: "missing required field", manifest: strings.Replace(validDeployment, "- name: c\n        image", "- image", 1),
			want: []string{`ValidationError(Deployment.spec.template.spec.containers[0]): missing required field "name" in io.k8s.api.core.v1.Container`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var obj interface{}
			if err := yaml.Unmarshal([]byte(tc.manifest), &obj); err != nil {
				t.Fatal(err)
			}
			errs := validation.ValidateModel(obj, deployment, "Deployment")
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// lookup finds the model of a kind by its x-kubernetes-group-version-kind,
// as kubectl's resource index does.
func lookup(t *testing.T, models proto.Models, gvk schema.GroupVersionKind) proto.Schema {
	t.Helper()
	for _, name := range models.ListModels() {
		m := models.LookupModel(name)
		list, _ := m.GetExtensions()["x-kubernetes-group-version-kind"].([]interface{})
		for _, item := range list {
			g, _ := item.(map[interface{}]interface{})
			if g["group"] == gvk.Group && g["version"] == gvk.Version && g["kind"] == gvk.Kind {
				return m
			}
		}
	}
	t.Fatalf("no model for %s", gvk)
	return nil
}

const validDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: 1
  selector:
    matchLabels: {app: d}
  template:
    metadata:
      labels: {app: d}
    spec:
      containers:
      - name: c
        image: nginx
        ports:
        - containerPort: 80
`
