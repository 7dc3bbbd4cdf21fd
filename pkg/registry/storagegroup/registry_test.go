package storagegroup_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/storagegroup"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// TestRegistry runs the registry's conformance suite on the group's
// kinds, with the volume attachments' status subresource.
func TestRegistry(t *testing.T) {
	t.Parallel()
	registrytest.RunGroup(t, storagegroup.NewRESTStorageProvider(), []registrytest.Case{
		{Resource: "storageclasses", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			return registrytest.Tester{
				Valid: func(name string) runtime.Object {
					return &storagev1.StorageClass{ObjectMeta: meta(name), Provisioner: "example.com/csi"}
				},
				Invalid: func(name string) runtime.Object {
					return &storagev1.StorageClass{ObjectMeta: meta(name)}
				},
				AllowUnconditionalUpdate: true,
			}
		}},
		{Resource: "csidrivers", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name string, mode storagev1.VolumeLifecycleMode) runtime.Object {
				return &storagev1.CSIDriver{ObjectMeta: meta(name), Spec: storagev1.CSIDriverSpec{
					VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{mode}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, storagev1.VolumeLifecyclePersistent) },
				Invalid: func(name string) runtime.Object { return valid(name, "Registrytest") },
				Change: func(obj runtime.Object) {
					obj.(*storagev1.CSIDriver).Spec.RequiresRepublish = ptr.To(true)
				},
			}
		}},
		{Resource: "csinodes", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, driver string) runtime.Object {
				return &storagev1.CSINode{ObjectMeta: meta(name), Spec: storagev1.CSINodeSpec{
					Drivers: []storagev1.CSINodeDriver{{Name: driver, NodeID: "node-1"}}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "example.com") },
				Invalid: func(name string) runtime.Object { return valid(name, "not a driver!") },
			}
		}},
		{Resource: "csistoragecapacities", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, class string) runtime.Object {
				return &storagev1.CSIStorageCapacity{ObjectMeta: meta(name), StorageClassName: class,
					Capacity: ptr.To(resource.MustParse("1Gi"))}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "standard") },
				Invalid: func(name string) runtime.Object { return valid(name, "not a class!") },
				Change: func(obj runtime.Object) {
					obj.(*storagev1.CSIStorageCapacity).Capacity = ptr.To(resource.MustParse("2Gi"))
				},
			}
		}},
		{Resource: "volumeattachments", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, attacher string) runtime.Object {
				return &storagev1.VolumeAttachment{ObjectMeta: meta(name), Spec: storagev1.VolumeAttachmentSpec{
					Attacher: attacher, NodeName: "node-1",
					Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")}}}
			}
			attachedAt := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "example.com") },
				Invalid: func(name string) runtime.Object { return valid(name, "") },
				Status: &registrytest.StatusCheck{
					Storage: registrytest.StatusStorage(t, info, "volumeattachments"),
					ChangeStatus: func(obj runtime.Object) {
						va := obj.(*storagev1.VolumeAttachment)
						va.Status.Attached = true
						va.Status.AttachError = &storagev1.VolumeError{Time: attachedAt, Message: "registrytest"}
					},
				},
			}
		}},
		{Resource: "volumeattributesclasses", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, driver string) runtime.Object {
				return &storagev1.VolumeAttributesClass{ObjectMeta: meta(name), DriverName: driver,
					Parameters: map[string]string{"iops": "100"}}
			}
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, "example.com") },
				Invalid:                  func(name string) runtime.Object { return valid(name, "") },
				AllowUnconditionalUpdate: true,
			}
		}},
	})
}
