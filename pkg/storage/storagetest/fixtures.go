// Package storagetest is the conformance suite of storage.Interface. Every
// implementation (etcd3.Store, cacher.Cacher) runs it against a real
// embedded etcd. Where a cache may legally answer differently (a newer
// revision), the suite accepts both outcomes; it never asks which
// implementation it is testing.
package storagetest

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Harness gives the suite what it needs from the implementation under test.
type Harness struct {
	// New builds the store under test for cfg, over etcd; the store must
	// be released at the end of the test.
	New func(t *testing.T, cfg storage.Config) storage.Interface
	// Compact compacts etcd's history up to rev.
	Compact func(t *testing.T, rev int64)
}

var prefixSeq atomic.Int64

// PodConfig returns the storage config of pods under a prefix of their own,
// with the attributes kube's pod strategy exposes (labels, metadata.name,
// metadata.namespace, spec.nodeName, status.phase).
func PodConfig() storage.Config {
	prefix := fmt.Sprintf("/registry-test-%d-%d/pods", time.Now().UnixNano(), prefixSeq.Add(1))
	return storage.Config{
		Resource:       "pods",
		ResourcePrefix: prefix,
		NewFunc:        func() runtime.Object { return &corev1.Pod{} },
		AttrFunc:       PodAttrs,
		IndexFields:    []string{"spec.nodeName"},
		KeyFunc: func(obj runtime.Object) (string, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return "", err
			}
			return path.Join(prefix, m.GetNamespace(), m.GetName()), nil
		},
		Paging: true,
	}
}

// PodAttrs is the AttrFunc of test pods.
func PodAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil, fmt.Errorf("not a pod: %T", obj)
	}
	return labels.Set(pod.Labels), fields.Set{
		"metadata.name":      pod.Name,
		"metadata.namespace": pod.Namespace,
		"spec.nodeName":      pod.Spec.NodeName,
		"status.phase":       string(pod.Status.Phase),
	}, nil
}

// NewPod returns a pod ready to be created.
func NewPod(ns, name, node string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: lbls,
			UID: types.UID(fmt.Sprintf("uid-%s-%s-%d", ns, name, prefixSeq.Add(1))),
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

type fixture struct {
	t   *testing.T
	h   Harness
	cfg storage.Config
	s   storage.Interface
	ctx context.Context
}

func newFixture(t *testing.T, h Harness) *fixture {
	t.Helper()
	cfg := PodConfig()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return &fixture{t: t, h: h, cfg: cfg, s: h.New(t, cfg), ctx: ctx}
}

func (f *fixture) key(ns, name string) string { return path.Join(f.cfg.ResourcePrefix, ns, name) }

func (f *fixture) create(ns, name, node string, lbls map[string]string) *corev1.Pod {
	f.t.Helper()
	out := &corev1.Pod{}
	if err := f.s.Create(f.ctx, f.key(ns, name), NewPod(ns, name, node, lbls), out, 0); err != nil {
		f.t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	return out
}

// update sets a label through GuaranteedUpdate and returns the result.
func (f *fixture) update(ns, name string, mutate func(*corev1.Pod)) *corev1.Pod {
	f.t.Helper()
	out := &corev1.Pod{}
	err := f.s.GuaranteedUpdate(f.ctx, f.key(ns, name), out, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			p := in.(*corev1.Pod)
			mutate(p)
			return p, nil, nil
		}, nil)
	if err != nil {
		f.t.Fatalf("update %s/%s: %v", ns, name, err)
	}
	return out
}

func (f *fixture) delete(ns, name string) *corev1.Pod {
	f.t.Helper()
	out := &corev1.Pod{}
	if err := f.s.Delete(f.ctx, f.key(ns, name), out, nil, nil, nil); err != nil {
		f.t.Fatalf("delete %s/%s: %v", ns, name, err)
	}
	return out
}

func (f *fixture) list(opts storage.ListOptions) *storage.ListResult {
	f.t.Helper()
	return f.listIn("", opts)
}

// recursivePods completes opts of a list or watch of the suite's pods:
// recursive, with an everything selector where opts has none, and the
// pods' attributes.
func recursivePods(opts storage.ListOptions) storage.ListOptions {
	opts.Recursive = true
	if opts.Predicate.Label == nil {
		opts.Predicate.Label = labels.Everything()
	}
	if opts.Predicate.Field == nil {
		opts.Predicate.Field = fields.Everything()
	}
	opts.Predicate.GetAttrs = PodAttrs
	return opts
}

// listIn lists one namespace, or everything for "".
func (f *fixture) listIn(ns string, opts storage.ListOptions) *storage.ListResult {
	f.t.Helper()
	opts = recursivePods(opts)
	key := f.cfg.ResourcePrefix
	if ns != "" {
		key += "/" + ns
	}
	res, err := f.s.GetList(f.ctx, key, opts)
	if err != nil {
		f.t.Fatalf("list %+v: %v", opts, err)
	}
	return res
}

func rvOf(t *testing.T, obj runtime.Object) int64 {
	t.Helper()
	rv, err := storage.ObjectResourceVersion(obj)
	if err != nil || rv == 0 {
		t.Fatalf("object has no valid resourceVersion: %v", err)
	}
	return rv
}

// names decodes list items and returns "ns/name" for each.
func names(t *testing.T, items []*storage.Object) []string {
	t.Helper()
	var out []string
	for _, it := range items {
		p := &corev1.Pod{}
		if err := it.Decode(p); err != nil {
			t.Fatalf("decode %s: %v", it.Key, err)
		}
		if p.ResourceVersion != fmt.Sprint(it.ResourceVersion) {
			t.Fatalf("item %s: decoded resourceVersion %q, item revision %d", it.Key, p.ResourceVersion, it.ResourceVersion)
		}
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

func join(s []string) string { return strings.Join(s, ",") }

func wantCode(t *testing.T, err error, code storage.ErrorCode) {
	t.Helper()
	if got := storage.CodeOf(err); got != code {
		t.Fatalf("want a %q error, got %v", code, err)
	}
}
