package operations

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestGracefulShutdown follows a shutdown with --shutdown-delay-duration
// as kube-apiserver's: /readyz fails at once (its "shutdown" check) while
// /livez passes and requests and watches are served on; then the server
// stops accepting requests, a watch ends with a clean end of its stream
// (no error: its client watches again elsewhere), and a create whose body
// was still arriving finishes with 201.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, func(o *app.Options) { o.ShutdownDelayDuration = 5 * time.Second })
	ctx := context.Background()
	ns := srv.CreateNamespace(t)
	cms := kubernetes.NewForConfigOrDie(srv.ClientConfig).CoreV1().ConfigMaps(ns)
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	inFlight := startSlowCreate(t, srv, ns)

	stopped := make(chan struct{})
	go func() { srv.Server.Stop(); close(stopped) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get(t, srv, "/readyz?verbose")
		if code == http.StatusInternalServerError && strings.Contains(body, "[-]shutdown failed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d:\n%s", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, body := get(t, srv, "/livez"); code != http.StatusOK {
		t.Errorf("/livez during the shutdown delay: %d %s", code, body)
	}
	// Served on during the delay: a write, and the watch sees it.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "during-the-delay"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a create during the shutdown delay: %v", err)
	}
	sawDuring := false
	timeout := time.After(time.Minute)
	for open := true; open; {
		select {
		case ev, ok := <-w.ResultChan():
			switch {
			case !ok:
				open = false
			case ev.Type == watch.Error:
				t.Fatalf("the watch ended with an error: %+v", ev.Object)
			case ev.Type == watch.Added && ev.Object.(*corev1.ConfigMap).Name == "during-the-delay":
				sawDuring = true
			}
		case <-timeout:
			t.Fatal("the watch did not end")
		}
	}
	if !sawDuring {
		t.Error("the watch ended before the create of the shutdown delay reached it")
	}
	// The server no longer accepts requests; the create in flight ends.
	if code, body := inFlight.finish(); code != http.StatusCreated {
		t.Errorf("the create in flight: %d %s", code, body)
	}
	select {
	case <-stopped:
	case <-time.After(time.Minute):
		t.Fatal("the server did not stop")
	}
}

// slowCreate is a create whose body has half arrived.
type slowCreate struct {
	rest   string
	pw     *io.PipeWriter
	answer chan answer
}

type answer struct {
	code int
	body string
}

func startSlowCreate(t *testing.T, srv *testserver.TestServer, ns string) *slowCreate {
	t.Helper()
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"in-flight"},"data":{"k":"v"}}`
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/namespaces/"+ns+"/configmaps", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	c := &slowCreate{rest: body[len(body)/2:], pw: pw, answer: make(chan answer, 1)}
	client := srv.HTTPClient(t)
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			c.answer <- answer{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		c.answer <- answer{code: resp.StatusCode, body: string(data)}
	}()
	if _, err := io.WriteString(pw, body[:len(body)/2]); err != nil {
		t.Fatal(err)
	}
	return c
}

// finish sends the rest of the body and returns the answer.
func (c *slowCreate) finish() (int, string) {
	io.WriteString(c.pw, c.rest)
	c.pw.Close()
	select {
	case a := <-c.answer:
		return a.code, a.body
	case <-time.After(time.Minute):
		return 0, "no answer"
	}
}
