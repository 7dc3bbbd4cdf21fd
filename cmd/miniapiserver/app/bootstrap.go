package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/defaultservicecidr"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/legacytokentracking"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/networking"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/scheduling"
)

// systemNamespaces exist in every cluster; kube-apiserver creates them at
// start, and so does this server.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

func ensureSystemNamespaces(ctx context.Context, namespaces *core.NamespaceREST) error {
	// Created as kube-apiserver creates them, by its own client.
	creater := fieldmanager.TrackingCreater(namespaces, corev1.SchemeGroupVersion.WithKind("Namespace"), "kube-apiserver")
	ctx = request.WithNamespace(ctx, "")
	return concurrently(systemNamespaces, func(name string) error {
		// Kept from an earlier start: a restart then builds no field
		// manager before its first write.
		if _, err := namespaces.Get(ctx, name, &metav1.GetOptions{}); err == nil {
			return nil
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := creater.Create(ctx, ns, nil, &metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
		return nil
	})
}

// ensureSystemPriorityClasses creates kube's system priority classes
// that are missing, as kube-apiserver's post-start hook does on every
// start (a class deleted with its collection comes back).
func ensureSystemPriorityClasses(ctx context.Context, classes *generic.Store) error {
	creater := fieldmanager.TrackingCreater(classes, schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"), "kube-apiserver")
	ctx = request.WithNamespace(ctx, "")
	return concurrently(scheduling.SystemPriorityClasses(), func(pc *schedulingv1.PriorityClass) error {
		if _, err := classes.Get(ctx, pc.Name, &metav1.GetOptions{}); err == nil {
			return nil
		}
		if _, err := creater.Create(ctx, pc, nil, &metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating priority class %s: %w", pc.Name, err)
		}
		return nil
	})
}

// writeBootstrapObjects writes what kube-apiserver writes at start besides
// the RBAC policy and the flow control configuration: the system
// namespaces and priority classes, kube-system's
// extension-apiserver-authentication and
// kube-apiserver-legacy-service-account-token-tracking, the default
// ServiceCIDR and default/kubernetes. Their writes do not depend on each
// other but for the last two, which wait for the namespaces (their
// namespace) and the ServiceCIDR (the Service's address is allocated from
// it): they are made concurrently, so that a start waits for a few rounds
// of writes to etcd rather than for one per object. It returns the loops
// of the controllers that keep the default ServiceCIDR and the legacy
// token tracking ConfigMap (run them).
func writeBootstrapObjects(ctx context.Context, o *Options, st *stores, extensionAuth map[string]string, securePort int) ([]func(context.Context), error) {
	var serviceCIDRs *defaultservicecidr.Controller
	err := all(
		func() error { return ensureSystemNamespaces(ctx, st.core.Namespaces) },
		func() error { return ensureSystemPriorityClasses(ctx, st.scheduling.PriorityClasses) },
		func() (err error) {
			serviceCIDRs, err = defaultServiceCIDR(ctx, o, st.networking)
			return err
		},
	)
	if err != nil {
		return nil, err
	}
	legacyTokens := legacytokentracking.New(st.core.ConfigMaps)
	err = all(
		func() error {
			if err := ensureExtensionAuthConfigMap(ctx, st.core.ConfigMaps, extensionAuth); err != nil {
				return fmt.Errorf("writing kube-system/%s: %w", extensionAuthConfigMap, err)
			}
			return nil
		},
		func() error {
			ensureKubernetesService(ctx, o, st.core.Services, securePort)
			return nil
		},
		func() error {
			// The controller's first sync, before the server is ready, as
			// the other objects' (kube's controller makes it just after).
			if _, err := legacyTokens.Sync(ctx); err != nil {
				return fmt.Errorf("writing kube-system/%s: %w", legacytokentracking.Name, err)
			}
			return nil
		},
	)
	return []func(context.Context){serviceCIDRs.Run, legacyTokens.Run}, err
}

// all calls every f at once, waits for all, and joins their errors.
func all(fs ...func() error) error {
	return concurrently(fs, func(f func() error) error { return f() })
}

// concurrently calls f on every item at once, waits for all, and joins
// their errors.
func concurrently[T any](items []T, f func(T) error) error {
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, item := range items {
		wg.Go(func() { errs[i] = f(item) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ensureKubernetesService creates default/kubernetes, as kube-apiserver
// does at start. A failure (its address taken by a user's service) is
// logged: the server still serves, as kube's does.
func ensureKubernetesService(ctx context.Context, o *Options, services rest.Creater, securePort int) {
	// Single-stack, of the primary family, as kube's.
	serviceRanges, _ := o.serviceClusterIPRanges() // validated already
	if err := core.EnsureKubernetesService(ctx, services, serviceRanges[0], securePort); err != nil {
		slog.Warn("creating the kubernetes service", "err", err)
	}
}

// defaultServiceCIDR creates the default ServiceCIDR, "kubernetes", from
// --service-cluster-ip-range, as kube-apiserver does at start, and returns
// the controller that keeps it (Run it).
func defaultServiceCIDR(ctx context.Context, o *Options, storage networking.GroupStorage) (*defaultservicecidr.Controller, error) {
	serviceRanges, _ := o.serviceClusterIPRanges() // validated already
	c := defaultservicecidr.New(storage.ServiceCIDRs, storage.ServiceCIDRStatus, serviceRanges...)
	if err := c.Sync(ctx); err != nil {
		return nil, fmt.Errorf("creating the default ServiceCIDR: %w", err)
	}
	return c, nil
}

// Set by the linker: -X github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app.gitVersion=...
var (
	gitVersion = "v1.37.2-miniapiserver"
	gitCommit  = ""
	buildDate  = ""
)

// Version is what /version serves: the Kubernetes API version served
// (1.37), with this build in gitVersion.
func Version() version.Info {
	return version.Info{
		Major: "1", Minor: "37",
		EmulationMajor: "1", EmulationMinor: "37",
		MinCompatibilityMajor: "1", MinCompatibilityMinor: "36",
		GitVersion: gitVersion, GitCommit: gitCommit, GitTreeState: "clean", BuildDate: buildDate,
		GoVersion: goVersion(), Compiler: compiler(), Platform: platform(),
	}
}

// extensionAuthConfigMap is where kube-apiserver publishes how it
// authenticates clients, for servers that delegate authentication to it
// (kube-controller-manager, kube-scheduler, aggregated servers).
const extensionAuthConfigMap = "extension-apiserver-authentication"

// ensureExtensionAuthConfigMap writes kube-system's
// extension-apiserver-authentication with data (the client CA bundle, the
// request headers trusted), as kube-apiserver does at start (again when
// it changed).
func ensureExtensionAuthConfigMap(ctx context.Context, configMaps *generic.Store, data map[string]string) error {
	// Replicas starting together race to write it (kube's hook retries
	// too): a conflict means another wrote in between; read it again.
	var err error
	for range 10 {
		if err = writeExtensionAuthConfigMap(ctx, configMaps, data); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

func writeExtensionAuthConfigMap(ctx context.Context, configMaps *generic.Store, data map[string]string) error {
	ctx = request.WithNamespace(ctx, metav1.NamespaceSystem)
	old, err := configMaps.Get(ctx, extensionAuthConfigMap, &metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		creater := fieldmanager.TrackingCreater(configMaps, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "kube-apiserver")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: extensionAuthConfigMap, Namespace: metav1.NamespaceSystem}, Data: data}
		_, err = creater.Create(ctx, cm, nil, &metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // another replica wrote it
		}
		return err
	case err != nil:
		return err
	case maps.Equal(old.(*corev1.ConfigMap).Data, data):
		return nil
	}
	cm := old.(*corev1.ConfigMap).DeepCopy()
	cm.Data = data
	_, _, err = configMaps.Update(ctx, extensionAuthConfigMap, &rest.DefaultUpdatedObjectInfo{Obj: cm}, nil, nil, false, &metav1.UpdateOptions{})
	return err
}
