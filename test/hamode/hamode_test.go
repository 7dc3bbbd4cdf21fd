package hamode

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

const namespace = metav1.NamespaceDefault

// TestEmbeddedHA runs three servers whose embedded etcds form one
// cluster, then takes it through what an operator meets: a write on any
// server is read and watched on all; the loss of a member (its server
// killed) leaves the other two serving writes and reads; the member
// restarted from its data dir catches up; a member lost for good is
// removed and a new server joins in its place; a server whose data was
// wiped joins again under its old name (the leftover member replaced).
func TestEmbeddedHA(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s0 := newServer(t, root, "s0", nil)
	began := time.Now()
	c0 := s0.start(t, "--embedded-etcd-cluster-init")
	s1, s2 := newServer(t, root, "s1", s0), newServer(t, root, "s2", s0)
	join := "--embedded-etcd-join=" + s0.peerURL
	c1 := s1.start(t, join)
	c2 := s2.start(t, join)
	t.Logf("three members formed a cluster and serve in %v", time.Since(began))
	servers, clients := []*server{s0, s1, s2}, []kubernetes.Interface{c0, c1, c2}
	checkMembers(t, s0, "s0", "s1", "s2")

	if !t.Run("write on any, read and watched on all", func(t *testing.T) {
		writeReadWatch(t, clients, "a")
	}) {
		return
	}

	// The leader is the member whose loss costs the most: an election.
	lost := slices.IndexFunc(servers, func(s *server) bool { return s.isLeader(t) })
	if lost < 0 {
		t.Fatal("no member is the etcd leader")
	}
	if !t.Run("the loss of one member leaves two serving", func(t *testing.T) {
		t.Logf("killing %s, whose member is the leader", servers[lost].name)
		servers[lost].kill(t)
		var live []kubernetes.Interface
		for i, c := range clients {
			if i != lost {
				live = append(live, c)
			}
		}
		writeReadWatch(t, live, "b")
	}) {
		return
	}

	if !t.Run("a member restarted catches up", func(t *testing.T) {
		mode := join
		if lost == 0 {
			mode = "--embedded-etcd-cluster-init"
		}
		clients[lost] = servers[lost].start(t, mode)
		for i := range 2 {
			get(t, clients[lost], fmt.Sprintf("b-%d", i))
		}
		checkMembers(t, s1, "s0", "s1", "s2")
		writeReadWatch(t, clients, "c")
	}) {
		return
	}

	// s2 is lost for good: removed, and s3 joins in its place (through
	// s1's peer URL: any member will do).
	s3 := newServer(t, root, "s3", s0)
	if !t.Run("a member removed and another joining in its place", func(t *testing.T) {
		s2.kill(t)
		if out := s0.etcdctl(t, "member", "remove", "s2"); !strings.Contains(out, "removed member s2") {
			t.Fatalf("member remove: %s", out)
		}
		c3 := s3.start(t, "--embedded-etcd-join="+s1.peerURL)
		checkMembers(t, s0, "s0", "s1", "s3")
		clients = []kubernetes.Interface{c0, c1, c3}
		get(t, c3, "c-0")
		writeReadWatch(t, clients, "d")
	}) {
		return
	}

	t.Run("a member whose data was lost joins again under its name", func(t *testing.T) {
		s3.kill(t)
		if err := os.RemoveAll(filepath.Join(s3.dir, "etcd")); err != nil {
			t.Fatal(err)
		}
		clients[2] = s3.start(t, "--embedded-etcd-join="+s0.peerURL)
		checkMembers(t, s0, "s0", "s1", "s3")
		get(t, clients[2], "d-0")
		writeReadWatch(t, clients, "e")
	})
}

// TestJoinRefusesDataOfAnotherCluster starts a server with
// --embedded-etcd-join and a data dir holding a member of another cluster:
// it exits with a message that says so, and the data dir is unchanged.
func TestJoinRefusesDataOfAnotherCluster(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a := newServer(t, root, "a", nil)
	a.start(t, "--embedded-etcd-cluster-init")
	// b has the same CA (its TLS is fine), and a cluster of its own.
	b := newServer(t, root, "b", a)
	b.start(t, "--embedded-etcd-cluster-init")
	b.stop()
	before := hashDir(t, filepath.Join(b.dir, "etcd"))

	err, stderr := b.run(t, "--embedded-etcd-join="+a.peerURL)
	if err == nil {
		t.Fatalf("want the server to refuse to start; it ran and exited cleanly\n%s", stderr)
	}
	for _, want := range []string{"another cluster", "nothing was changed"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("want a message saying %q, got:\n%s", want, stderr)
		}
	}
	if after := hashDir(t, filepath.Join(b.dir, "etcd")); after != before {
		t.Errorf("the data dir changed:\nbefore %s\nafter  %s", before, after)
	}
	checkMembers(t, a, "a")

	// Started without the cluster flags, as a server alone, b refuses too.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--data-dir", b.dir, "--secure-port", strconv.Itoa(b.securePort)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `holds member "b" of an embedded etcd cluster`) {
		t.Errorf("started alone on a member's data: want a refusal naming the member, got %v:\n%s", err, out)
	}
	if after := hashDir(t, filepath.Join(b.dir, "etcd")); after != before {
		t.Errorf("the data dir changed:\nbefore %s\nafter  %s", before, after)
	}
}

// writeReadWatch creates a ConfigMap PREFIX-i through each client while
// every client watches, and checks each is read through every client and
// that every watcher saw the creations in one order.
func writeReadWatch(t *testing.T, clients []kubernetes.Interface, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var watchers []watch.Interface
	for i, c := range clients {
		var w watch.Interface
		retry(t, fmt.Sprintf("watching through client %d", i), func(ctx context.Context) error {
			list, err := c.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			w, err = c.CoreV1().ConfigMaps(namespace).Watch(context.WithoutCancel(ctx), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			return err
		})
		defer w.Stop()
		watchers = append(watchers, w)
	}
	var names []string
	for i, c := range clients {
		name := fmt.Sprintf("%s-%d", prefix, i)
		names = append(names, name)
		// Right after a member is lost the cluster may be electing a
		// leader: the write is tried again (create is idempotent here:
		// AlreadyExists means an earlier try was applied).
		retry(t, "creating "+name, func(ctx context.Context) error {
			_, err := c.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			if err != nil && !strings.Contains(err.Error(), "already exists") {
				return err
			}
			return nil
		})
	}
	for _, c := range clients {
		for _, name := range names {
			get(t, c, name)
		}
	}
	var first []string
	for i, w := range watchers {
		seen := watched(ctx, t, w, prefix, len(names))
		if first == nil {
			first = seen
		}
		if !slices.Equal(seen, first) {
			t.Errorf("watcher %d saw %v, watcher 0 %v", i, seen, first)
		}
		sorted := slices.Clone(seen)
		slices.Sort(sorted)
		if !slices.Equal(sorted, names) {
			t.Errorf("watcher %d saw %v, want the creations of %v", i, seen, names)
		}
	}
}

// watched returns the names of the first n ConfigMaps with prefix added,
// in the order w delivers them.
func watched(ctx context.Context, t *testing.T, w watch.Interface, prefix string, n int) []string {
	t.Helper()
	var seen []string
	for len(seen) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended after %v", seen)
			}
			cm, isCM := ev.Object.(*corev1.ConfigMap)
			if ev.Type == watch.Added && isCM && strings.HasPrefix(cm.Name, prefix+"-") {
				seen = append(seen, cm.Name)
			}
		case <-ctx.Done():
			t.Fatalf("watched %v, want %d creations", seen, n)
		}
	}
	return seen
}

func get(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	retry(t, "getting "+name, func(ctx context.Context) error {
		_, err := c.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	})
}

// checkMembers checks, through `miniapiserver etcd member list`, that the
// cluster's members are the voters names.
func checkMembers(t *testing.T, s *server, names ...string) {
	t.Helper()
	out := s.etcdctl(t, "member", "list")
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) < 3 || fields[2] != "voter" {
			t.Fatalf("member list: want voters only, got:\n%s", out)
		}
		got = append(got, fields[0])
	}
	slices.Sort(got)
	if !slices.Equal(got, names) {
		t.Fatalf("members %v, want %v:\n%s", got, names, out)
	}
}

// hashDir is a digest of every file's path and content under dir.
func hashDir(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
