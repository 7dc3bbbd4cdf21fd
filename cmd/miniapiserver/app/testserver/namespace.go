package testserver

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

var (
	namespaces atomic.Int64
	notInLabel = regexp.MustCompile(`[^a-z0-9-]+`)
)

// NamespaceName returns a namespace name for the test t: a counter (unique
// within the test binary) and the test's name, cut to a valid DNS label.
// Tests that share one server each work in a namespace of their own.
func NamespaceName(t testing.TB) string {
	name := fmt.Sprintf("t%d-%s", namespaces.Add(1), notInLabel.ReplaceAllString(strings.ToLower(t.Name()), "-"))
	return strings.TrimRight(name[:min(len(name), 63)], "-")
}

// CreateNamespace creates a namespace named by NamespaceName and returns
// its name. As in kube, the namespace soon holds the ConfigMap
// kube-root-ca.crt and the ServiceAccount default.
func (ts *TestServer) CreateNamespace(t testing.TB) string {
	t.Helper()
	name := NamespaceName(t)
	client, err := kubernetes.NewForConfig(ts.ClientConfig)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("testserver: creating namespace %s: %v", name, err)
	}
	return name
}
