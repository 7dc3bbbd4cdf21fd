package watchcache

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// TestInformersSurviveEtcdRestart: a SharedInformerFactory over
// ConfigMaps (with and without client-go's WatchList) syncs, keeps going
// through an etcd restart under load, and ends with every change.
func TestInformersSurviveEtcdRestart(t *testing.T) {
	for _, watchList := range []bool{true, false} {
		t.Run(fmt.Sprintf("WatchListClient=%v", watchList), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			etcd := etcdtest.Start(t)
			srv := testserver.Start(t, testserver.WithEtcd(etcd.URL()))
			client := kubernetes.NewForConfigOrDie(srv.ClientConfig)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cms := client.CoreV1().ConfigMaps("default")
			for i := range 20 { // state before the informer starts
				mustCreate(ctx, t, cms, fmt.Sprintf("before-%d", i))
			}

			factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace("default"))
			informer := factory.Core().V1().ConfigMaps().Informer()
			stop := make(chan struct{})
			factory.Start(stop)
			defer func() { close(stop); factory.Shutdown() }()
			if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
				t.Fatal("informer did not sync")
			}

			// Writes go on while etcd stops and starts; each is retried
			// until the server takes it.
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 60 {
					name := fmt.Sprintf("during-%d", i)
					mustCreate(ctx, t, cms, name)
					mustUpdate(ctx, t, cms, fmt.Sprintf("before-%d", i%20), fmt.Sprint(i))
					time.Sleep(20 * time.Millisecond)
				}
			}()
			time.Sleep(300 * time.Millisecond)
			etcd.Stop()
			time.Sleep(500 * time.Millisecond)
			etcd.Restart()
			wg.Wait()

			// The informer converges on the server's final state.
			final, err := cms.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, cm := range final.Items {
				want[cm.Name] = cm.Data["v"]
			}
			deadline := time.Now().Add(90 * time.Second)
			for {
				got := map[string]string{}
				for _, obj := range informer.GetStore().List() {
					cm := obj.(*corev1.ConfigMap)
					got[cm.Name] = cm.Data["v"]
				}
				if fmt.Sprint(got) == fmt.Sprint(want) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("informer store never caught up:\n got %v\nwant %v", got, want)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

type configMaps interface {
	Create(ctx context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error)
	Update(ctx context.Context, cm *corev1.ConfigMap, opts metav1.UpdateOptions) (*corev1.ConfigMap, error)
}

// mustCreate creates a ConfigMap, retrying while the server cannot reach
// etcd; a create that succeeded before a failed answer shows as exists.
func mustCreate(ctx context.Context, t *testing.T, cms configMaps, name string) {
	for ctx.Err() == nil {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "0"}}, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("create %s: %v", name, ctx.Err())
}

func mustUpdate(ctx context.Context, t *testing.T, cms configMaps, name, value string) {
	for ctx.Err() == nil {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			cm.Data = map[string]string{"v": value}
			if _, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err == nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("update %s: %v", name, ctx.Err())
}
