package core

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// nodeUnreachablePodReason is the status reason the node controller gives
// pods of a lost node.
const nodeUnreachablePodReason = "NodeLost"

// podTable prints pods as kube's printers do: NAME READY STATUS RESTARTS
// AGE, and IP NODE NOMINATED NODE READINESS GATES for -o wide.
var podTable = generic.TablePrinter{
	Columns: []metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		generic.AgeColumn,
		{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
		{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
	},
	Cells:      func(obj runtime.Object) ([]interface{}, error) { return podCells(obj.(*corev1.Pod)), nil },
	Conditions: podRowConditions,
}

// podRowConditions marks finished pods Completed: kubectl hides them
// unless asked (--show-all of old).
func podRowConditions(obj runtime.Object) []metav1.TableRowCondition {
	switch obj.(*corev1.Pod).Status.Phase {
	case corev1.PodSucceeded:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	case corev1.PodFailed:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
	}
	return nil
}

// podCounts is what the READY, STATUS and RESTARTS columns summarise.
type podCounts struct {
	reason                     string
	ready, total               int
	restarts                   int
	lastRestart                metav1.Time
	sidecarRestarts            int
	lastSidecarRestart         metav1.Time
	initializing, initComplete bool
}

func podCells(pod *corev1.Pod) []interface{} {
	c := podCounts{total: len(pod.Spec.Containers), reason: string(pod.Status.Phase)}
	if pod.Status.Reason != "" {
		c.reason = pod.Status.Reason
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonSchedulingGated {
			c.reason = corev1.PodReasonSchedulingGated
		}
		if cond.Type == corev1.PodInitialized {
			c.initComplete = cond.Status == corev1.ConditionTrue
		}
	}
	c.initContainers(pod)
	if !c.initializing || c.initComplete {
		c.containers(pod)
	}
	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		c.reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodFailed && pod.Status.Phase != corev1.PodSucceeded {
		c.reason = "Terminating"
	}
	restarts := strconv.Itoa(c.restarts)
	if c.restarts != 0 && !c.lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", c.restarts, generic.TranslateTimestampSince(c.lastRestart))
	}
	podIP := "<none>"
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP != "" {
		podIP = pod.Status.PodIPs[0].IP
	}
	return []interface{}{
		pod.Name, fmt.Sprintf("%d/%d", c.ready, c.total), c.reason, restarts,
		generic.TranslateTimestampSince(pod.CreationTimestamp),
		podIP, orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), readinessGates(pod),
	}
}

func (c *podCounts) initContainers(pod *corev1.Pod) {
	sidecars := map[string]bool{}
	for _, ic := range pod.Spec.InitContainers {
		if ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[ic.Name] = true
			c.total++
		}
	}
	for i, s := range pod.Status.InitContainerStatuses {
		c.restarts += int(s.RestartCount)
		if t := s.LastTerminationState.Terminated; t != nil && c.lastRestart.Before(&t.FinishedAt) {
			c.lastRestart = t.FinishedAt
		}
		if sidecars[s.Name] {
			c.sidecarRestarts += int(s.RestartCount)
			if t := s.LastTerminationState.Terminated; t != nil && c.lastSidecarRestart.Before(&t.FinishedAt) {
				c.lastSidecarRestart = t.FinishedAt
			}
		}
		switch t, w := s.State.Terminated, s.State.Waiting; {
		case t != nil && t.ExitCode == 0:
			continue
		case sidecars[s.Name] && s.Started != nil && *s.Started:
			if s.Ready {
				c.ready++
			}
			continue
		case t != nil:
			switch {
			case t.Reason != "":
				c.reason = "Init:" + t.Reason
			case t.Signal != 0:
				c.reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				c.reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case w != nil && w.Reason != "" && w.Reason != "PodInitializing":
			c.reason = "Init:" + w.Reason
		default:
			c.reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		c.initializing = true
		break
	}
}

func (c *podCounts) containers(pod *corev1.Pod) {
	c.restarts, c.lastRestart = c.sidecarRestarts, c.lastSidecarRestart
	hasRunning, errorReason := false, ""
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		s := pod.Status.ContainerStatuses[i]
		c.restarts += int(s.RestartCount)
		if t := s.LastTerminationState.Terminated; t != nil && c.lastRestart.Before(&t.FinishedAt) {
			c.lastRestart = t.FinishedAt
		}
		switch w, t := s.State.Waiting, s.State.Terminated; {
		case w != nil && w.Reason != "":
			c.reason = w.Reason
		case t != nil:
			switch {
			case t.Reason != "":
				c.reason = t.Reason
			case t.Signal != 0:
				c.reason = fmt.Sprintf("Signal:%d", t.Signal)
			default:
				c.reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
			}
			if t.ExitCode != 0 {
				errorReason = c.reason
			}
		case s.Ready && s.State.Running != nil:
			hasRunning = true
			c.ready++
		}
	}
	// A pod whose containers still run is not "Completed".
	if c.reason == "Completed" {
		switch {
		case hasRunning && podReady(pod):
			c.reason = "Running"
		case errorReason != "":
			c.reason = errorReason
		case hasRunning:
			c.reason = "NotReady"
		}
	}
}

func podReady(pod *corev1.Pod) bool {
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func readinessGates(pod *corev1.Pod) string {
	if len(pod.Spec.ReadinessGates) == 0 {
		return "<none>"
	}
	trueConditions := 0
	for _, g := range pod.Spec.ReadinessGates {
		for _, cond := range pod.Status.Conditions {
			if cond.Type == g.ConditionType {
				if cond.Status == corev1.ConditionTrue {
					trueConditions++
				}
				break
			}
		}
	}
	return fmt.Sprintf("%d/%d", trueConditions, len(pod.Spec.ReadinessGates))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
