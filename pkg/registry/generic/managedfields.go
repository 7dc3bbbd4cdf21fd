package generic

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var (
	_ rest.Defaulter           = (*Store)(nil)
	_ rest.ResetFieldsStrategy = (*Store)(nil)
	_ rest.Defaulter           = (*StatusREST)(nil)
	_ rest.UnknownFieldPruner  = (*Store)(nil)
	_ rest.UnknownFieldPruner  = (*StatusREST)(nil)
	_ rest.StructureProvider   = (*Store)(nil)
	_ rest.StructureProvider   = (*StatusREST)(nil)
	_ rest.ResetFieldsStrategy = (*StatusREST)(nil)
)

// Default implements rest.Defaulter: the defaults of the kind, when its
// strategy has any.
func (e *Store) Default(obj runtime.Object) {
	if d, ok := e.createStrategy.(rest.Defaulter); ok {
		d.Default(obj)
	}
}

// Structure implements rest.StructureProvider.
func (e *Store) Structure() *rest.Structure { return e.structure }

// Structure implements rest.StructureProvider.
func (r *StatusREST) Structure() *rest.Structure { return r.store.structure }

// PruneUnknownFields implements rest.UnknownFieldPruner when the kind's
// strategy does (none to prune otherwise).
func (e *Store) PruneUnknownFields(obj runtime.Object) ([]string, error) {
	if p, ok := e.createStrategy.(rest.UnknownFieldPruner); ok {
		return p.PruneUnknownFields(obj)
	}
	return nil, nil
}

// GetResetFields implements rest.ResetFieldsStrategy: what the update
// strategy resets (nil when it resets nothing).
func (e *Store) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return e.mainUpdate.resetFields()
}

// resetFields is what the path's strategy resets, if it says.
func (p *updatePath) resetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	if r, ok := p.strategy.(rest.ResetFieldsStrategy); ok {
		return r.GetResetFields()
	}
	return nil
}

// Default implements rest.Defaulter.
func (r *StatusREST) Default(obj runtime.Object) { r.store.Default(obj) }

// PruneUnknownFields implements rest.UnknownFieldPruner.
func (r *StatusREST) PruneUnknownFields(obj runtime.Object) ([]string, error) {
	return r.store.PruneUnknownFields(obj)
}

// GetResetFields implements rest.ResetFieldsStrategy: what the status
// strategy resets.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.update.resetFields()
}

// ResetFields is a GetResetFields result: the fields at paths ("status",
// "metadata.labels": field names joined by dots) are reset in apiVersion.
func ResetFields(apiVersion string, paths ...string) map[fieldpath.APIVersion]*fieldpath.Set {
	set := fieldpath.NewSet()
	for _, p := range paths {
		var elems []interface{}
		for _, name := range strings.Split(p, ".") {
			elems = append(elems, name)
		}
		set.Insert(fieldpath.MakePathOrDie(elems...))
	}
	return map[fieldpath.APIVersion]*fieldpath.Set{fieldpath.APIVersion(apiVersion): set}
}

// timestampInsensitive is semantic equality where managed fields entries
// are compared without their time.
var timestampInsensitive = func() conversion.Equalities {
	eqs := equality.Semantic.Copy()
	if err := eqs.AddFunc(func(a, b metav1.ManagedFieldsEntry) bool {
		a.Time, b.Time = nil, nil
		return reflect.DeepEqual(a, b)
	}); err != nil {
		panic(fmt.Sprintf("generic: managed fields equality: %v", err))
	}
	return eqs
}()

// keepManagedFieldsTimes reverts the times of obj's managed fields to
// old's when nothing else changed, as kube's store does: an update that
// changes nothing (an apply of the same configuration, a PUT of the same
// object) is then written as a no-op, without a new resourceVersion.
func keepManagedFieldsTimes(obj, old runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	oldMeta, err := meta.Accessor(old)
	if err != nil {
		return
	}
	entries, oldEntries := m.GetManagedFields(), oldMeta.GetManagedFields()
	// An entry added or removed is a change (a manager takes ownership of
	// a field even when its value stays).
	if len(entries) == 0 || len(entries) != len(oldEntries) {
		return
	}
	changed := false
	for i := range entries {
		if !entries[i].Time.Equal(oldEntries[i].Time) {
			changed = true
			break
		}
	}
	// The entries first (cheap, and they differ in most real updates),
	// then the whole object.
	if !changed || !timestampInsensitive.DeepEqual(entries, oldEntries) || !timestampInsensitive.DeepEqual(obj, old) {
		return
	}
	for i := range entries {
		entries[i].Time = oldEntries[i].Time
	}
	m.SetManagedFields(entries)
}
