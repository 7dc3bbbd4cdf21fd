package resource

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The defaults of kube's resource/v1 (pkg/apis/resource/v1/defaults.go and
// the generated ones): a request (exact or a sub-request) allocates
// ExactCount, 1 device; a toleration's operator is Equal; a taint is added
// now (to the second).

func defaultDeviceClaim(claim *resourcev1.DeviceClaim) {
	for i := range claim.Requests {
		r := &claim.Requests[i]
		if e := r.Exactly; e != nil {
			defaultAllocationMode(&e.AllocationMode, &e.Count)
			defaultTolerations(e.Tolerations)
		}
		for j := range r.FirstAvailable {
			sub := &r.FirstAvailable[j]
			defaultAllocationMode(&sub.AllocationMode, &sub.Count)
			defaultTolerations(sub.Tolerations)
		}
	}
}

func defaultAllocationMode(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

func defaultTolerations(tolerations []resourcev1.DeviceToleration) {
	for i := range tolerations {
		if tolerations[i].Operator == "" {
			tolerations[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}

// defaultAllocation defaults the tolerations an allocation copied from
// its requests.
func defaultAllocation(allocation *resourcev1.AllocationResult) {
	if allocation == nil {
		return
	}
	for i := range allocation.Devices.Results {
		defaultTolerations(allocation.Devices.Results[i].Tolerations)
	}
}

func defaultTaint(taint *resourcev1.DeviceTaint) {
	if taint.TimeAdded == nil {
		taint.TimeAdded = now()
	}
}

// now is the time a taint is added at: kube truncates it to the second.
func now() *metav1.Time {
	return &metav1.Time{Time: time.Now().Truncate(time.Second)}
}
