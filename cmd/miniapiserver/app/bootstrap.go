package app

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/scheduling"
)

// systemNamespaces exist in every cluster; kube-apiserver creates them at
// start, and so does this server.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

func ensureSystemNamespaces(ctx context.Context, core rest.APIGroupInfo) error {
	storage := core.VersionedResourcesStorageMap["v1"]["namespaces"]
	// Created as kube-apiserver creates them, by its own client.
	creater := fieldmanager.TrackingCreater(storage.(rest.Creater), corev1.SchemeGroupVersion.WithKind("Namespace"), "kube-apiserver")
	getter, _ := storage.(rest.Getter)
	ctx = request.WithNamespace(ctx, "")
	for _, name := range systemNamespaces {
		// Kept from an earlier start: a restart then builds no field
		// manager before its first write.
		if getter != nil {
			if _, err := getter.Get(ctx, name, &metav1.GetOptions{}); err == nil {
				continue
			}
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := creater.Create(ctx, ns, nil, &metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}

// ensureSystemPriorityClasses creates kube's system priority classes
// that are missing, as kube-apiserver's post-start hook does on every
// start (a class deleted with its collection comes back).
func ensureSystemPriorityClasses(ctx context.Context, groups []rest.APIGroupInfo) error {
	storage := groupStorage(groups, schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"))
	if storage == nil {
		return nil
	}
	creater := fieldmanager.TrackingCreater(storage.(rest.Creater), schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"), "kube-apiserver")
	getter := storage.(rest.Getter)
	ctx = request.WithNamespace(ctx, "")
	for _, pc := range scheduling.SystemPriorityClasses() {
		if _, err := getter.Get(ctx, pc.Name, &metav1.GetOptions{}); err == nil {
			continue
		}
		if _, err := creater.Create(ctx, pc, nil, &metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating priority class %s: %w", pc.Name, err)
		}
	}
	return nil
}

// groupStorage returns the storage of a resource in a group version, nil
// when it is not served.
func groupStorage(groups []rest.APIGroupInfo, gvr schema.GroupVersionResource) rest.Storage {
	for _, g := range groups {
		if g.GroupName == gvr.Group {
			return g.VersionedResourcesStorageMap[gvr.Version][gvr.Resource]
		}
	}
	return nil
}

// ensureKubernetesService creates default/kubernetes, as kube-apiserver
// does at start. A failure (its address taken by a user's service) is
// logged: the server still serves, as kube's does.
func ensureKubernetesService(ctx context.Context, o *Options, coreGroup rest.APIGroupInfo, securePort int) {
	serviceRange, _ := o.serviceClusterIPRange() // validated already
	services := coreGroup.VersionedResourcesStorageMap["v1"]["services"].(rest.Creater)
	if err := core.EnsureKubernetesService(ctx, services, serviceRange, securePort); err != nil {
		slog.Warn("creating the kubernetes service", "err", err)
	}
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
