package chaos

import (
	"context"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// informer is a client-go informer of one namespace's ConfigMaps over a
// failover: client-go's reflector resumes from its last resourceVersion
// on another replica when its watch breaks, and relists on 410.
type informer struct {
	namespace string
	store     cache.Store
	synced    cache.InformerSynced

	mu       sync.Mutex
	problems []string
}

func startInformer(ctx context.Context, namespace string, f *failover) (*informer, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(f.clientset(0), 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().ConfigMaps().Informer()
	i := &informer{namespace: namespace, store: inf.GetStore(), synced: inf.HasSynced}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, newObj any) {
		o, n := oldObj.(*corev1.ConfigMap), newObj.(*corev1.ConfigMap)
		if parseRV(n.ResourceVersion) < parseRV(o.ResourceVersion) {
			i.mu.Lock()
			i.problems = append(i.problems, fmt.Sprintf("%s/%s went from resourceVersion %s back to %s", n.Namespace, n.Name, o.ResourceVersion, n.ResourceVersion))
			i.mu.Unlock()
		}
	}})
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	return i, nil
}

// state is what the informer holds: namespace/name -> resourceVersion.
func (i *informer) state() map[string]int64 {
	s := map[string]int64{}
	for _, o := range i.store.List() {
		cm := o.(*corev1.ConfigMap)
		s[cm.Namespace+"/"+cm.Name] = parseRV(cm.ResourceVersion)
	}
	return s
}

// converged reports whether the informer holds want.
func (i *informer) converged(want map[string]int64) bool {
	return maps.Equal(i.state(), want)
}
