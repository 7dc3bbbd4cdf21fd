package wire

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkCreateConfigMap creates ConfigMaps of 1 KiB with a label (the
// load tool's) through HTTP/2 over TLS, 16 at a time, on the shared
// server with its embedded etcd: the whole write path in one process, for
// a CPU profile (-cpuprofile; the client's share is visible apart).
func BenchmarkCreateConfigMap(b *testing.B) {
	ns := namespace(b)
	c := rawClient(b)
	url := srv.URL + "/api/v1/namespaces/" + ns + "/configmaps"
	payload := strings.Repeat("x", 1024)
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench-%d","labels":{"bucket":"%d"}},"data":{"data":%q}}`,
				i, i%100, payload)
			req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated || !bytes.Contains(data, []byte(`"bench-`)) {
				b.Fatalf("create: %d %s", resp.StatusCode, data)
			}
		}
	})
}
