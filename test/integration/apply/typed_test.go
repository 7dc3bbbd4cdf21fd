package apply

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv1ac "k8s.io/client-go/applyconfigurations/autoscaling/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

// webDeployment is the apply configuration alice owns.
func webDeployment(ns string, replicas int32) *appsv1ac.DeploymentApplyConfiguration {
	return appsv1ac.Deployment("web", ns).
		WithLabels(map[string]string{"app": "web"}).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(replicas).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(map[string]string{"app": "web"}).
				WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("nginx").WithImage("nginx:1.25")))))
}

// entry returns the managed fields entry of manager (and subresource).
func entry(t *testing.T, m metav1.Object, manager, subresource string) metav1.ManagedFieldsEntry {
	t.Helper()
	for _, e := range m.GetManagedFields() {
		if e.Manager == manager && e.Subresource == subresource {
			return e
		}
	}
	t.Fatalf("no managed fields entry of %q (subresource %q) in %+v", manager, subresource, m.GetManagedFields())
	return metav1.ManagedFieldsEntry{}
}

// wantFields compares an entry's fields with want (JSON).
func wantFields(t *testing.T, e metav1.ManagedFieldsEntry, want string) {
	t.Helper()
	var got, w any
	if e.FieldsV1 == nil {
		t.Fatalf("entry of %s has no fields", e.Manager)
	}
	if err := json.Unmarshal(e.FieldsV1.Raw, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("fields of %s: got %s, want %s", e.Manager, e.FieldsV1.Raw, want)
	}
}

// TestTypedApply applies deployments with client-go's apply
// configurations: create, no-op, conflict, force, status and scale,
// checking the managed fields as kube-apiserver records them.
func TestTypedApply(t *testing.T) {
	ns := newNamespace(t, "typed")
	deployments := clientset(t).AppsV1().Deployments(ns)
	alice := metav1.ApplyOptions{FieldManager: "alice"}

	created, err := deployments.Apply(ctx(t), webDeployment(ns, 2), alice)
	if err != nil {
		t.Fatalf("apply creating: %v", err)
	}
	if len(created.ManagedFields) != 1 {
		t.Fatalf("managed fields after create: %+v", created.ManagedFields)
	}
	e := created.ManagedFields[0]
	if e.Manager != "alice" || e.Operation != metav1.ManagedFieldsOperationApply || e.APIVersion != "apps/v1" ||
		e.FieldsType != "FieldsV1" || e.Time == nil || e.Subresource != "" {
		t.Errorf("entry: %+v", e)
	}
	// Only what alice applied: not the defaults (strategy, revision
	// history limit...), which the server set.
	wantFields(t, e, `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},`+
		`"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`)
	if created.Spec.RevisionHistoryLimit == nil || *created.Spec.RevisionHistoryLimit != 10 {
		t.Errorf("defaults not applied: revisionHistoryLimit %v", created.Spec.RevisionHistoryLimit)
	}
	// What alice owns extracts back to what she applied.
	extracted, err := appsv1ac.ExtractDeployment(created, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if want := webDeployment(ns, 2); !reflect.DeepEqual(extracted.Spec, want.Spec) || !reflect.DeepEqual(extracted.Labels, want.Labels) {
		t.Errorf("extracted %s, want %s", reference.MustJSON(t, extracted), reference.MustJSON(t, want))
	}

	t.Run("same configuration is a no-op", func(t *testing.T) {
		again, err := deployments.Apply(ctx(t), webDeployment(ns, 2), alice)
		if err != nil {
			t.Fatal(err)
		}
		if again.ResourceVersion != created.ResourceVersion || !again.ManagedFields[0].Time.Equal(created.ManagedFields[0].Time) {
			t.Errorf("resourceVersion %s -> %s, time %v -> %v", created.ResourceVersion, again.ResourceVersion,
				created.ManagedFields[0].Time, again.ManagedFields[0].Time)
		}
	})

	t.Run("conflict", func(t *testing.T) {
		_, err := deployments.Apply(ctx(t), webDeployment(ns, 5), metav1.ApplyOptions{FieldManager: "bob"})
		if !apierrors.IsConflict(err) {
			t.Fatalf("want a conflict, got %v", err)
		}
		if want := `Apply failed with 1 conflict: conflict with "alice": .spec.replicas`; err.Error() != want {
			t.Errorf("message %q, want %q", err.Error(), want)
		}
		status := err.(apierrors.APIStatus).Status()
		want := []metav1.StatusCause{{Type: "FieldManagerConflict", Message: `conflict with "alice"`, Field: ".spec.replicas"}}
		if status.Details == nil || !reflect.DeepEqual(status.Details.Causes, want) {
			t.Errorf("details %+v, want causes %+v", status.Details, want)
		}
	})

	t.Run("force", func(t *testing.T) {
		bob := appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(5))
		forced, err := deployments.Apply(ctx(t), bob, metav1.ApplyOptions{FieldManager: "bob", Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if *forced.Spec.Replicas != 5 {
			t.Errorf("replicas %d", *forced.Spec.Replicas)
		}
		wantFields(t, entry(t, forced, "bob", ""), `{"f:spec":{"f:replicas":{}}}`)
		wantFields(t, entry(t, forced, "alice", ""), `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:selector":{},`+
			`"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`)
	})

	t.Run("status", func(t *testing.T) {
		// The spec in a status apply is not the status manager's: the
		// status strategy resets it.
		cfg := appsv1ac.Deployment("web", ns).
			WithSpec(appsv1ac.DeploymentSpec().WithReplicas(9)).
			WithStatus(appsv1ac.DeploymentStatus().WithReplicas(1).WithObservedGeneration(1))
		got, err := deployments.ApplyStatus(ctx(t), cfg, metav1.ApplyOptions{FieldManager: "controller", Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Replicas != 1 || *got.Spec.Replicas != 5 {
			t.Errorf("status.replicas %d, spec.replicas %d", got.Status.Replicas, *got.Spec.Replicas)
		}
		e := entry(t, got, "controller", "status")
		if e.Operation != metav1.ManagedFieldsOperationApply {
			t.Errorf("operation %s", e.Operation)
		}
		wantFields(t, e, `{"f:status":{"f:observedGeneration":{},"f:replicas":{}}}`)
	})

	t.Run("scale", func(t *testing.T) {
		scale := autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(7))
		_, err := deployments.ApplyScale(ctx(t), "web", scale, metav1.ApplyOptions{FieldManager: "hpa"})
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "bob": .spec.replicas`) {
			t.Fatalf("want bob's conflict on replicas, got %v", err)
		}
		got, err := deployments.ApplyScale(ctx(t), "web", scale, metav1.ApplyOptions{FieldManager: "hpa", Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Replicas != 7 || got.ManagedFields != nil {
			t.Errorf("scale %+v", got)
		}
		d, err := deployments.Get(ctx(t), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The scale's manager owns the deployment's spec.replicas, in the
		// deployment's version; as in kube, a new scale manager's entry
		// has no time.
		e := entry(t, d, "hpa", "scale")
		if e.APIVersion != "apps/v1" || e.Operation != metav1.ManagedFieldsOperationApply || e.Time != nil {
			t.Errorf("scale entry %+v", e)
		}
		wantFields(t, e, `{"f:spec":{"f:replicas":{}}}`)
		for _, e := range d.ManagedFields {
			if e.Manager == "bob" {
				t.Errorf("bob still owns something: %s", e.FieldsV1.Raw)
			}
		}
	})
}

// TestTypedUpdatesTrackManagers checks the Update entries of typed
// create, update and patch: the fieldManager option, else the start of
// client-go's User-Agent (the test binary's name).
func TestTypedUpdatesTrackManagers(t *testing.T) {
	ns := newNamespace(t, "typed-update")
	cms := clientset(t).CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"a": "1"}},
		metav1.CreateOptions{FieldManager: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	wantFields(t, entry(t, cm, "creator", ""), `{"f:data":{".":{},"f:a":{}}}`)
	if e := entry(t, cm, "creator", ""); e.Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("operation %s", e.Operation)
	}

	cm.Data["b"] = "2"
	cm, err = cms.Update(ctx(t), cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agent, _, _ := strings.Cut(rest.DefaultKubernetesUserAgent(), "/")
	wantFields(t, entry(t, cm, agent, ""), `{"f:data":{"f:b":{}}}`)

	cm, err = cms.Patch(ctx(t), "cm", "application/merge-patch+json", []byte(`{"data":{"a":"3"}}`), metav1.PatchOptions{FieldManager: "patcher"})
	if err != nil {
		t.Fatal(err)
	}
	// The patcher took a from the creator, who keeps the map it made.
	wantFields(t, entry(t, cm, "patcher", ""), `{"f:data":{"f:a":{}}}`)
	wantFields(t, entry(t, cm, "creator", ""), `{"f:data":{}}`)

	t.Run("deployment create owns the defaults", func(t *testing.T) {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "d"},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
				},
			},
		}
		got, err := clientset(t).AppsV1().Deployments(ns).Create(ctx(t), d, metav1.CreateOptions{FieldManager: "kubectl-create"})
		if err != nil {
			t.Fatal(err)
		}
		// As kube (which defaults while decoding): the creator owns what
		// defaulting set.
		wantFields(t, entry(t, got, "kubectl-create", ""), `{"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},`+
			`"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},`+
			`"f:template":{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},`+
			`"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},`+
			`"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}`)
	})
}

// TestConcurrentApplies has managers apply their own label to one object
// at once: the field manager merges each into the current object inside
// the update's retry loop, so none is lost and none conflicts.
func TestConcurrentApplies(t *testing.T) {
	ns := newNamespace(t, "concurrent")
	cms := clientset(t).CoreV1().ConfigMaps(ns)
	if _, err := cms.Apply(ctx(t), corev1ac.ConfigMap("shared", ns), metav1.ApplyOptions{FieldManager: "creator"}); err != nil {
		t.Fatal(err)
	}
	const managers = 8
	errs := make(chan error, managers)
	for i := range managers {
		go func() {
			name := "m" + strconv.Itoa(i)
			cfg := corev1ac.ConfigMap("shared", ns).WithLabels(map[string]string{name: "v"})
			_, err := cms.Apply(ctx(t), cfg, metav1.ApplyOptions{FieldManager: name})
			errs <- err
		}()
	}
	for range managers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	got, err := cms.Get(ctx(t), "shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range managers {
		name := "m" + strconv.Itoa(i)
		if got.Labels[name] != "v" {
			t.Errorf("label %s lost: %v", name, got.Labels)
		}
		wantFields(t, entry(t, got, name, ""), `{"f:metadata":{"f:labels":{"f:`+name+`":{}}}}`)
	}
}
