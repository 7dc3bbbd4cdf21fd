package watchcache

import (
	"context"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// TestHistoryBytes: with --watch-cache-history-bytes, a watch resuming
// from before the changes the history still holds gets 410 Expired in
// the stream (as past the history's event count, or a compaction), while
// a watch from a recent resourceVersion gets every change after it.
func TestHistoryBytes(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	// Room for about eight of the ConfigMaps below in the history.
	srv := testserver.Start(t, testserver.WithEtcd(etcd.URL()), func(o *app.Options) { o.WatchCacheHistoryBytes = 16 << 10 })
	client := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	h := &httpClient{t: t, srv: srv, c: srv.HTTPClient(t)}
	ctx := context.Background()
	cms := client.CoreV1().ConfigMaps("default")
	dropRootCA(t, cms)
	payload := strings.Repeat("x", 2048)
	first, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"p": payload}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rvs := make([]string, 30)
	for i := range rvs {
		cm, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"p": payload, "i": strconv.Itoa(i)}}, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvs[i] = cm.ResourceVersion
	}
	if _, err := cms.List(ctx, metav1.ListOptions{}); err != nil { // the cache has every update
		t.Fatal(err)
	}

	expectExpiredWatch(t, h, first.ResourceVersion)

	w := h.watch("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + rvs[len(rvs)-3])
	defer w.close()
	w.expect("MODIFIED a", "MODIFIED a")
}
