package resource

import (
	"encoding/json"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestDeclarativeLast(t *testing.T) {
	p := field.NewPath("spec")
	errs := field.ErrorList{
		declarative(field.ErrorList{field.Required(p.Child("a"), "")})[0],
		field.Required(p.Child("b"), ""),
		declarative(field.ErrorList{field.Required(p.Child("c"), "")})[0],
		field.Required(p.Child("d"), ""),
	}
	var got []string
	for _, e := range declarativeLast(errs) {
		got = append(got, e.Field)
	}
	if want := "spec.b spec.d spec.a spec.c"; strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

func TestValidateSetDuplicates(t *testing.T) {
	type item struct{ Name, X string }
	list := []item{{"a", "1"}, {"a", "2"}, {"b", ""}}
	key := func(i item) string { return i.Name }
	none := func(item, *field.Path) field.ErrorList { return nil }
	p := field.NewPath("items")
	// Kube's declarative uniqueness shows the whole item.
	covered := validateSet(list, -1, none, key, p, uniquenessCovered)
	if len(covered) != 1 || !covered[0].CoveredByDeclarative || covered[0].Error() != `items[1]: Duplicate value: {"Name":"a","X":"2"}` {
		t.Errorf("covered: %v", covered)
	}
	// Its handwritten one, the key.
	hand := validateSet(list, -1, none, key, p)
	if len(hand) != 1 || hand[0].CoveredByDeclarative || hand[0].Error() != `items[1]: Duplicate value: "a"` {
		t.Errorf("handwritten: %v", hand)
	}
	// Past the limit nothing else is said.
	if errs := validateSet(list, 2, none, key, p, sizeCovered, uniquenessCovered); len(errs) != 1 || errs[0].Type != field.ErrorTypeTooMany {
		t.Errorf("too many: %v", errs)
	}
}

func TestRequestNames(t *testing.T) {
	names := gatherRequestNames(&resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
		{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{}},
		{Name: "nic", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "fast"}, {Name: "slow"}}},
	}})
	for ref, want := range map[string]bool{
		"gpu": true, "nic": true, "nic/fast": true, "nic/slow": true,
		"gpu/x": false, "nic/other": false, "nic/fast/x": false, "none": false, "": false,
	} {
		if got := names.has(ref); got != want {
			t.Errorf("has(%q) = %v, want %v", ref, got, want)
		}
	}
}

func TestCELSelector(t *testing.T) {
	p := field.NewPath("expression")
	for _, tc := range []struct {
		name, expression string
		stored           bool
		want             string // the error's start, "" for none
	}{
		{"valid", `device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"`, false, ""},
		{"capacity", `device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0`, false, ""},
		{"not a bool", `device.driver`, false, `expression: Invalid value: "device.driver": must evaluate to bool`},
		{"type error", `device.driver == 1`, false, `expression: Invalid value: "device.driver == 1": compilation failed: ERROR: <input>:1:15: found no matching overload`},
		{"stored is not checked again", `device.driver == 1`, true, ""},
		{"too long", strings.Repeat("x", resourcev1.CELSelectorExpressionMaxLength+1), false, "expression: Too long: may not be more than 10240 bytes"},
		{"too costly", `device.attributes["a"].map(x, device.attributes["a"].map(y, device.attributes["a"].map(z, x + y + z))).size() > 0`, false, "expression: Forbidden: too complex, exceeds cost limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateCELSelector(tc.expression, p, tc.stored)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("got %v", errs)
			case tc.want != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want)):
				t.Errorf("got %v, want %s...", errs, tc.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	claim := resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
		{Name: "a", Exactly: &resourcev1.ExactDeviceRequest{Tolerations: []resourcev1.DeviceToleration{{Key: "k"}, {Operator: resourcev1.DeviceTolerationOpExists}}}},
		{Name: "b", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "all", AllocationMode: resourcev1.DeviceAllocationModeAll}, {Name: "three", Count: 3}}},
	}}
	defaultDeviceClaim(&claim)
	e := claim.Requests[0].Exactly
	if e.AllocationMode != resourcev1.DeviceAllocationModeExactCount || e.Count != 1 ||
		e.Tolerations[0].Operator != resourcev1.DeviceTolerationOpEqual || e.Tolerations[1].Operator != resourcev1.DeviceTolerationOpExists {
		t.Errorf("exactly: %+v", e)
	}
	subs := claim.Requests[1].FirstAvailable
	if subs[0].Count != 0 || subs[1].AllocationMode != resourcev1.DeviceAllocationModeExactCount || subs[1].Count != 3 {
		t.Errorf("sub-requests: %+v", subs)
	}
	taint := resourcev1.DeviceTaint{}
	defaultTaint(&taint)
	if taint.TimeAdded == nil || taint.TimeAdded.Nanosecond() != 0 {
		t.Errorf("taint: %+v, want added now, to the second", taint)
	}
}

// TestDropDeallocatedDevices: the status of devices no longer allocated
// goes with their allocation; the others stay.
func TestDropDeallocatedDevices(t *testing.T) {
	result := func(device string, share *types.UID) resourcev1.DeviceRequestAllocationResult {
		return resourcev1.DeviceRequestAllocationResult{Driver: "d", Pool: "p", Device: device, ShareID: share}
	}
	share := types.UID("11111111-2222-3333-4444-555555555555")
	old := resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
		Results: []resourcev1.DeviceRequestAllocationResult{result("a", nil), result("b", &share)},
	}}}
	status := old.DeepCopy()
	status.Allocation.Devices.Results = status.Allocation.Devices.Results[:1]
	status.Devices = []resourcev1.AllocatedDeviceStatus{
		{Driver: "d", Pool: "p", Device: "a"},
		{Driver: "d", Pool: "p", Device: "b", ShareID: ptr.To(string(share))},
	}
	dropDeallocatedDevices(status, &old)
	if len(status.Devices) != 1 || status.Devices[0].Device != "a" {
		t.Errorf("devices: %+v", status.Devices)
	}
	status.Allocation = nil
	dropDeallocatedDevices(status, &old)
	if status.Devices != nil {
		t.Errorf("after deallocation: %+v", status.Devices)
	}
}

// TestDropDisabledSliceFields: fields of features off by default are
// dropped from new slices, kept where the stored slice uses them.
func TestDropDisabledSliceFields(t *testing.T) {
	spec := func() *resourcev1.ResourceSliceSpec {
		return &resourcev1.ResourceSliceSpec{
			PartitionTypeAttribute: ptr.To(resourcev1.FullyQualifiedName("a.b/c")),
			Devices: []resourcev1.Device{{Name: "d", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"list": {IntValues: []int64{1}}, "int": {IntValue: ptr.To[int64](1)},
			}}},
		}
	}
	s := spec()
	dropDisabledSliceFields(s, nil)
	if s.PartitionTypeAttribute != nil || s.Devices[0].Attributes["list"].IntValues != nil || s.Devices[0].Attributes["int"].IntValue == nil {
		t.Errorf("new slice: %+v", s)
	}
	s = spec()
	dropDisabledSliceFields(s, spec())
	if s.PartitionTypeAttribute == nil || s.Devices[0].Attributes["list"].IntValues == nil {
		t.Errorf("slice using them already: %+v", s)
	}
}

func TestClaimState(t *testing.T) {
	now := metav1.Now()
	allocated := &resourcev1.AllocationResult{}
	for _, tc := range []struct {
		claim resourcev1.ResourceClaim
		want  string
	}{
		{resourcev1.ResourceClaim{}, "pending"},
		{resourcev1.ResourceClaim{Status: resourcev1.ResourceClaimStatus{Allocation: allocated}}, "allocated"},
		{resourcev1.ResourceClaim{Status: resourcev1.ResourceClaimStatus{Allocation: allocated, ReservedFor: []resourcev1.ResourceClaimConsumerReference{{}}}}, "allocated,reserved"},
		{resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}, "deleted"},
		{resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: resourcev1.ResourceClaimStatus{Allocation: allocated}}, "deleted,allocated"},
	} {
		if got := claimState(&tc.claim); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.claim.Status, got, tc.want)
		}
	}
}

// TestInternalTemplateSpec: the value kube's immutability error shows.
func TestInternalTemplateSpec(t *testing.T) {
	spec := resourcev1.ResourceClaimTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec:       resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "r"}}}},
	}
	data, err := json.Marshal(internalTemplateSpec(spec))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"labels":{"app":"x"},"Spec":{"Devices":{"Requests":[{"Name":"r","Exactly":null,"FirstAvailable":null}],"Constraints":null,"Config":null}}}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	data, _ = json.Marshal(internalTemplateSpec(resourcev1.ResourceClaimTemplateSpec{}))
	if !strings.HasPrefix(string(data), `{"Spec":`) {
		t.Errorf("empty metadata: %s", data)
	}
}
