package customresource

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// scaleAccessor reads and writes the replicas of objects of the storage
// version at the paths version v's scale subresource names: on the
// object converted to v when v is another version. A missing value reads
// as 0, as in kube.
func (r *resource) scaleAccessor(v *version) *generic.ScaleAccessor {
	scale := v.subresources.Scale
	return &generic.ScaleAccessor{
		Replicas: func(obj runtime.Object) (int32, int32, string, error) {
			u, err := r.at(v, obj)
			if err != nil {
				return 0, 0, "", err
			}
			spec, _, err := unstructured.NestedInt64(u.Object, splitPath(scale.SpecReplicasPath)...)
			if err != nil {
				return 0, 0, "", err
			}
			status, _, err := unstructured.NestedInt64(u.Object, splitPath(scale.StatusReplicasPath)...)
			if err != nil {
				return 0, 0, "", err
			}
			var selector string
			if p := scale.LabelSelectorPath; p != nil && *p != "" {
				if selector, _, err = unstructured.NestedString(u.Object, splitPath(*p)...); err != nil {
					return 0, 0, "", err
				}
			}
			return int32(spec), int32(status), selector, nil
		},
		SetReplicas: func(obj runtime.Object, replicas int32) {
			stored := obj.(*unstructured.Unstructured)
			u, err := r.at(v, stored)
			if err != nil {
				return // Replicas failed first: the update never gets here
			}
			_ = unstructured.SetNestedField(u.Object, int64(replicas), splitPath(scale.SpecReplicasPath)...)
			if u == stored {
				return
			}
			if back, err := r.Convert(u, r.storage.gvk); err == nil {
				stored.Object = back.(*unstructured.Unstructured).Object
			}
		},
		ReplicasPaths: r.replicasPaths(),
	}
}

// replicasPaths is where each version keeps its spec replicas, for the
// managed fields of a scale update (none for a version without scale).
func (r *resource) replicasPaths() managedfields.ResourcePathMappings {
	out := managedfields.ResourcePathMappings{}
	for _, v := range r.versions {
		gv := v.gvk.GroupVersion().String()
		if !v.hasScale() {
			out[gv] = nil
			continue
		}
		var path fieldpath.Path
		for _, elem := range splitPath(v.subresources.Scale.SpecReplicasPath) {
			e := elem
			path = append(path, fieldpath.PathElement{FieldName: &e})
		}
		out[gv] = path
	}
	return out
}
