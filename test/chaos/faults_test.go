package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// fault is one step of the schedule.
type fault struct {
	name string
	run  func(ctx context.Context) error
}

// schedule is the faults TestChaos injects, in order.
func (s *suite) schedule() []fault {
	return []fault{
		{"kill -9 replica 0, restart it", s.killReplica(0)},
		{"kill the etcd leader, restart it", s.killLeader},
		{"compact", s.compact},
		{"kill -9 replica 1, restart it", s.killReplica(1)},
		{"stop two etcd members, start them", s.majorityOutage},
		{"defragment every member", s.defragment},
		{"kill -9 replica 2, restart it", s.killReplica(2)},
	}
}

func (s *suite) killReplica(i int) func(context.Context) error {
	return func(context.Context) error {
		r := s.cluster.replicas[i]
		r.kill()
		time.Sleep(time.Second)
		return r.start()
	}
}

// killLeader kills the etcd leader as a crash would, waits for a new one,
// and restarts the old member.
func (s *suite) killLeader(context.Context) error {
	ec := s.cluster.etcd
	l := ec.WaitLeader(time.Minute)
	if l < 0 {
		return errors.New("the etcd cluster has no leader")
	}
	if err := ec.Kill(l); err != nil {
		return err
	}
	if ec.WaitLeader(time.Minute) < 0 {
		return errors.New("no new etcd leader within a minute")
	}
	if err := ec.Restart(l); err != nil {
		return err
	}
	return ec.WaitReady(l)
}

// compact compacts etcd up to what the history has read (clients that
// resume from before get 410 and list again).
func (s *suite) compact(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err := s.etcd.Compact(ctx, s.history.compactTarget(), clientv3.WithCompactPhysical())
	return err
}

func (s *suite) defragment(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for i := range s.cluster.etcd.Size() {
		if _, err := s.etcd.Defragment(ctx, s.cluster.etcd.Endpoint(i)); err != nil {
			return fmt.Errorf("defragmenting member %d: %w", i, err)
		}
	}
	return nil
}

// majorityOutage kills the leader and one more member, checks how every
// replica answers while the cluster has no quorum, and restarts both.
func (s *suite) majorityOutage(ctx context.Context) error {
	ec := s.cluster.etcd
	l := ec.WaitLeader(time.Minute)
	if l < 0 {
		return errors.New("the etcd cluster has no leader")
	}
	other := (l + 1) % ec.Size()
	if err := errors.Join(ec.Kill(l), ec.Kill(other)); err != nil {
		return err
	}
	err := checkOutage(ctx, s.cluster.addresses(), s.namespaces[0])
	err = errors.Join(err, ec.Restart(l), ec.Restart(other))
	if err != nil {
		return err
	}
	return ec.WaitReady(l, other)
}

// outageBound is how long a replica may take to fail /readyz once etcd
// lost its quorum, and more than a write may take to fail: a few seconds
// past their own timeouts (the readiness check's 5 s, --request-timeout).
const outageBound = requestTimeout + 10*time.Second

// checkOutage checks, while etcd has no quorum, that every replica fails
// /readyz and answers a write with a 5xx and a Status, not a hang.
func checkOutage(ctx context.Context, addresses []string, namespace string) error {
	errs := make([]error, len(addresses))
	var wg sync.WaitGroup
	for i, a := range addresses {
		wg.Go(func() {
			if err := errors.Join(waitNotReady(ctx, a), writeFails(ctx, a, namespace)); err != nil {
				errs[i] = fmt.Errorf("replica %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func waitNotReady(ctx context.Context, address string) error {
	deadline := time.Now().Add(outageBound)
	for time.Now().Before(deadline) {
		if readyz(ctx, address) != nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("/readyz still passes %v after etcd lost its quorum", outageBound)
}

// writeFails creates a ConfigMap through the replica at address and
// expects a 5xx with a Status in time.
func writeFails(ctx context.Context, address, namespace string) error {
	ctx, cancel := context.WithTimeout(ctx, outageBound)
	defer cancel()
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"outage-"}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+address+"/api/v1/namespaces/"+namespace+"/configmaps", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("a write without etcd quorum got no answer in %v: %w", time.Since(start).Round(time.Millisecond), err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode < 500 {
		return fmt.Errorf("a write without etcd quorum: %s %s", resp.Status, data)
	}
	var st struct {
		Kind    string `json:"kind"`
		Status  string `json:"status"`
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(data, &st); err != nil || st.Kind != "Status" || st.Status != "Failure" || st.Code != resp.StatusCode || st.Message == "" {
		return fmt.Errorf("a write without etcd quorum: %s with a body that is not a Status: %s", resp.Status, data)
	}
	return nil
}
