package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// testDeployment: a Deployment's pods are created, scheduled and become
// Available; it scales up and down through its scale subresource (as
// `kubectl scale` does); a new template rolls out to a new ReplicaSet and
// the old one is scaled to zero.
func (c *cluster) testDeployment(t *testing.T) {
	ns := c.namespace(t, "deployment")
	deployments := c.client.AppsV1().Deployments(ns)
	c.createDeployment(t, ns, "web", 3)

	for _, replicas := range []int32{5, 2} {
		scale, err := deployments.GetScale(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading deployment web's scale: %v", err)
		}
		scale.Spec.Replicas = replicas
		if _, err := deployments.UpdateScale(t.Context(), "web", scale, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("scaling deployment web to %d: %v", replicas, err)
		}
		c.waitDeployment(t, ns, "web", replicas)
	}

	const newImage = "registry.k8s.io/pause:3.9"
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deployments.Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = newImage
		_, err = deployments.Update(t.Context(), d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating deployment web's image: %v", err)
	}
	pods := c.waitDeployment(t, ns, "web", 2)
	for _, p := range pods {
		if got := p.Spec.Containers[0].Image; got != newImage {
			t.Errorf("after the rollout, pod %s runs %s, want %s", p.Name, got, newImage)
		}
	}
	c.eventually(t, waitLong, "the old ReplicaSet scaled to 0 and the new one holding the 2 pods", ns, func() (string, bool, error) {
		sets, err := c.client.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return "", false, err
		}
		var seen []string
		newOK, oldOK := false, len(sets.Items) >= 2
		for _, rs := range sets.Items {
			seen = append(seen, fmt.Sprintf("%s image %s replicas %d/%d", rs.Name, rs.Spec.Template.Spec.Containers[0].Image, rs.Status.Replicas, *rs.Spec.Replicas))
			if rs.Spec.Template.Spec.Containers[0].Image == newImage {
				newOK = *rs.Spec.Replicas == 2 && rs.Status.ReadyReplicas == 2
			} else {
				oldOK = oldOK && *rs.Spec.Replicas == 0 && rs.Status.Replicas == 0
			}
		}
		return strings.Join(seen, "; "), newOK && oldOK, nil
	})
}

// jobSpec runs completions pods, two at a time.
func jobSpec(name string, completions int32) batchv1.JobSpec {
	template := podTemplate(name)
	template.Spec.RestartPolicy = corev1.RestartPolicyNever
	return batchv1.JobSpec{
		Completions: ptr.To(completions), Parallelism: ptr.To[int32](2), BackoffLimit: ptr.To[int32](2),
		Template: template,
	}
}

// testJob: a Job's pods run to completion and the Job is Complete.
func (c *cluster) testJob(t *testing.T) {
	ns := c.namespace(t, "job")
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "count"}, Spec: jobSpec("count", 3)}
	if _, err := c.client.BatchV1().Jobs(ns).Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating job: %v", err)
	}
	c.eventually(t, waitLong, "job count Complete with 3 pods succeeded", ns, func() (string, bool, error) {
		j, err := c.client.BatchV1().Jobs(ns).Get(t.Context(), "count", metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		complete := jobCondition(j, batchv1.JobComplete)
		return fmt.Sprintf("active %d succeeded %d failed %d, Complete=%s", j.Status.Active, j.Status.Succeeded, j.Status.Failed, complete),
			j.Status.Succeeded == 3 && complete == corev1.ConditionTrue, nil
	})
}

func jobCondition(j *batchv1.Job, kind batchv1.JobConditionType) corev1.ConditionStatus {
	for _, c := range j.Status.Conditions {
		if c.Type == kind {
			return c.Status
		}
	}
	return "(none)"
}

// testCronJob: a CronJob scheduled every minute creates a Job it owns
// (within the next minute) and records when.
func (c *cluster) testCronJob(t *testing.T) {
	ns := c.namespace(t, "cronjob")
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "tick"},
		Spec: batchv1.CronJobSpec{
			Schedule: "* * * * *", ConcurrencyPolicy: batchv1.ForbidConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: jobSpec("tick", 1)},
		},
	}
	cj, err := c.client.BatchV1().CronJobs(ns).Create(t.Context(), cj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating cronjob: %v", err)
	}
	c.eventually(t, waitLong+time.Minute, "cronjob tick to create a Job it owns and set lastScheduleTime", ns, func() (string, bool, error) {
		jobs, err := c.client.BatchV1().Jobs(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return "", false, err
		}
		owned := 0
		for _, j := range jobs.Items {
			if ref := metav1.GetControllerOf(&j); ref != nil && ref.UID == cj.UID {
				owned++
			}
		}
		got, err := c.client.BatchV1().CronJobs(ns).Get(t.Context(), "tick", metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		return fmt.Sprintf("%d jobs (%d owned), lastScheduleTime %v", len(jobs.Items), owned, got.Status.LastScheduleTime),
			owned > 0 && got.Status.LastScheduleTime != nil, nil
	})
}

// testBackgroundDeletion: deleting a Deployment in the background deletes
// it at once, and the garbage collector then deletes its ReplicaSets and
// their pods.
func (c *cluster) testBackgroundDeletion(t *testing.T) {
	ns := c.namespace(t, "background")
	c.createDeployment(t, ns, "bg", 2)
	err := c.client.AppsV1().Deployments(ns).Delete(t.Context(), "bg",
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if err != nil {
		t.Fatalf("deleting deployment bg: %v", err)
	}
	c.eventually(t, waitLong, "deployment bg, its ReplicaSet and its pods deleted", ns, func() (string, bool, error) {
		return c.leftOf(t, ns, "bg")
	})
}

// testForegroundDeletion: deleting a Deployment in the foreground keeps it
// (with the foregroundDeletion finalizer) until the garbage collector has
// deleted its ReplicaSets and their pods.
func (c *cluster) testForegroundDeletion(t *testing.T) {
	ns := c.namespace(t, "foreground")
	c.createDeployment(t, ns, "fg", 2)
	deployments := c.client.AppsV1().Deployments(ns)
	err := deployments.Delete(t.Context(), "fg", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
	if err != nil {
		t.Fatalf("deleting deployment fg: %v", err)
	}
	d, err := deployments.Get(t.Context(), "fg", metav1.GetOptions{})
	switch {
	case err != nil:
		t.Errorf("deployment fg just deleted in the foreground, with 2 pods: want it still there, got %v", err)
	case d.DeletionTimestamp == nil || !slices.Contains(d.Finalizers, metav1.FinalizerDeleteDependents):
		t.Errorf("deployment fg deleted in the foreground: deletionTimestamp %v, finalizers %v; want set, [%s]",
			d.DeletionTimestamp, d.Finalizers, metav1.FinalizerDeleteDependents)
	}
	c.eventually(t, waitLong, "deployment fg deleted after its ReplicaSet and pods", ns, func() (string, bool, error) {
		_, err := deployments.Get(t.Context(), "fg", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// The owner is gone: its dependents must have gone first.
			if seen, gone, err := c.leftOf(t, ns, "fg"); err == nil && !gone {
				t.Errorf("deployment fg deleted in the foreground before its dependents: %s", seen)
			}
		}
		return c.leftOf(t, ns, "fg")
	})
}

// leftOf says what is left of deployment ns/name: itself, its
// ReplicaSets, its pods (all labelled app=name).
func (c *cluster) leftOf(t *testing.T, ns, name string) (string, bool, error) {
	_, err := c.client.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	deployment := "deployment present"
	if apierrors.IsNotFound(err) {
		deployment = "deployment gone"
	} else if err != nil {
		return "", false, err
	}
	sel := metav1.ListOptions{LabelSelector: "app=" + name}
	sets, err := c.client.AppsV1().ReplicaSets(ns).List(t.Context(), sel)
	if err != nil {
		return "", false, err
	}
	pods, err := c.client.CoreV1().Pods(ns).List(t.Context(), sel)
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("%s, %d replicasets, %d pods", deployment, len(sets.Items), len(pods.Items)),
		deployment == "deployment gone" && len(sets.Items) == 0 && len(pods.Items) == 0, nil
}

// testNamespaceDeletion: a namespace holding a Deployment and its pods, a
// Service, a ConfigMap and a Secret is Terminating once deleted, and gone
// once the namespace controller has deleted its contents.
func (c *cluster) testNamespaceDeletion(t *testing.T) {
	ns := c.namespace(t, "doomed")
	if _, err := c.client.CoreV1().ConfigMaps(ns).Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.client.CoreV1().Secrets(ns).Create(t.Context(),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "password"}, StringData: map[string]string{"p": "q"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.client.CoreV1().Services(ns).Create(t.Context(), serviceObject("doomed"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.createDeployment(t, ns, "doomed", 2)
	if err := c.client.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting namespace %s: %v", ns, err)
	}
	if got, err := c.client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err == nil && got.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("namespace %s just deleted: phase %s, want Terminating", ns, got.Status.Phase)
	}
	c.eventually(t, waitLong, "namespace "+ns+" and everything in it deleted", ns, func() (string, bool, error) {
		got, err := c.client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return "namespace gone", true, nil
		}
		if err != nil {
			return "", false, err
		}
		pods, _ := c.client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
		var conds []string
		for _, c := range got.Status.Conditions {
			if c.Status == corev1.ConditionTrue {
				conds = append(conds, fmt.Sprintf("%s: %s", c.Type, c.Message))
			}
		}
		return fmt.Sprintf("phase %s, %d pods left, conditions %v", got.Status.Phase, len(pods.Items), conds), false, nil
	})
}
