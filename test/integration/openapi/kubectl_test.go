package openapi

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// kubectl runs kubectl with the server's kubeconfig; it returns stdout,
// stderr and whether kubectl succeeded.
func kubectl(t *testing.T, args ...string) (string, string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", srv.Server.KubeconfigPath}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String(), stderr.String(), err == nil
}

func needKubectl(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (v1.32 or later) to run the kubectl tests")
	}
}

// manifest writes a manifest file for a test.
func manifest(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestKubectlExplain(t *testing.T) {
	needKubectl(t)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"explain", "deployment.spec.template.spec.containers"}, []string{
			"GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nFIELD: containers <[]Container>\n",
			"DESCRIPTION:\n    List of containers belonging to the pod. Containers cannot currently be\n    added or removed.",
			"  image\t<string>\n    Container image name.",
			"  name\t<string> -required-\n",
			"  ports\t<[]ContainerPort>\n",
		}},
		{[]string{"explain", "pods", "--recursive"}, []string{
			"KIND:       Pod\nVERSION:    v1\n",
			"FIELDS:\n  apiVersion\t<string>\n  kind\t<string>\n  metadata\t<ObjectMeta>\n    annotations\t<map[string]string>\n",
			"\n  spec\t<PodSpec>\n",
			"\n    containers\t<[]Container> -required-\n",
			"\n        containerPort\t<integer> -required-\n",
		}},
		{[]string{"explain", "pods.spec.containers.imagePullPolicy"}, []string{
			"FIELD: imagePullPolicy <string>\nENUM:\n    Always\n    IfNotPresent\n    Never\n",
			"Possible enum values:\n     - `\"Always\"` means that kubelet always attempts to pull the latest image.",
		}},
		{[]string{"explain", "leases.spec.holderIdentity"}, []string{
			"GROUP:      coordination.k8s.io\nKIND:       Lease\nVERSION:    v1\n\nFIELD: holderIdentity <string>\n",
		}},
		{[]string{"explain", "pods", "--output=plaintext-openapiv2"}, []string{
			"KIND:     Pod\nVERSION:  v1\n",
		}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, ok := kubectl(t, tc.args...)
			if !ok {
				t.Fatalf("kubectl failed: %s", errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestKubectlValidation: kubectl finds fieldValidation in the documents,
// lets the server check fields strictly, and reports a typo as it does
// against kube.
func TestKubectlValidation(t *testing.T) {
	needKubectl(t)
	ns := "kubectl-validation"
	createNamespace(t, ns)
	typo := manifest(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: typo
  namespace: `+ns+`
data:
  a: "1"
dta:
  b: "2"
`)
	nestedTypo := manifest(t, strings.Replace(strings.Replace(validDeployment, "ports:", "prots:", 1), "name: d\n", "name: d\n  namespace: "+ns+"\n", 1))

	t.Run("strict by default", func(t *testing.T) {
		_, errOut, ok := kubectl(t, "apply", "-f", typo, "-v=6")
		if ok {
			t.Fatal("kubectl apply of a manifest with an unknown field succeeded")
		}
		want := `Error from server (BadRequest): error when creating "` + typo + `": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dta"`
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
		if !strings.Contains(errOut, "/namespaces/"+ns+"/configmaps?fieldManager=kubectl-client-side-apply&fieldValidation=Strict") {
			t.Errorf("kubectl did not ask the server to validate strictly:\n%s", errOut)
		}
	})
	t.Run("nested field", func(t *testing.T) {
		_, errOut, ok := kubectl(t, "apply", "-f", nestedTypo)
		want := `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].prots"`
		if ok || !strings.Contains(errOut, want) {
			t.Errorf("succeeded %v; stderr lacks %q:\n%s", ok, want, errOut)
		}
	})
	t.Run("warn", func(t *testing.T) {
		out, errOut, ok := kubectl(t, "create", "-f", typo, "--validate=warn")
		if !ok || !strings.Contains(errOut, `Warning: unknown field "dta"`) || !strings.Contains(out, "configmap/typo created") {
			t.Errorf("succeeded %v, stdout %q, stderr %q", ok, out, errOut)
		}
	})
}

// TestKubectlCreateMultiDocument: a valid manifest of several kinds goes
// in with kubectl's default validation.
func TestKubectlCreateMultiDocument(t *testing.T) {
	needKubectl(t)
	ns := "kubectl-multi"
	createNamespace(t, ns)
	docs := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n",
		validDeployment,
		"apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: l\nspec:\n  holderIdentity: me\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  selector: {app: d}\n  ports:\n  - port: 80\n    targetPort: http\n",
	}
	p := manifest(t, strings.Join(docs, "---\n"))
	out, errOut, ok := kubectl(t, "-n", ns, "create", "-f", p)
	if !ok || errOut != "" {
		t.Fatalf("kubectl create: %v\n%s%s", ok, out, errOut)
	}
	want := "configmap/cm created\ndeployment.apps/d created\nlease.coordination.k8s.io/l created\nservice/s created\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	out, errOut, ok = kubectl(t, "-n", ns, "get", "-f", p, "-o", "name")
	if !ok || out != "configmap/cm\ndeployment.apps/d\nlease.coordination.k8s.io/l\nservice/s\n" {
		t.Errorf("kubectl get: %v\n%s%s", ok, out, errOut)
	}
}
