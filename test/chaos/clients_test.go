package chaos

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// failover dials the replica a client prefers and, when it refuses (it
// was killed), the next one that answers, as a client behind a load
// balancer would move: a client sticks to the replica that answered last.
type failover struct {
	addresses []string
	mu        sync.Mutex
	current   int
	dialer    net.Dialer
}

func newFailover(addresses []string, prefer int) *failover {
	return &failover{addresses: addresses, current: prefer % len(addresses), dialer: net.Dialer{Timeout: time.Second}}
}

// DialContext ignores the address asked for: every request goes to a
// replica.
func (f *failover) DialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	f.mu.Lock()
	start := f.current
	f.mu.Unlock()
	var err error
	for k := range f.addresses {
		i := (start + k) % len(f.addresses)
		var conn net.Conn
		conn, err = f.dialer.DialContext(ctx, network, f.addresses[i])
		if err == nil {
			f.mu.Lock()
			f.current = i
			f.mu.Unlock()
			return conn, nil
		}
	}
	return nil, err
}

// baseURL is the URL clients use; failover decides where it leads.
const baseURL = "http://replicas"

// httpClient is a plain client over f; requests that are not watches are
// bounded by timeout (0: none).
func (f *failover) httpClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext:         f.DialContext,
		MaxIdleConnsPerHost: 4,
		DisableCompression:  true, // the watchers read events as sent
	}}
}

// restConfig is client-go's configuration over f.
func (f *failover) restConfig(timeout time.Duration) *rest.Config {
	return &rest.Config{Host: baseURL, Dial: f.DialContext, Timeout: timeout, QPS: -1, Burst: -1}
}

func (f *failover) clientset(timeout time.Duration) kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(f.restConfig(timeout))
}
