package operations

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// quota is the embedded etcd's space quota in these tests: a few updates
// of a 900 KiB ConfigMap use it up.
const quota = 8 << 20

// TestSpaceQuotaExceeded: once etcd's space quota is used up, a write gets
// kube-apiserver's Status (500, etcd's words), deletes still pass, and
// /readyz?verbose shows the alarm; after an operator compacts, defragments
// and disarms the alarm, writes pass and the server is ready again.
func TestSpaceQuotaExceeded(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, func(o *app.Options) {
		o.EtcdQuotaBackendBytes = quota
		o.EtcdDefragInterval = 0 // no automatic recovery here
	})
	ctx := context.Background()
	cms := kubernetes.NewForConfigOrDie(srv.ClientConfig).CoreV1().ConfigMaps(srv.CreateNamespace(t))
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "small"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := fillUntilRefused(ctx, t, cms)
	// As kube-apiserver v1.37.2 answers (checked against it with a 16 MiB
	// quota): 500, no reason, etcd's message.
	var status *apierrors.StatusError
	if !errors.As(err, &status) || status.ErrStatus.Code != http.StatusInternalServerError || status.ErrStatus.Reason != "" ||
		status.ErrStatus.Message != "etcdserver: mvcc: database space exceeded" {
		t.Fatalf("a write past the quota: %#v", err)
	}
	if code, body := get(t, srv, "/readyz?verbose"); code != http.StatusInternalServerError || !strings.Contains(body, "[-]etcd-alarms failed") {
		t.Errorf("/readyz?verbose: %d\n%s", code, body)
	}
	if err := cms.Delete(ctx, "small", metav1.DeleteOptions{}); err != nil {
		t.Errorf("a delete past the quota: %v", err)
	}

	// What an operator does: compact, defragment, disarm.
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Server.EtcdURL}, TLS: srv.Server.EtcdTLS, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	st, err := etcd.Status(ctx, srv.Server.EtcdURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.Compact(ctx, st.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.Defragment(ctx, srv.Server.EtcdURL); err != nil {
		t.Fatal(err)
	}
	alarms, err := etcd.AlarmList(ctx)
	if err != nil || len(alarms.Alarms) == 0 {
		t.Fatalf("alarms: %v %v", alarms, err)
	}
	for _, a := range alarms.Alarms {
		if _, err := etcd.AlarmDisarm(ctx, (*clientv3.AlarmMember)(a)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a write after the recovery: %v", err)
	}
	if code, body := get(t, srv, "/readyz?verbose"); code != http.StatusOK {
		t.Errorf("/readyz after the recovery: %d\n%s", code, body)
	}
}

// TestSpaceQuotaRecoveredAutomatically: with --etcd-defrag-interval, the
// server recovers from NOSPACE by itself (compaction, defragmentation,
// disarm): writes pass again, /readyz too, and apiserver_storage_size_bytes
// shows a database back under its quota.
func TestSpaceQuotaRecoveredAutomatically(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, func(o *app.Options) {
		o.EtcdQuotaBackendBytes = quota
		o.EtcdDefragInterval = 200 * time.Millisecond
	})
	ctx := context.Background()
	cms := kubernetes.NewForConfigOrDie(srv.ClientConfig).CoreV1().ConfigMaps(srv.CreateNamespace(t))
	if err := fillUntilRefused(ctx, t, cms); !strings.Contains(err.Error(), "database space exceeded") {
		t.Fatalf("a write past the quota: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes still refused a minute after the quota was reached: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := get(t, srv, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the recovery: %d %s", code, body)
	}
	_, metrics := get(t, srv, "/metrics")
	if !strings.Contains(metrics, `apiserver_storage_size_bytes{storage_cluster_id="etcd-`) {
		t.Errorf("no apiserver_storage_size_bytes in /metrics")
	}
}

// fillUntilRefused rewrites a 900 KiB ConfigMap until etcd's history
// outgrows the quota, and returns the error of the write refused.
func fillUntilRefused(ctx context.Context, t *testing.T, cms typedcorev1.ConfigMapInterface) error {
	t.Helper()
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 * quota / (900 << 10) {
		cm.Data = map[string]string{"v": strings.Repeat(string(rune('a'+i%26)), 900<<10)}
		updated, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		cm = updated
	}
	t.Fatal("the quota was never reached")
	return nil
}

// get sends a GET as the administrator and returns the code and body.
func get(t *testing.T, srv *testserver.TestServer, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.HTTPClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
