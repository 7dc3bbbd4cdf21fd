// Package envtest runs controller-runtime's envtest, unchanged, with
// miniapiserver as its kube-apiserver and etcd (KUBEBUILDER_ASSETS from
// `miniapiserver envtest-assets`): CRDs installed from a directory,
// webhooks from WebhookInstallOptions served by the manager, a manager
// whose reconciler writes status and owned objects, users added with
// AddUser and held to RBAC, and an environment stopped and started again.
// It is what an operator's test suite does; if it passes here, such a
// suite runs on miniapiserver.
//
// It is a Go module of its own, as test/e2e is, so that the main module
// never requires controller-runtime. The server is the binary built from
// ../../cmd/miniapiserver (or $MINIAPISERVER), run as envtest runs it:
//
//	hack/envtest.sh
package envtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// The shared environment of the tests but TestRestart: started once in
// TestMain with the manager running.
var (
	env *envtest.Environment
	cfg *rest.Config
	// server is the miniapiserver binary the assets come from.
	server string
	admin  client.Client
	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	log.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	work, err := os.MkdirTemp("", "envtest-assets-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)
	assets, err := buildAssets(work)
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the envtest assets:", err)
		return 1
	}
	os.Setenv("KUBEBUILDER_ASSETS", assets)

	env = newEnvironment()
	env.WebhookInstallOptions = webhookInstallOptions()
	// Opt in to the server's garbage collector (off by default, as
	// kube-apiserver has none): owned objects go with their owners. "*"
	// keeps the namespace controller, the one on by default as
	// kube-apiserver.
	env.ControlPlane.GetAPIServer().Configure().Append("controllers", "*", "garbagecollector")
	start := time.Now()
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "envtest: started in %v\n", time.Since(start).Round(time.Millisecond))
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}()
	if admin, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped, err := startManager(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the manager:", err)
		return 1
	}
	code := m.Run()
	cancel()
	<-stopped
	return code
}

// zapLevel is the log level of controller-runtime: errors only, unless
// ENVTEST_VERBOSE is set.
func zapLevel() zapcore.Level {
	if os.Getenv("ENVTEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// buildAssets builds miniapiserver (or takes $MINIAPISERVER) and has it
// write envtest's asset directory, as an operator author would.
func buildAssets(work string) (string, error) {
	bin := os.Getenv("MINIAPISERVER")
	defer func() { server = bin }()
	if bin == "" {
		bin = filepath.Join(work, "miniapiserver")
		build := exec.Command("go", "build", "-o", bin, "./cmd/miniapiserver")
		build.Dir = filepath.Join("..", "..")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return "", err
		}
	}
	assets := filepath.Join(work, "bin")
	out, err := exec.Command(bin, "envtest-assets", assets).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return assets, nil
}

// newEnvironment is the envtest environment of an operator's suite: its
// CRDs from a directory.
func newEnvironment() *envtest.Environment {
	return &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("testdata", "crds")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
}

// startManager runs a manager with the widget reconciler and webhooks
// until ctx ends; the returned channel closes when it has stopped.
func startManager(ctx context.Context) (<-chan struct{}, error) {
	o := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir,
		}),
	})
	if err != nil {
		return nil, err
	}
	if err := setupWidgetController(mgr); err != nil {
		return nil, err
	}
	registerWidgetWebhooks(mgr.GetWebhookServer())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	// Webhooks are called by the server as soon as they are installed:
	// wait for the manager to serve them.
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(waitCtx) {
		return nil, fmt.Errorf("the manager's cache did not sync")
	}
	for mgr.GetWebhookServer().StartedChecker()(nil) != nil {
		select {
		case <-waitCtx.Done():
			return nil, fmt.Errorf("the webhook server did not start")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return stopped, nil
}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "envtest-"}}
	if err := admin.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}
