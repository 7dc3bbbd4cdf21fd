package generic_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// TestSpecStrategies: both clear the status on create and keep the
// stored one on update; GenerationStrategy alone stamps the generation.
func TestSpecStrategies(t *testing.T) {
	ctx := context.Background()
	stored := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs", Generation: 4},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1)},
		Status:     appsv1.ReplicaSetStatus{Replicas: 1},
	}
	for _, tc := range []struct {
		name                     string
		strategy                 generic.Strategy
		wantCreated, wantUpdated int64
	}{
		{name: "spec", strategy: generic.SpecStrategy{}, wantCreated: 0, wantUpdated: 4},
		{name: "generation", strategy: generic.GenerationStrategy{}, wantCreated: 1, wantUpdated: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created := &appsv1.ReplicaSet{Status: appsv1.ReplicaSetStatus{Replicas: 3}}
			tc.strategy.PrepareForCreate(ctx, created)
			if created.Status.Replicas != 0 || created.Generation != tc.wantCreated {
				t.Errorf("created: status.replicas %d, generation %d; want 0, %d", created.Status.Replicas, created.Generation, tc.wantCreated)
			}
			updated := stored.DeepCopy()
			updated.Spec.Replicas = ptr.To[int32](2)
			updated.Status.Replicas = 7
			tc.strategy.PrepareForUpdate(ctx, updated, stored.DeepCopy())
			if updated.Status.Replicas != 1 || updated.Generation != tc.wantUpdated {
				t.Errorf("updated: status.replicas %d, generation %d; want 1, %d", updated.Status.Replicas, updated.Generation, tc.wantUpdated)
			}
		})
	}
}
