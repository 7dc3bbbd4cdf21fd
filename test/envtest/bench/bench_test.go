// Package bench measures envtest on a pair of kube-apiserver and etcd
// binaries, to compare miniapiserver's with the real ones (BENCHMARKS.md,
// "envtest and controller-runtime's suites"):
// Start+Stop of the environment (wall and CPU), a suite's 20 of them, a
// CRD from create to Established and
// served, installing 100 CRDs, and the throughput of creating, listing
// and watching custom resources against the same for ConfigMaps.
//
//	ENVTEST_BENCH_ASSETS=/path/to/dir go test -run '^$' -bench . -benchtime 5x ./bench
//
// The directory holds kube-apiserver and etcd (`miniapiserver
// envtest-assets DIR`, or the real ones). Without it the benchmarks skip.
package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func newEnv(b *testing.B) *envtest.Environment {
	dir := os.Getenv("ENVTEST_BENCH_ASSETS")
	if dir == "" {
		b.Skip("set ENVTEST_BENCH_ASSETS to a directory with kube-apiserver and etcd")
	}
	return &envtest.Environment{BinaryAssetsDirectory: dir}
}

func start(b *testing.B) (*envtest.Environment, *rest.Config) {
	b.Helper()
	e := newEnv(b)
	cfg, err := e.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := e.Stop(); err != nil {
			b.Error(err)
		}
	})
	return e, cfg
}

// BenchmarkStartStop: envtest's Start (etcd, kube-apiserver, healthy,
// the default namespace there) and Stop, with the CPU the binaries took
// (envtest's --help runs included): on a loaded CI machine, CPU says more
// than the clock.
func BenchmarkStartStop(b *testing.B) {
	e := newEnv(b)
	var started, stopped time.Duration
	cpu := childrenCPU(b)
	for b.Loop() {
		t := time.Now()
		if _, err := e.Start(); err != nil {
			b.Fatal(err)
		}
		started += time.Since(t)
		t = time.Now()
		if err := e.Stop(); err != nil {
			b.Fatal(err)
		}
		stopped += time.Since(t)
	}
	b.ReportMetric(float64(started.Milliseconds())/float64(b.N), "start-ms/op")
	b.ReportMetric(float64(stopped.Milliseconds())/float64(b.N), "stop-ms/op")
	b.ReportMetric(float64((childrenCPU(b)-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// BenchmarkSuite20: what a suite of 20 packages pays for its control
// planes, one after the other: 20 Start/Stop cycles an op.
func BenchmarkSuite20(b *testing.B) {
	e := newEnv(b)
	cpu := childrenCPU(b)
	for b.Loop() {
		for range 20 {
			if _, err := e.Start(); err != nil {
				b.Fatal(err)
			}
			if err := e.Stop(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64((childrenCPU(b)-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// childrenCPU is the user and system CPU of the process's children that
// have exited and been waited for: envtest's binaries once stopped.
func childrenCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// crd is a namespaced CRD of group g, one version with a small schema.
func crd(group, plural, kind string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ListKind: kind + "List", Singular: strings.ToLower(kind)},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"size": {Type: "integer"}, "color": {Type: "string"},
						}},
					},
				}},
			}},
		},
	}
}

// BenchmarkCRDEstablished: a CRD from create until Established and its
// custom resources listed.
func BenchmarkCRDEstablished(b *testing.B) {
	_, cfg := start(b)
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(cl.Scheme()); err != nil {
		b.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx := context.Background()
	var established, served time.Duration
	i := 0
	for b.Loop() {
		i++
		group := fmt.Sprintf("g%d.bench.io", i)
		t := time.Now()
		if err := cl.Create(ctx, crd(group, "things", "Thing")); err != nil {
			b.Fatal(err)
		}
		for {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := cl.Get(ctx, client.ObjectKey{Name: "things." + group}, got); err != nil {
				b.Fatal(err)
			}
			if isEstablished(got) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		established += time.Since(t)
		things := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "things"}).Namespace("default")
		for {
			_, err := things.List(ctx, metav1.ListOptions{})
			if err == nil {
				break
			}
			if time.Since(t) > time.Minute {
				b.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		served += time.Since(t)
	}
	b.ReportMetric(float64(established.Microseconds())/1000/float64(b.N), "established-ms/op")
	b.ReportMetric(float64(served.Microseconds())/1000/float64(b.N), "served-ms/op")
}

func isEstablished(c *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// BenchmarkInstall100CRDs: envtest's InstallCRDs of 100 CRDs, which
// waits until discovery serves them all.
func BenchmarkInstall100CRDs(b *testing.B) {
	_, cfg := start(b)
	round := 0
	for b.Loop() {
		round++
		var crds []*apiextensionsv1.CustomResourceDefinition
		for i := range 100 {
			crds = append(crds, crd(fmt.Sprintf("r%d.g%d.bench.io", round, i), "things", "Thing"))
		}
		if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: crds}); err != nil {
			b.Fatal(err)
		}
	}
}

// objects is how many objects each throughput round creates, lists and
// watches; workers create them in parallel.
const (
	objects = 500
	workers = 8
)

// BenchmarkThroughput: create, list and watch objects custom resources
// and ConfigMaps, in a namespace of their own per round.
func BenchmarkThroughput(b *testing.B) {
	_, cfg := start(b)
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(cl.Scheme()); err != nil {
		b.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd("bench.io", "widgets", "Widget")}}); err != nil {
		b.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	kinds := []struct {
		name string
		gvr  schema.GroupVersionResource
		obj  func(name string) *unstructured.Unstructured
	}{
		{"configmaps", corev1.SchemeGroupVersion.WithResource("configmaps"), func(name string) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": map[string]any{"size": "3", "color": "green"},
			}}
		}},
		{"customresources", schema.GroupVersionResource{Group: "bench.io", Version: "v1", Resource: "widgets"}, func(name string) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "bench.io/v1", "kind": "Widget", "metadata": map[string]any{"name": name}, "spec": map[string]any{"size": int64(3), "color": "green"},
			}}
		}},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			var create, list, watchAll time.Duration
			round := 0
			for b.Loop() {
				round++
				ctx := context.Background()
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", k.name, round)}}
				if err := cl.Create(ctx, ns); err != nil {
					b.Fatal(err)
				}
				res := dyn.Resource(k.gvr).Namespace(ns.Name)
				before, err := res.List(ctx, metav1.ListOptions{})
				if err != nil {
					b.Fatal(err)
				}
				t := time.Now()
				createAll(b, objects, func(i int) error {
					_, err := res.Create(ctx, k.obj(fmt.Sprintf("o%d", i)), metav1.CreateOptions{})
					return err
				})
				create += time.Since(t)

				t = time.Now()
				got, err := res.List(ctx, metav1.ListOptions{})
				// ConfigMaps: kube-root-ca.crt too.
				if err != nil || len(got.Items) < objects {
					b.Fatalf("list: %v, %d items", err, len(got.Items))
				}
				list += time.Since(t)

				// The events of every create, from before the first.
				t = time.Now()
				w, err := res.Watch(ctx, metav1.ListOptions{ResourceVersion: before.GetResourceVersion(), TimeoutSeconds: ptr.To[int64](60)})
				if err != nil {
					b.Fatal(err)
				}
				for n := 0; n < objects; {
					ev, ok := <-w.ResultChan()
					if !ok || ev.Type == watch.Error {
						b.Fatalf("watch ended after %d events: %v", n, ev.Object)
					}
					if m, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Added && strings.HasPrefix(m.GetName(), "o") {
						n++
					}
				}
				w.Stop()
				watchAll += time.Since(t)
			}
			per := float64(b.N * objects)
			b.ReportMetric(per/create.Seconds(), "creates/s")
			b.ReportMetric(per/list.Seconds(), "listed/s")
			b.ReportMetric(per/watchAll.Seconds(), "watched/s")
		})
	}
}

// createAll runs create for 0..n-1 on workers goroutines.
func createAll(b *testing.B, n int, create func(i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := create(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range n {
		select {
		case next <- i:
		case err := <-errs:
			close(next)
			wg.Wait()
			b.Fatal(err)
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}
