package clientgo

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	coordinationv1ac "k8s.io/client-go/applyconfigurations/coordination/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// TestApplyConfigurations applies Services, StatefulSets and Leases with
// client-go's apply configurations (test/integration/apply covers
// Deployments and ConfigMaps): two managers sharing a list by its merge
// keys, a manager dropping its item, Extract, a status apply, dry run.
func TestApplyConfigurations(t *testing.T) {
	ns := namespace(t)
	cs := clientset(t)

	t.Run("service ports by merge key", func(t *testing.T) {
		services := cs.CoreV1().Services(ns)
		web := corev1ac.Service("web", ns).WithSpec(corev1ac.ServiceSpec().
			WithSelector(map[string]string{"app": "web"}).
			WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80).WithProtocol(corev1.ProtocolTCP)))
		if _, err := services.Apply(ctx(t), web, metav1.ApplyOptions{FieldManager: "web-team"}); err != nil {
			t.Fatal(err)
		}
		metrics := corev1ac.Service("web", ns).WithSpec(corev1ac.ServiceSpec().
			WithPorts(corev1ac.ServicePort().WithName("metrics").WithPort(9090).WithProtocol(corev1.ProtocolTCP)))
		svc, err := services.Apply(ctx(t), metrics, metav1.ApplyOptions{FieldManager: "monitoring"})
		if err != nil {
			t.Fatal(err)
		}
		if len(svc.Spec.Ports) != 2 || svc.Spec.Selector["app"] != "web" || svc.Spec.ClusterIP == "" {
			t.Fatalf("after two managers: %+v", svc.Spec)
		}
		extracted, err := corev1ac.ExtractService(svc, "monitoring")
		if err != nil {
			t.Fatal(err)
		}
		if ports := extracted.Spec.Ports; len(ports) != 1 || *ports[0].Name != "metrics" || extracted.Spec.Selector != nil {
			t.Errorf("monitoring's extracted configuration: %+v", extracted.Spec)
		}
		// The monitoring team stops managing its port: it goes.
		svc, err = services.Apply(ctx(t), corev1ac.Service("web", ns), metav1.ApplyOptions{FieldManager: "monitoring"})
		if err != nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "http" {
			t.Fatalf("after monitoring dropped its port: %v %+v", err, svc.Spec.Ports)
		}
		// Status belongs to another manager, through the subresource.
		status := corev1ac.Service("web", ns).WithStatus(corev1ac.ServiceStatus().
			WithConditions(metav1ac.Condition().WithType("Ready").WithStatus(metav1.ConditionTrue).WithReason("Tested").WithMessage("ok").WithLastTransitionTime(metav1.Now())))
		svc, err = services.ApplyStatus(ctx(t), status, metav1.ApplyOptions{FieldManager: "controller"})
		if err != nil || len(svc.Status.Conditions) != 1 || len(svc.Spec.Ports) != 1 {
			t.Fatalf("status apply: %v %+v", err, svc.Status)
		}
		var managers []string
		for _, e := range svc.ManagedFields {
			managers = append(managers, e.Manager+"/"+string(e.Operation)+"/"+e.Subresource)
		}
		slices.Sort(managers)
		if want := []string{"controller/Apply/status", "web-team/Apply/"}; !slices.Equal(managers, want) {
			t.Errorf("managers %v, want %v", managers, want)
		}
	})

	t.Run("statefulset", func(t *testing.T) {
		sts := appsv1ac.StatefulSet("db", ns).WithSpec(appsv1ac.StatefulSetSpec().
			WithReplicas(1).WithServiceName("db").
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "db"})).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "db"}).
				WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("db").WithImage("postgres:16")))))
		statefulsets := cs.AppsV1().StatefulSets(ns)
		dry, err := statefulsets.Apply(ctx(t), sts, metav1.ApplyOptions{FieldManager: "deployer", DryRun: []string{metav1.DryRunAll}})
		if err != nil || dry.UID == "" || dry.Spec.PodManagementPolicy != "OrderedReady" {
			t.Fatalf("dry run: %v %+v", err, dry)
		}
		if _, err := statefulsets.Get(ctx(t), "db", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("the dry run stored it: %v", err)
		}
		created, err := statefulsets.Apply(ctx(t), sts, metav1.ApplyOptions{FieldManager: "deployer"})
		if err != nil || created.Generation != 1 {
			t.Fatalf("apply: %v %+v", err, created)
		}
		sts.Spec.Template.Spec.Containers[0].WithImage("postgres:17")
		changed, err := statefulsets.Apply(ctx(t), sts, metav1.ApplyOptions{FieldManager: "deployer"})
		if err != nil || changed.Generation != 2 || changed.Spec.Template.Spec.Containers[0].Image != "postgres:17" {
			t.Fatalf("change: %v %+v", err, changed)
		}
		// An immutable field is refused as on an update.
		sts.Spec.WithServiceName("other")
		if _, err := statefulsets.Apply(ctx(t), sts, metav1.ApplyOptions{FieldManager: "deployer"}); !apierrors.IsInvalid(err) {
			t.Errorf("changing serviceName: %v", err)
		}
	})

	t.Run("lease", func(t *testing.T) {
		leases := cs.CoordinationV1().Leases(ns)
		lease := coordinationv1ac.Lease("lock", ns).WithSpec(coordinationv1ac.LeaseSpec().WithHolderIdentity("a").WithLeaseDurationSeconds(10))
		if _, err := leases.Apply(ctx(t), lease, metav1.ApplyOptions{FieldManager: "a"}); err != nil {
			t.Fatal(err)
		}
		steal := coordinationv1ac.Lease("lock", ns).WithSpec(coordinationv1ac.LeaseSpec().WithHolderIdentity("b"))
		if _, err := leases.Apply(ctx(t), steal, metav1.ApplyOptions{FieldManager: "b"}); !apierrors.IsConflict(err) {
			t.Fatalf("b took a's holder without force: %v", err)
		}
		got, err := leases.Apply(ctx(t), steal, metav1.ApplyOptions{FieldManager: "b", Force: true})
		if err != nil || *got.Spec.HolderIdentity != "b" || *got.Spec.LeaseDurationSeconds != 10 {
			t.Fatalf("forced: %v %+v", err, got)
		}
	})
}
