package core

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// withFlags sets the controller flags args on the options as the command
// line does (the deprecated ones become names of --controllers).
func withFlags(t *testing.T, args ...string) testserver.Option {
	return func(o *app.Options) {
		fs := pflag.NewFlagSet("miniapiserver", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Errorf("flags %v: %v", args, err)
		}
		o.ApplyDeprecatedControllerFlags(fs)
	}
}

// asKubeAPIServer runs the server as it runs when started as
// kube-apiserver (envtest's asset).
func asKubeAPIServer(o *app.Options) { o.KubeAPIServer = true }

// TestControllersChooseNamespaceDefaults: what a new namespace holds
// follows --controllers and the binary's name. Standalone, it gets the
// ServiceAccount default and the ConfigMap kube-root-ca.crt, as in a
// cluster with kube-controller-manager; run as kube-apiserver, neither, as
// with kube-apiserver alone (controller-runtime's tests list a namespace's
// ConfigMaps and ServiceAccounts and expect only theirs), while deleted
// namespaces still go away.
func TestControllersChooseNamespaceDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                    string
		opts                    []testserver.Option
		wantSA, wantCA, wantAgg bool
		noNamespaceController   bool
	}{
		{name: "standalone defaults", wantSA: true, wantCA: true, wantAgg: true},
		{name: "without serviceaccount", opts: []testserver.Option{withFlags(t, "--controllers=*,-serviceaccount")}, wantCA: true, wantAgg: true},
		{name: "by canonical names", opts: []testserver.Option{withFlags(t, "--controllers=-root-ca-certificate-publisher-controller,*")}, wantSA: true, wantAgg: true},
		{name: "as kube-apiserver", opts: []testserver.Option{asKubeAPIServer}},
		{name: "as kube-apiserver with serviceaccount", opts: []testserver.Option{asKubeAPIServer, withFlags(t, "--controllers=*,serviceaccount")}, wantSA: true},
		{name: "deprecated flags", opts: []testserver.Option{withFlags(t, "--controllers=*,-namespace", "--namespace-controller=true")},
			wantSA: true, wantCA: true, wantAgg: true},
		{name: "none", opts: []testserver.Option{withFlags(t, "--controllers=")}, noNamespaceController: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := testserver.Start(t, tc.opts...)
			client := kubernetes.NewForConfigOrDie(ts.ClientConfig)
			ns := ts.CreateNamespace(t)
			ctx := context.Background()
			_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			checkExists(t, "ServiceAccount default", err, tc.wantSA)
			_, err = client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			checkExists(t, "ConfigMap kube-root-ca.crt", err, tc.wantCA)
			checkAggregated(t, client, tc.wantAgg)
			if tc.noNamespaceController {
				return // TestNamespaceDeletionFinishes checks what then
			}
			if err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			waitGone(t, client, ns)
		})
	}
}

func checkExists(t *testing.T, what string, err error, want bool) {
	t.Helper()
	switch {
	case want && err != nil:
		t.Errorf("%s: %v, want it created", what, err)
	case !want && err == nil:
		t.Errorf("%s was created", what)
	case !want && !apierrors.IsNotFound(err):
		t.Errorf("%s: %v, want NotFound", what, err)
	}
}

// checkAggregated: the aggregated ClusterRole view holds the rules of the
// roles it selects when the clusterrole-aggregation controller runs, and
// none without it (as kube-apiserver leaves it). The controller works
// shortly after start: wait for it.
func checkAggregated(t *testing.T, client kubernetes.Interface, want bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		view, err := client.RbacV1().ClusterRoles().Get(context.Background(), "view", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := len(view.Rules) > 0
		if got == want {
			return
		}
		if got || time.Now().After(deadline) {
			t.Errorf("ClusterRole view has %d rules, want rules: %v", len(view.Rules), want)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitGone(t *testing.T, client kubernetes.Interface, ns string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s is still there", ns)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestControllersUnknownRefused: a name no controller has stops the
// command before it starts, naming every unknown name.
func TestControllersUnknownRefused(t *testing.T) {
	t.Parallel()
	cmd := app.NewCommand()
	cmd.SetArgs([]string{"--controllers=*,-namespace,replicaset,-nosuch", "--data-dir=" + t.TempDir()})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	if err == nil {
		t.Fatal("unknown controllers were accepted")
	}
	for _, want := range []string{"--controllers", `"replicaset"`, `"nosuch"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), `"namespace"`) {
		t.Errorf("error %q names a known controller", err)
	}
}
