// Package crd tests CustomResourceDefinitions and the custom resources
// they declare through the HTTP API, the apiextensions clientset, the
// dynamic client and kubectl, against one shared server. Definitions are
// cluster-scoped: every test makes its own, in a group of its own.
//
// With -reference the tests run against the kube-apiserver named by
// $PEER_URL (token $PEER_TOKEN), to check that what they expect is what
// kube does; the golden Status bodies of testdata/ were recorded from
// kube-apiserver v1.37.2.
package crd

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// srv is the server every test of the package shares.
var srv *testserver.TestServer

var (
	reference = flag.Bool("reference", false, "run against the kube-apiserver at $PEER_URL (token $PEER_TOKEN) instead")
	update    = flag.Bool("update", false, "rewrite the golden files of testdata/ (with -reference: from kube)")
)

func TestMain(m *testing.M) {
	flag.Parse()
	if *reference && (os.Getenv("PEER_URL") == "" || os.Getenv("PEER_TOKEN") == "") {
		fmt.Fprintln(os.Stderr, "-reference needs $PEER_URL and $PEER_TOKEN")
		os.Exit(2)
	}
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts })
}

// config reaches the server under test as its administrator: the shared
// server, or the reference with -reference.
func config() *rest.Config {
	if *reference {
		return &rest.Config{
			Host: os.Getenv("PEER_URL"), BearerToken: os.Getenv("PEER_TOKEN"),
			TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1, Burst: -1,
		}
	}
	return rest.CopyConfig(srv.ClientConfig)
}

func crdClient(t testing.TB) apiextensionsclient.Interface {
	t.Helper()
	return crdClientFor(t, config())
}

func clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(config())
}

// ctx is a context for a test's requests, ended with the test.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// group is a group of the test's own: "<test>.example.com".
func group(t testing.TB) string {
	name := testserver.NamespaceName(t)
	if *reference {
		name = fmt.Sprintf("%s-%d", name[:min(len(name), 40)], time.Now().UnixNano()%1e6)
	}
	return strings.Trim(name[:min(len(name), 50)], "-") + ".example.com"
}

// widgetCRD is a namespaced definition of kind Widget in group, served and
// stored at v1, whose spec has a string, an integer defaulted to 1, and a
// list; mutate changes it before it is created.
func widgetCRD(group string, mutate ...func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget", ShortNames: []string{"wd"}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"color":    {Type: "string"},
							"replicas": {Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte("1")}},
							"tags":     {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"replicas": {Type: "integer"},
						}},
					},
				}},
			}},
		},
	}
	for _, m := range mutate {
		m(crd)
	}
	return crd
}

// createCRD creates crd and deletes it when the test ends.
func createCRD(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out, err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx(t), crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s: %v", crd.Name, err)
	}
	t.Cleanup(func() {
		err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s: %v", crd.Name, err)
		}
	})
	return out
}

// waitForCRD polls the definition name until cond holds, for up to 20s.
func waitForCRD(t testing.TB, name string, what string, cond func(*apiextensionsv1.CustomResourceDefinition) bool) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var last *apiextensionsv1.CustomResourceDefinition
	err := wait.PollUntilContextTimeout(ctx(t), 5*time.Millisecond, 20*time.Second, true, func(c context.Context) (bool, error) {
		crd, err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Get(c, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = crd
		return cond(crd), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s to be %s: %v (last seen: %+v)", name, what, err, last)
	}
	return last
}

// condition returns the status of the condition of type typ ("" when
// absent) and its reason and message.
func condition(crd *apiextensionsv1.CustomResourceDefinition, typ apiextensionsv1.CustomResourceDefinitionConditionType) (apiextensionsv1.ConditionStatus, string, string) {
	for _, c := range crd.Status.Conditions {
		if c.Type == typ {
			return c.Status, c.Reason, c.Message
		}
	}
	return "", "", ""
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	s, _, _ := condition(crd, apiextensionsv1.Established)
	return s == apiextensionsv1.ConditionTrue
}

// createEstablished creates crd and waits until it is established.
func createEstablished(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	createCRD(t, crd)
	return waitForCRD(t, crd.Name, "established", established)
}

func crdClientFor(t testing.TB, cfg *rest.Config) apiextensionsclient.Interface {
	t.Helper()
	return apiextensionsclient.NewForConfigOrDie(cfg)
}
