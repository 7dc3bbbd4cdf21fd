package clientgo

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// object is a typed API object.
type object interface {
	runtime.Object
	metav1.Object
}

// typedClient is what the generated clientset offers for every resource.
type typedClient[T object, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// collectionDeleter is the DeleteCollection that the typed clients of
// most resources have (not services': kube added the verb later).
type collectionDeleter interface {
	DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error
}

// crudCase runs create, get, update, patch, list, watch, delete and
// delete collection on one resource through the typed client.
type crudCase struct {
	name string
	run  func(t *testing.T, cs kubernetes.Interface, ns string)
}

func crud[T object, L runtime.Object](name string, client func(kubernetes.Interface, string) typedClient[T, L], newObj func(name string) T) crudCase {
	return crudCase{name: name, run: func(t *testing.T, cs kubernetes.Interface, ns string) {
		c := client(cs, ns)
		labels := map[string]string{"crud": name}
		obj := newObj(name + "-a")
		obj.SetLabels(labels)
		created, err := c.Create(ctx(t), obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetCreationTimestamp().Time.IsZero() {
			t.Errorf("created %+v", created)
		}
		got, err := c.Get(ctx(t), created.GetName(), metav1.GetOptions{})
		if err != nil || got.GetResourceVersion() != created.GetResourceVersion() || got.GetUID() != created.GetUID() {
			t.Fatalf("get: %v %+v", err, got)
		}
		got.SetLabels(map[string]string{"crud": name, "updated": "yes"})
		updated, err := c.Update(ctx(t), got, metav1.UpdateOptions{})
		if err != nil || updated.GetLabels()["updated"] != "yes" || updated.GetResourceVersion() == got.GetResourceVersion() {
			t.Fatalf("update: %v %+v", err, updated)
		}
		// An update from the stale object conflicts.
		if _, err := c.Update(ctx(t), got, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "the object has been modified") {
			t.Errorf("stale update: %v", err)
		}
		patched, err := c.Patch(ctx(t), created.GetName(), types.StrategicMergePatchType, []byte(`{"metadata":{"annotations":{"patched":"yes"}}}`), metav1.PatchOptions{})
		if err != nil || patched.GetAnnotations()["patched"] != "yes" || patched.GetLabels()["updated"] != "yes" {
			t.Fatalf("patch: %v %+v", err, patched)
		}
		if _, err := c.Create(ctx(t), newObj(name+"-b"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create b: %v", err)
		}
		list, err := c.List(ctx(t), metav1.ListOptions{LabelSelector: "crud=" + name})
		if err != nil {
			t.Fatal(err)
		}
		items, err := metaItems(list)
		if err != nil || len(items) != 1 || items[0].GetName() != created.GetName() {
			t.Fatalf("list: %v %d items", err, len(items))
		}
		w, err := c.Watch(ctx(t), metav1.ListOptions{LabelSelector: "crud=" + name, ResourceVersion: listRV(t, list)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		// Deleted in the background, the object goes at once, or once the
		// finalizers kube adds (pvc-protection) are removed; pods are
		// first marked (MODIFIED), as in kube.
		background := metav1.DeletePropagationBackground
		if err := c.Delete(ctx(t), created.GetName(), metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if held, err := c.Get(ctx(t), created.GetName(), metav1.GetOptions{}); err == nil {
			if held.GetDeletionTimestamp() == nil || len(held.GetFinalizers()) == 0 {
				t.Fatalf("after delete: %+v", held)
			}
			if _, err := c.Patch(ctx(t), created.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for deleted := false; !deleted; {
			select {
			case e := <-w.ResultChan():
				gone, ok := e.Object.(T)
				if !ok || gone.GetName() != created.GetName() || (e.Type != watch.Deleted && e.Type != watch.Modified) {
					t.Fatalf("watch event %s %T", e.Type, e.Object)
				}
				deleted = e.Type == watch.Deleted
			case <-time.After(10 * time.Second):
				t.Fatal("no DELETED event")
			}
		}
		opts := metav1.ListOptions{FieldSelector: "metadata.name=" + name + "-b"}
		if dc, ok := c.(collectionDeleter); ok {
			err = dc.DeleteCollection(ctx(t), metav1.DeleteOptions{PropagationPolicy: &background}, opts)
		} else {
			err = cs.CoreV1().RESTClient().Delete().Namespace(ns).Resource(name+"s").VersionedParams(&opts, metav1.ParameterCodec).Do(ctx(t)).Error()
		}
		if err != nil {
			t.Fatalf("delete collection: %v", err)
		}
		if left, err := c.Get(ctx(t), name+"-b", metav1.GetOptions{}); err == nil && left.GetDeletionTimestamp() == nil {
			t.Errorf("%s-b survived its collection's deletion", name)
		}
	}}
}

func metaItems(list runtime.Object) ([]metav1.Object, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	var out []metav1.Object
	for _, o := range objs {
		out = append(out, o.(metav1.Object))
	}
	return out, nil
}

func listRV(t *testing.T, list runtime.Object) string {
	t.Helper()
	l, ok := list.(metav1.ListInterface)
	if !ok {
		t.Fatalf("%T is no list", list)
	}
	return l.GetResourceVersion()
}

var podSpec = corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36"}}}

func template(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}, Spec: podSpec}
}

// crudCases are resources of the three groups, namespaced and cluster
// scoped, with and without status.
var crudCases = []crudCase{
	crud("configmap", func(cs kubernetes.Interface, ns string) typedClient[*corev1.ConfigMap, *corev1.ConfigMapList] {
		return cs.CoreV1().ConfigMaps(ns)
	}, func(n string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}, Data: map[string]string{"k": "v"}}
	}),
	crud("secret", func(cs kubernetes.Interface, ns string) typedClient[*corev1.Secret, *corev1.SecretList] {
		return cs.CoreV1().Secrets(ns)
	}, func(n string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n}, Data: map[string][]byte{"k": {0, 1, 2}}}
	}),
	crud("service", func(cs kubernetes.Interface, ns string) typedClient[*corev1.Service, *corev1.ServiceList] {
		return cs.CoreV1().Services(ns)
	}, func(n string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	}),
	crud("pod", func(cs kubernetes.Interface, ns string) typedClient[*corev1.Pod, *corev1.PodList] {
		return cs.CoreV1().Pods(ns)
	}, func(n string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: podSpec}
	}),
	crud("pvc", func(cs kubernetes.Interface, ns string) typedClient[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList] {
		return cs.CoreV1().PersistentVolumeClaims(ns)
	}, func(n string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}}
	}),
	crud("replicationcontroller", func(cs kubernetes.Interface, ns string) typedClient[*corev1.ReplicationController, *corev1.ReplicationControllerList] {
		return cs.CoreV1().ReplicationControllers(ns)
	}, func(n string) *corev1.ReplicationController {
		tpl := template(n)
		return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"app": n}, Template: &tpl}}
	}),
	crud("deployment", func(cs kubernetes.Interface, ns string) typedClient[*appsv1.Deployment, *appsv1.DeploymentList] {
		return cs.AppsV1().Deployments(ns)
	}, func(n string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": n}}, Template: template(n)}}
	}),
	crud("statefulset", func(cs kubernetes.Interface, ns string) typedClient[*appsv1.StatefulSet, *appsv1.StatefulSetList] {
		return cs.AppsV1().StatefulSets(ns)
	}, func(n string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": n}}, Template: template(n)}}
	}),
	crud("daemonset", func(cs kubernetes.Interface, ns string) typedClient[*appsv1.DaemonSet, *appsv1.DaemonSetList] {
		return cs.AppsV1().DaemonSets(ns)
	}, func(n string) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": n}}, Template: template(n)}}
	}),
	crud("lease", func(cs kubernetes.Interface, ns string) typedClient[*coordinationv1.Lease, *coordinationv1.LeaseList] {
		return cs.CoordinationV1().Leases(ns)
	}, func(n string) *coordinationv1.Lease {
		holder := "me"
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	}),
	crud("node", func(cs kubernetes.Interface, _ string) typedClient[*corev1.Node, *corev1.NodeList] {
		return cs.CoreV1().Nodes()
	}, func(n string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "clientgo-" + n}}
	}),
}

// TestTypedCRUD drives resources through the typed clientset with its
// default content type, protobuf, and checks that protobuf is what went
// over the wire both ways.
func TestTypedCRUD(t *testing.T) {
	ns := namespace(t)
	cfg, rec := recordedConfig()
	cfg.ContentType = ""
	cs := kubernetes.NewForConfigOrDie(cfg)
	for _, tc := range crudCases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, cs, ns) })
	}
	const protobuf = "application/vnd.kubernetes.protobuf"
	n := 0
	for _, e := range rec.find("/") {
		n++
		if (e.method == "POST" || e.method == "PUT") && e.contentType != protobuf {
			t.Errorf("%s %s sent %q", e.method, e.url, e.contentType)
		}
		if !strings.HasPrefix(e.accept, protobuf) {
			t.Errorf("%s %s accepted %q", e.method, e.url, e.accept)
		}
		if e.code < 400 && !strings.HasPrefix(e.responseType, protobuf) {
			t.Errorf("%s %s answered %d %q", e.method, e.url, e.code, e.responseType)
		}
	}
	if n < 10*len(crudCases) {
		t.Errorf("only %d exchanges recorded", n)
	}
}
