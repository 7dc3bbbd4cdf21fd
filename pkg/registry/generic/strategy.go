package generic

import (
	"context"
	"reflect"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Strategy is everything a resource's main endpoint needs to be specialised
// on: create and update. Delete-time behaviour is found by type assertion
// (rest.RESTGracefulDeleteStrategy, rest.GarbageCollectionDeleteStrategy).
type Strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

// BaseStrategy is the strategy of a resource that needs nothing special:
// embed it and override what differs. It allows unconditional updates (a
// PUT without resourceVersion), as most of kube's strategies do, and no
// create on update.
type BaseStrategy struct {
	Namespaced bool
}

func (s BaseStrategy) NamespaceScoped() bool                                          { return s.Namespaced }
func (BaseStrategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (BaseStrategy) Validate(context.Context, runtime.Object) field.ErrorList         { return nil }
func (BaseStrategy) WarningsOnCreate(context.Context, runtime.Object) []string        { return nil }
func (BaseStrategy) Canonicalize(runtime.Object)                                      {}
func (BaseStrategy) AllowCreateOnUpdate() bool                                        { return false }
func (BaseStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
func (BaseStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}
func (BaseStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (BaseStrategy) AllowUnconditionalUpdate() bool { return true }

// The helpers below work on any kind shaped like kube's (TypeMeta,
// ObjectMeta, then Spec and/or Status fields), so each strategy states its
// rules in a line or two.

// ResetStatus sets obj's Status to its zero value (create ignores a status
// sent by the client).
func ResetStatus(obj runtime.Object) {
	if f := field0(obj, "Status"); f.IsValid() {
		f.Set(reflect.Zero(f.Type()))
	}
}

// KeepStatus copies old's Status into obj: the main endpoint cannot change
// status.
func KeepStatus(obj, old runtime.Object) {
	if f := field0(obj, "Status"); f.IsValid() {
		f.Set(field0(old, "Status"))
	}
}

// KeepAllButStatus copies every field of old except metadata and Status
// into obj: the /status endpoint changes only status.
func KeepAllButStatus(obj, old runtime.Object) {
	nv, ov := reflect.ValueOf(obj).Elem(), reflect.ValueOf(old).Elem()
	for i := 0; i < nv.NumField(); i++ {
		switch nv.Type().Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		nv.Field(i).Set(ov.Field(i))
	}
}

// PrepareStatusUpdate is what most of kube's /status endpoints do before
// an update: obj keeps everything of old but its status
// (KeepAllButStatus), and the metadata a status writer may not change
// (metav1.ResetObjectMetaForStatus: labels, annotations, finalizers,
// owners).
func PrepareStatusUpdate(obj, old runtime.Object) {
	KeepAllButStatus(obj, old)
	metav1.ResetObjectMetaForStatus(mustAccessor(obj), mustAccessor(old))
}

// KeepLabels copies old's metadata.labels into obj: an endpoint that
// may not change them (deployments/status).
func KeepLabels(obj, old runtime.Object) {
	mustAccessor(obj).SetLabels(mustAccessor(old).GetLabels())
}

// SpecChanged reports whether obj's Spec differs from old's (semantic
// equality: 1 and 1.0 of a quantity are the same).
func SpecChanged(obj, old runtime.Object) bool {
	n, o := field0(obj, "Spec"), field0(old, "Spec")
	if !n.IsValid() || !o.IsValid() {
		return false
	}
	return !apiequality.Semantic.DeepEqual(n.Interface(), o.Interface())
}

// StartGeneration gives a new object generation 1: kube counts the
// changes of a spec from there (PrepareForCreate).
func StartGeneration(obj runtime.Object) {
	mustAccessor(obj).SetGeneration(1)
}

// BumpGeneration gives obj the generation after old's: its spec (or what
// else the kind counts) changed (PrepareForUpdate).
func BumpGeneration(obj, old runtime.Object) {
	mustAccessor(obj).SetGeneration(mustAccessor(old).GetGeneration() + 1)
}

// BumpGenerationOnSpecChange is kube's rule for kinds with a spec: the
// generation goes up when the spec changes (SpecChanged), and only then.
func BumpGenerationOnSpecChange(obj, old runtime.Object) {
	if SpecChanged(obj, old) {
		BumpGeneration(obj, old)
	}
}

// field0 returns the named top-level field of obj, or an invalid Value.
func field0(obj runtime.Object, name string) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName(name)
}
