package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// image is what every container "runs" (the fake kubelet runs nothing).
const image = "registry.k8s.io/pause:3.10"

// waitLong bounds what the controllers do in a few steps; a CronJob waits
// for the next minute besides.
const waitLong = 90 * time.Second

func namespaceObject(prefix string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + prefix + "-"}}
}

// podTemplate is a template of one container, labelled app=name.
func podTemplate(name string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers: []corev1.Container{{
				Name: "main", Image: image,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			}},
		},
	}
}

func deploymentObject(name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name),
		},
	}
}

// createDeployment creates a Deployment of replicas pods and waits until
// they are Available.
func (c *cluster) createDeployment(t *testing.T, ns, name string, replicas int32) []corev1.Pod {
	t.Helper()
	if _, err := c.client.AppsV1().Deployments(ns).Create(t.Context(), deploymentObject(name, replicas), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating deployment %s/%s: %v", ns, name, err)
	}
	return c.waitDeployment(t, ns, name, replicas)
}

// waitDeployment waits until deployment ns/name has rolled out its latest
// generation to replicas pods, Available, and they are exactly the pods
// of its selector: Running, Ready and bound to the fake kubelet's nodes.
// It returns those pods.
func (c *cluster) waitDeployment(t *testing.T, ns, name string, replicas int32) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	what := fmt.Sprintf("deployment %s/%s rolled out to %d available pods on the nodes", ns, name, replicas)
	c.eventually(t, waitLong, what, ns, func() (string, bool, error) {
		d, err := c.client.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		s := d.Status
		seen := fmt.Sprintf("generation %d observed %d, replicas %d updated %d ready %d available %d, Available=%s",
			d.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas,
			deploymentCondition(d, appsv1.DeploymentAvailable))
		done := s.ObservedGeneration >= d.Generation && s.Replicas == replicas && s.UpdatedReplicas == replicas &&
			s.AvailableReplicas == replicas && deploymentCondition(d, appsv1.DeploymentAvailable) == corev1.ConditionTrue
		var podsSeen string
		var ok bool
		pods, podsSeen, ok, err = c.runningPods(t, ns, d.Spec.Selector.MatchLabels, int(replicas))
		return seen + "; pods: " + podsSeen, done && ok, err
	})
	return pods
}

// runningPods lists the pods labelled sel and says whether they are
// exactly n, none being deleted, all Running and Ready on the nodes.
func (c *cluster) runningPods(t *testing.T, ns string, sel map[string]string, n int) ([]corev1.Pod, string, bool, error) {
	list, err := c.client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
	if err != nil {
		return nil, "", false, err
	}
	ok := len(list.Items) == n
	var seen []string
	for _, p := range list.Items {
		state := fmt.Sprintf("%s on %q %s ready=%v ip=%s", p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p), p.Status.PodIP)
		if p.DeletionTimestamp != nil {
			state += " deleting"
		}
		seen = append(seen, state)
		ok = ok && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) &&
			slices.Contains(c.nodeNames(), p.Spec.NodeName)
	}
	return list.Items, fmt.Sprintf("%d [%s]", len(list.Items), strings.Join(seen, ", ")), ok, nil
}

func deploymentCondition(d *appsv1.Deployment, kind appsv1.DeploymentConditionType) corev1.ConditionStatus {
	for _, c := range d.Status.Conditions {
		if c.Type == kind {
			return c.Status
		}
	}
	return "(none)"
}

// podIPs returns the pods' IPs, sorted.
func podIPs(pods []corev1.Pod) []string {
	var ips []string
	for _, p := range pods {
		ips = append(ips, p.Status.PodIP)
	}
	slices.Sort(ips)
	return ips
}
