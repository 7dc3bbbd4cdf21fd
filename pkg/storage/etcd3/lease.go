package etcd3

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultLeaseReuse is how long one etcd lease serves the keys created
// with the same TTL (kube's --lease-reuse-duration-seconds, 60). A lease
// per key (events: one per event) would load etcd; granting TTL+window
// and sharing it for window seconds keeps every key alive at least its
// TTL and at most window longer, as kube does.
const DefaultLeaseReuse = 60 * time.Second

type leaseManager struct {
	client *clientv3.Client
	now    func() time.Time
	window time.Duration // DefaultLeaseReuse, or WithLeaseReuse's

	mu     sync.Mutex
	leases map[int64]grantedLease // by requested TTL
}

type grantedLease struct {
	id      clientv3.LeaseID
	expires time.Time // when the lease stops being handed out
}

func newLeaseManager(client *clientv3.Client) *leaseManager {
	return &leaseManager{client: client, now: time.Now, window: DefaultLeaseReuse, leases: map[int64]grantedLease{}}
}

// get returns a lease that keeps a key for at least ttl seconds.
func (m *leaseManager) get(ctx context.Context, ttl int64) (clientv3.LeaseID, error) {
	now := m.now()
	m.mu.Lock()
	if l, ok := m.leases[ttl]; ok && now.Before(l.expires) {
		m.mu.Unlock()
		return l.id, nil
	}
	m.mu.Unlock()
	// Granting outside the lock: two racing grants cost one spare lease.
	resp, err := m.client.Grant(ctx, ttl+int64(m.window/time.Second))
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	m.leases[ttl] = grantedLease{id: resp.ID, expires: now.Add(m.window)}
	m.mu.Unlock()
	return resp.ID, nil
}

// remaining returns the seconds a lease has left.
func (m *leaseManager) remaining(ctx context.Context, id int64) (int64, error) {
	resp, err := m.client.TimeToLive(ctx, clientv3.LeaseID(id))
	if err != nil {
		return 0, err
	}
	return max(resp.TTL, 0), nil
}
