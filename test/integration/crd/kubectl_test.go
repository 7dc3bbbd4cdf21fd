package crd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// kubectl runs kubectl against the server under test (stdin may be
// empty) and returns its output; it fails the test unless wantErr.
func kubectl(t testing.TB, stdin string, wantErr bool, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (v1.32 or later) to run the kubectl tests")
	}
	cfg := config()
	base := []string{"--server", cfg.Host, "--token", cfg.BearerToken, "--insecure-skip-tls-verify",
		// A cache of its own: discovery of each test's groups is fresh.
		"--cache-dir", filepath.Join(t.TempDir(), "cache")}
	cmd := exec.Command("kubectl", append(base, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=/dev/null")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if (err != nil) != wantErr {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String() + errOut.String()
}

// squeeze joins the fields of each line with single spaces.
func squeeze(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// TestKubectl: kubectl applies a definition and its custom resources,
// prints them with their columns, finds them by short name and in the
// categories they list (get all), edits them by patch and deletes them.
func TestKubectl(t *testing.T) {
	t.Parallel()
	g := group(t)
	ns := namespace(t)
	// Its own short name and category: other tests' definitions come and
	// go meanwhile.
	short := "wd" + strings.Split(strings.TrimPrefix(g, "t"), "-")[0]
	crd := crdFromFile(t, "widgets.yaml", g)
	crd.Spec.Names.ShortNames, crd.Spec.Names.Categories = []string{short}, []string{"all"}
	crd.APIVersion, crd.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	kubectl(t, string(encodeJSON(t, crd)), false, "apply", "-f", "-")
	t.Cleanup(func() { kubectl(t, "", false, "delete", "crd", "widgets."+g, "--wait=false") })
	// kubectl wait fails on a definition whose status.conditions is still
	// null, as a new one's is, on kube too, until its conditions are first
	// written: it waits once they are.
	waitForCRD(t, "widgets."+g, "conditions", func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Status.Conditions != nil })
	kubectl(t, "", false, "wait", "--for=condition=Established", "crd/widgets."+g, "--timeout=20s")
	out := kubectl(t, "apiVersion: "+g+"/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {color: red, replicas: 2}\n", false, "apply", "-n", ns, "-f", "-")
	if !strings.Contains(out, "widget."+g+"/w1 created") {
		t.Errorf("apply: %s", out)
	}
	out = squeeze(kubectl(t, "", false, "get", "widgets."+g, "-n", ns))
	if lines := strings.Split(out, "\n"); len(lines) != 2 || lines[0] != "NAME COLOR REPLICAS AGE" || !strings.HasPrefix(lines[1], "w1 red 2 ") {
		t.Errorf("get:\n%s", out)
	}
	out = squeeze(kubectl(t, "", false, "get", short, "-n", ns, "-o", "wide"))
	if lines := strings.Split(out, "\n"); lines[0] != "NAME COLOR REPLICAS READY AGE" {
		t.Errorf("get by short name, wide:\n%s", out)
	}
	out = kubectl(t, "", false, "get", "all", "-n", ns)
	if !strings.Contains(out, "widget."+g+"/w1") {
		t.Errorf("get all (the definition lists category all):\n%s", out)
	}
	out = kubectl(t, "", false, "explain", "widgets."+g+".spec.ports")
	for _, want := range []string{"KIND:       Widget", "FIELD: ports <[]Object>", "name\t<string> -required-", "port\t<integer>"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
	kubectl(t, "", false, "patch", "widget."+g, "w1", "-n", ns, "--type=merge", "-p", `{"spec":{"replicas":3}}`)
	if out := kubectl(t, "", false, "get", "widget."+g, "w1", "-n", ns, "-o", "jsonpath={.spec.replicas}/{.metadata.generation}"); out != "3/2" {
		t.Errorf("after patch: replicas/generation %s", out)
	}
	out = kubectl(t, "", true, "patch", "widget."+g, "w1", "-n", ns, "--type=merge", "-p", `{"spec":{"color":"pink"}}`)
	if !strings.Contains(out, `spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"`) {
		t.Errorf("invalid patch: %s", out)
	}
	kubectl(t, "", false, "scale", "widget."+g, "w1", "-n", ns, "--replicas=5")
	if out := kubectl(t, "", false, "get", "widget."+g, "w1", "-n", ns, "-o", "jsonpath={.spec.replicas}"); out != "5" {
		t.Errorf("after kubectl scale: replicas %s", out)
	}
	kubectl(t, "", false, "delete", "widget."+g, "w1", "-n", ns)
	if out := kubectl(t, "", false, "get", "widgets."+g, "-n", ns); !strings.Contains(out, "No resources found") {
		t.Errorf("after delete: %s", out)
	}
}
