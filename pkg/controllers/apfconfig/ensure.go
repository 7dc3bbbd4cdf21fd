package apfconfig

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
)

// object is a FlowSchema or a PriorityLevelConfiguration.
type object interface {
	runtime.Object
	metav1.Object
}

// configKind is one kind of the configuration: its storage, kube's
// objects of that kind, and where their spec is.
type configKind[T object] struct {
	storage   Storage
	writer    *fieldmanager.Writer
	mandatory []T
	suggested []T
	// spec returns a pointer to obj's spec.
	spec func(obj T) any
}

func newConfigKind[T object](s Storage, kind schema.GroupVersionKind, mandatory, suggested []T, spec func(T) any) *configKind[T] {
	return &configKind[T]{storage: s, writer: fieldmanager.NewWriter(s, kind, "", producerManager), mandatory: mandatory, suggested: suggested, spec: spec}
}

func flowSchemaSpec(fs *flowcontrolv1.FlowSchema) any { return &fs.Spec }

func priorityLevelSpec(pl *flowcontrolv1.PriorityLevelConfiguration) any { return &pl.Spec }

// ensure creates the missing objects of the mandatory or the suggested
// set and revises those kube keeps up to date. The objects of a set do
// not depend on each other: they are ensured concurrently, which on a
// fresh cluster makes the start wait for one round of reads and writes
// to etcd rather than one per object.
func (k *configKind[T]) ensure(ctx context.Context, mandatory bool) error {
	set := k.suggested
	if mandatory {
		set = k.mandatory
	}
	errs := make([]error, len(set))
	var wg sync.WaitGroup
	for i, boot := range set {
		wg.Go(func() { errs[i] = k.ensureOne(ctx, boot, mandatory) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (k *configKind[T]) ensureOne(ctx context.Context, boot T, mandatory bool) error {
	for {
		obj, err := k.storage.Get(ctx, boot.GetName(), &metav1.GetOptions{})
		if err == nil {
			return k.revise(ctx, obj.(T), boot, mandatory)
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("getting %s: %w", boot.GetName(), err)
		}
		_, err = k.writer.Create(ctx, boot.DeepCopyObject())
		if !apierrors.IsAlreadyExists(err) {
			return err // created, or failed
		}
		// Created meanwhile by someone else: look again.
	}
}

// revise updates current when kube keeps it up to date (always for a
// mandatory object; for a suggested one, while its autoupdate-spec
// annotation says so, or it was never changed) and its spec differs, or
// when its annotation does not say what is done.
func (k *configKind[T]) revise(ctx context.Context, current, boot T, mandatory bool) error {
	autoUpdate := mandatory || autoUpdateSpec(current)
	value, ok := current.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]
	parsed, err := strconv.ParseBool(value)
	fixAnnotation := !ok || err != nil || parsed != autoUpdate
	fixSpec := autoUpdate && !k.specEqualish(boot, current)
	if !fixAnnotation && !fixSpec {
		return nil
	}
	revised := current.DeepCopyObject().(T)
	if fixSpec {
		setSpec(k.spec(revised), k.spec(boot))
	}
	if fixAnnotation {
		annotations := revised.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[flowcontrolv1.AutoUpdateAnnotationKey] = strconv.FormatBool(autoUpdate)
		revised.SetAnnotations(annotations)
	}
	_, err = k.writer.Update(ctx, revised)
	if apierrors.IsConflict(err) {
		return nil // changed meanwhile: the next round looks again
	}
	return err
}

// autoUpdateSpec: the annotation, when it is a boolean; else whether the
// object was never changed since it was created.
func autoUpdateSpec(obj metav1.Object) bool {
	if v, err := strconv.ParseBool(obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err == nil {
		return v
	}
	return obj.GetGeneration() == 1
}

// specEqualish compares current's spec with kube's, defaulted; the
// exempt level's exempt settings are the administrator's to change.
func (k *configKind[T]) specEqualish(boot, current T) bool {
	want := boot.DeepCopyObject().(T)
	fieldmanager.Defaulter(k.storage).Default(want)
	if pl, ok := any(want).(*flowcontrolv1.PriorityLevelConfiguration); ok && pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
		have := any(current).(*flowcontrolv1.PriorityLevelConfiguration)
		if have.Spec.Exempt == nil {
			return false
		}
		pl.Spec.Exempt.NominalConcurrencyShares = have.Spec.Exempt.NominalConcurrencyShares
		pl.Spec.Exempt.LendablePercent = have.Spec.Exempt.LendablePercent
	}
	return apiequality.Semantic.DeepEqual(k.spec(want), k.spec(current))
}

// setSpec copies the spec from points at into the one into points at.
func setSpec(into, from any) {
	switch into := into.(type) {
	case *flowcontrolv1.FlowSchemaSpec:
		*into = *from.(*flowcontrolv1.FlowSchemaSpec).DeepCopy()
	case *flowcontrolv1.PriorityLevelConfigurationSpec:
		*into = *from.(*flowcontrolv1.PriorityLevelConfigurationSpec).DeepCopy()
	}
}

// removeUnwanted deletes the objects kube once created (their annotation
// says it keeps them up to date) that it no longer suggests.
func (k *configKind[T]) removeUnwanted(ctx context.Context) error {
	wanted := map[string]bool{}
	for _, b := range append(append([]T(nil), k.mandatory...), k.suggested...) {
		wanted[b.GetName()] = true
	}
	items, err := list[T](ctx, k.storage)
	if err != nil {
		return err
	}
	for _, m := range items {
		if wanted[m.GetName()] {
			continue
		}
		if v, err := strconv.ParseBool(m.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err != nil || !v {
			continue
		}
		if _, _, err := k.storage.Delete(ctx, m.GetName(), nil, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s: %w", m.GetName(), err)
		}
	}
	return nil
}

// list returns every object of s, decoded.
func list[T object](ctx context.Context, s Storage) ([]T, error) {
	res, err := s.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(res.Items))
	for _, item := range res.Items {
		obj := s.New().(T)
		if err := item.Decode(obj); err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}
