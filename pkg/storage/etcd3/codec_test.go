package etcd3_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/codec"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

// kubeValue returns what kube-apiserver stores for obj in mediaType: its
// storage codec's bytes (apimachinery's protobuf serializer; JSON ending in
// a newline, as its JSON encoder writes it; YAML), without resourceVersion.
func kubeValue(t *testing.T, obj runtime.Object, mediaType string) []byte {
	t.Helper()
	obj = obj.DeepCopyObject()
	if err := storage.SetResourceVersion(obj, 0); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	switch mediaType {
	case storage.MediaTypeProtobuf:
		if err := protobuf.NewSerializer(api.Scheme(), api.Scheme()).Encode(obj, &buf); err != nil {
			t.Fatal(err)
		}
	case storage.MediaTypeJSON, storage.MediaTypeYAML:
		if err := json.NewEncoder(&buf).Encode(obj); err != nil {
			t.Fatal(err)
		}
		if mediaType == storage.MediaTypeYAML {
			y, err := yaml.JSONToYAML(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			return y
		}
	}
	return buf.Bytes()
}

func protobufStore(t *testing.T, etcd *etcdtest.Etcd, cfg storage.Config, mediaType string) *etcd3.Store {
	t.Helper()
	c, err := codec.New(api.Scheme(), mediaType)
	if err != nil {
		t.Fatal(err)
	}
	return etcd3.NewWithCodec(etcd.Client, cfg, nil, c)
}

// TestReadsWhatKubeWrote: values written as kube-apiserver writes them, in
// each of its media types, are read by Get, GetObject, GetList and Watch
// as the JSON this server hands upwards.
func TestReadsWhatKubeWrote(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, mediaType := range []string{storage.MediaTypeProtobuf, storage.MediaTypeJSON, storage.MediaTypeYAML} {
		t.Run(mediaType, func(t *testing.T) {
			cfg := storagetest.PodConfig()
			s := protobufStore(t, etcd, cfg, storage.MediaTypeProtobuf)
			w, err := s.Watch(ctx, cfg.ResourcePrefix, storage.ListOptions{ResourceVersion: "1", Recursive: true,
				Predicate: storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(), GetAttrs: storagetest.PodAttrs}})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			pod := storagetest.NewPod("ns", "p1", "node-a", map[string]string{"app": "x"})
			key := cfg.ResourcePrefix + "/ns/p1"
			resp, err := etcd.Client.Put(ctx, key, string(kubeValue(t, pod, mediaType)))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := storage.Encode(pod.DeepCopy())
			got := &corev1.Pod{}
			if err := s.Get(ctx, key, storage.GetOptions{}, got); err != nil {
				t.Fatalf("Get: %v", err)
			}
			if got.Spec.NodeName != "node-a" || got.ResourceVersion == "" {
				t.Errorf("Get: got %+v", got)
			}
			obj, err := s.GetObject(ctx, key, storage.GetOptions{})
			if err != nil || !bytes.Equal(obj.Data(), want) || obj.ResourceVersion != resp.Header.Revision {
				t.Errorf("GetObject: got %s at %d (%v), want %s at %d", obj.Data(), obj.ResourceVersion, err, want, resp.Header.Revision)
			}
			list, err := s.GetList(ctx, cfg.ResourcePrefix, storage.ListOptions{Recursive: true,
				Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "x"}), Field: fields.Everything(), GetAttrs: storagetest.PodAttrs}})
			if err != nil || len(list.Items) != 1 || !bytes.Equal(list.Items[0].Data(), want) {
				t.Errorf("GetList: got %v (%v), want one item %s", list, err, want)
			}
			ev := storagetest.NextEvent(t, w, false)
			if ev.Type != watch.Added || !bytes.Equal(ev.Object.Data(), want) {
				t.Errorf("Watch: got %s %v, want ADDED %s", ev.Type, ev.Object, want)
			}
		})
	}
}

// TestStoresWhatKubeWrites: a create stores kube's bytes for the media
// type; an update of a value stored in another media type rewrites it
// even when nothing changes, as kube's byte comparison does.
func TestStoresWhatKubeWrites(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := storagetest.PodConfig()
	s := protobufStore(t, etcd, cfg, storage.MediaTypeProtobuf)
	pod := storagetest.NewPod("ns", "p1", "node-a", nil)
	key := cfg.ResourcePrefix + "/ns/p1"
	out := &corev1.Pod{}
	if err := s.Create(ctx, key, pod.DeepCopy(), out, 0); err != nil {
		t.Fatal(err)
	}
	stored := func() []byte {
		resp, err := etcd.Client.Get(ctx, key)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("reading %s: %v", key, err)
		}
		return resp.Kvs[0].Value
	}
	if got, want := stored(), kubeValue(t, pod, storage.MediaTypeProtobuf); !bytes.Equal(got, want) {
		t.Fatalf("stored %q, want kube's %q", got, want)
	}

	if _, err := etcd.Client.Put(ctx, key, string(kubeValue(t, pod, storage.MediaTypeJSON))); err != nil {
		t.Fatal(err)
	}
	unchanged := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) { return in, nil, nil }
	if err := s.GuaranteedUpdate(ctx, key, out, false, nil, unchanged, nil); err != nil {
		t.Fatal(err)
	}
	if got := stored(); !bytes.HasPrefix(got, []byte("k8s\x00")) {
		t.Errorf("a JSON value updated without change stays %q, want it rewritten as protobuf", got)
	}
}
