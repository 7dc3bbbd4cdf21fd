package resource

import (
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourceapply "k8s.io/client-go/applyconfigurations/resource/v1"
)

func gpuClaim(name string) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com",
				Tolerations: []resourcev1.DeviceToleration{{Key: "example.com/broken"}}}},
		}}},
	}
}

// TestClaimDefaultsAndCRUD creates, reads, lists and deletes a claim with
// the typed client: a request allocates one device (ExactCount) unless it
// says otherwise, a toleration's operator is Equal, a new claim has no
// status (whatever the client sent) and no generation.
func TestClaimDefaultsAndCRUD(t *testing.T) {
	t.Parallel()
	ns, claims := srv.CreateNamespace(t), client(t).ResourceV1().ResourceClaims
	in := gpuClaim("defaults")
	in.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}
	created, err := claims(ns).Create(ctx(t), in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exactly := created.Spec.Devices.Requests[0].Exactly
	if exactly.AllocationMode != resourcev1.DeviceAllocationModeExactCount || exactly.Count != 1 || exactly.Tolerations[0].Operator != resourcev1.DeviceTolerationOpEqual {
		t.Errorf("defaults: %+v", exactly)
	}
	if created.Status.ReservedFor != nil || created.Generation != 0 {
		t.Errorf("status %+v, generation %d: want none", created.Status, created.Generation)
	}
	list, err := claims(ns).List(ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=defaults"})
	if err != nil || len(list.Items) != 1 || list.Items[0].UID != created.UID {
		t.Fatalf("list: %v %+v", err, list)
	}
	if err := claims(ns).Delete(ctx(t), "defaults", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := claims(ns).Get(ctx(t), "defaults", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: %v", err)
	}
}

// TestClaimAllocation walks a claim through what kube-scheduler's DRA
// plugin and a driver do, through resourceclaims/status: allocate and
// reserve for a pod, publish device status, then deallocate; the spec
// never changes, the main endpoint never changes the status.
func TestClaimAllocation(t *testing.T) {
	t.Parallel()
	ns, claims := srv.CreateNamespace(t), client(t).ResourceV1().ResourceClaims
	claim, err := claims(ns).Create(ctx(t), gpuClaim("alloc"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The scheduler allocates and reserves in one status update.
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0", Tolerations: []resourcev1.DeviceToleration{{Key: "example.com/broken"}}},
	}}}
	claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "pod", UID: "uid-1"}}
	claim.Labels = map[string]string{"ignored": "by /status"}
	allocated, err := claims(ns).UpdateStatus(ctx(t), claim, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if allocated.Labels != nil || allocated.Status.Allocation.Devices.Results[0].Tolerations[0].Operator != resourcev1.DeviceTolerationOpEqual {
		t.Errorf("status update: labels %v, allocation %+v", allocated.Labels, allocated.Status.Allocation)
	}

	// The allocation never changes once set.
	changed := allocated.DeepCopy()
	changed.Status.Allocation.Devices.Results[0].Device = "gpu-1"
	_, err = claims(ns).UpdateStatus(ctx(t), changed, metav1.UpdateOptions{})
	wantInvalid(t, err, "status.allocation", "field cannot be modified once set")

	// The main endpoint ignores the status and refuses spec changes.
	cleared := allocated.DeepCopy()
	cleared.Status = resourcev1.ResourceClaimStatus{}
	cleared.Labels = map[string]string{"a": "b"}
	updated, err := claims(ns).Update(ctx(t), cleared, metav1.UpdateOptions{})
	if err != nil || updated.Status.Allocation == nil || updated.Labels["a"] != "b" {
		t.Fatalf("update: %v, %+v", err, updated)
	}
	respec := updated.DeepCopy()
	respec.Spec.Devices.Requests[0].Exactly.Count = 2
	_, err = claims(ns).Update(ctx(t), respec, metav1.UpdateOptions{})
	wantInvalid(t, err, "spec", "field is immutable")

	// A driver publishes the status of the allocated device only.
	withDevice := updated.DeepCopy()
	withDevice.Status.Devices = []resourcev1.AllocatedDeviceStatus{{Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0",
		NetworkData: &resourcev1.NetworkDeviceData{InterfaceName: "eth1", IPs: []string{"10.0.0.2/24"}}}}
	withDevice, err = claims(ns).UpdateStatus(ctx(t), withDevice, metav1.UpdateOptions{})
	if err != nil || len(withDevice.Status.Devices) != 1 {
		t.Fatalf("device status: %v %+v", err, withDevice)
	}
	stranger := withDevice.DeepCopy()
	stranger.Status.Devices[0].Device = "gpu-7"
	_, err = claims(ns).UpdateStatus(ctx(t), stranger, metav1.UpdateOptions{})
	wantInvalid(t, err, "status.devices[0]", "must be an allocated device in the claim")

	// Deallocating drops the reservation and, with it, the device status.
	deallocated := withDevice.DeepCopy()
	deallocated.Status.Allocation, deallocated.Status.ReservedFor = nil, nil
	deallocated, err = claims(ns).UpdateStatus(ctx(t), deallocated, metav1.UpdateOptions{})
	if err != nil || deallocated.Status.Devices != nil || deallocated.Status.Allocation != nil {
		t.Fatalf("deallocate: %v %+v", err, deallocated)
	}
	// A reservation needs an allocation.
	deallocated.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "pod", UID: types.UID("uid-1")}}
	_, err = claims(ns).UpdateStatus(ctx(t), deallocated, metav1.UpdateOptions{})
	wantInvalid(t, err, "status.reservedFor", "may not be specified when `allocated` is not set")
}

// TestClaimApply applies a claim and its status with separate field
// managers, as controllers do: each owns its part (status is reset on
// the main endpoint, spec and metadata on /status).
func TestClaimApply(t *testing.T) {
	t.Parallel()
	ns, claims := srv.CreateNamespace(t), client(t).ResourceV1().ResourceClaims
	cfg := resourceapply.ResourceClaim("applied", ns).WithSpec(resourceapply.ResourceClaimSpec().WithDevices(
		resourceapply.DeviceClaim().WithRequests(resourceapply.DeviceRequest().WithName("gpu").WithExactly(
			resourceapply.ExactDeviceRequest().WithDeviceClassName("gpu.example.com").WithAllocationMode(resourcev1.DeviceAllocationModeAll)))))
	applied, err := claims(ns).Apply(ctx(t), cfg, metav1.ApplyOptions{FieldManager: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if r := applied.Spec.Devices.Requests[0].Exactly; r.AllocationMode != resourcev1.DeviceAllocationModeAll || r.Count != 0 {
		t.Errorf("applied request: %+v", r)
	}
	status := resourceapply.ResourceClaim("applied", ns).WithStatus(resourceapply.ResourceClaimStatus().
		WithAllocation(resourceapply.AllocationResult().WithDevices(resourceapply.DeviceAllocationResult().WithResults(
			resourceapply.DeviceRequestAllocationResult().WithRequest("gpu").WithDriver("gpu.example.com").WithPool("p").WithDevice("d")))))
	withStatus, err := claims(ns).ApplyStatus(ctx(t), status, metav1.ApplyOptions{FieldManager: "scheduler", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	managers := map[string]string{}
	for _, m := range withStatus.ManagedFields {
		managers[m.Manager] = m.Subresource
	}
	if withStatus.Status.Allocation == nil || managers["user"] != "" || managers["scheduler"] != "status" {
		t.Errorf("after status apply: %+v, managers %v", withStatus.Status, managers)
	}
	// Applying the spec again, changed, is refused: it is immutable.
	cfg.Spec.Devices.Requests[0].Exactly.WithDeviceClassName("other")
	_, err = claims(ns).Apply(ctx(t), cfg, metav1.ApplyOptions{FieldManager: "user"})
	wantInvalid(t, err, "spec", "field is immutable")
}

// TestClaimTemplateCRUD: templates default as claims do and never change
// their spec.
func TestClaimTemplateCRUD(t *testing.T) {
	t.Parallel()
	ns, templates := srv.CreateNamespace(t), client(t).ResourceV1().ResourceClaimTemplates
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "tmpl"}, Spec: resourcev1.ResourceClaimTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "any", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "big", DeviceClassName: "gpu.example.com"}, {Name: "all", DeviceClassName: "gpu.example.com", AllocationMode: resourcev1.DeviceAllocationModeAll}}},
		}}},
	}}
	created, err := templates(ns).Create(ctx(t), tmpl, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	subs := created.Spec.Spec.Devices.Requests[0].FirstAvailable
	if subs[0].AllocationMode != resourcev1.DeviceAllocationModeExactCount || subs[0].Count != 1 || subs[1].Count != 0 {
		t.Errorf("sub-request defaults: %+v", subs)
	}
	created.Spec.Spec.Devices.Requests[0].FirstAvailable[0].Count = 3
	_, err = templates(ns).Update(ctx(t), created, metav1.UpdateOptions{})
	wantInvalid(t, err, "spec", "field is immutable")
}

// wantInvalid checks that err is kube's 422 with a cause at field whose
// message contains msg.
func wantInvalid(t *testing.T, err error, field, msg string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want 422 Invalid", err)
	}
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		if c.Field == field && strings.Contains(c.Message, msg) {
			return
		}
	}
	t.Errorf("no cause %s %q in %v", field, msg, err)
}
