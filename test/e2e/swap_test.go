package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// swapCluster is a kubeadm-shaped cluster whose API server the swap test
// replaces: etcd, one API server at a time on port (the one every
// component and node talks to), the components and the fake kubelet's
// nodes, joined by TLS bootstrap.
type swapCluster struct {
	cluster
	top     *testing.T // TestSwap's, which the processes live as long as
	dir     string
	mini    string // the miniapiserver binary
	pki     *kubeadmPKI
	etcdURL string
	etcd    *clientv3.Client
	port    int
	ns      string
	journal *journal
	// servers counts the API servers started, to name their logs.
	servers int
	// eras are the API servers that served on port, in turn.
	eras []era
	// kubeletCtx is the fake kubelet's lifetime.
	kubeletCtx context.Context
}

// TestSwap is the swap test (issue 22): a cluster set up as kubeadm sets
// it up runs workloads on kube-apiserver; miniapiserver then takes kube's
// place with the same command line, files and etcd; then a kube-apiserver
// runs beside it on the same etcd; then kube-apiserver alone again. At
// each step every object is still served, the components and nodes carry
// on, new writes appear, and watchers through either server see every
// write once, in order.
//
//	hack/swap.sh
func TestSwap(t *testing.T) {
	start := time.Now()
	s := startSwapCluster(t)
	t.Logf("kubeadm cluster up on kube-apiserver in %v", time.Since(start).Round(time.Millisecond))
	for _, step := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"kube-apiserver runs the workloads", s.workloadsOnKube},
		{"miniapiserver in kube-apiserver's place", s.swapToMini},
		{"kube-apiserver beside miniapiserver", s.sideBySide},
		{"kube-apiserver alone again", s.backToKube},
		{"component logs", s.componentLogs},
	} {
		stepStart := time.Now()
		ok := t.Run(step.name, step.run)
		t.Logf("%s: %v", step.name, time.Since(stepStart).Round(time.Millisecond))
		if !ok {
			break // each step starts from where the one before left the cluster
		}
	}
	if len(miniapiserverRefuses) > 0 {
		t.Logf("miniapiserver ran without %v, which it refuses", miniapiserverRefuses)
	}
	t.Logf("swap test: %v", time.Since(start).Round(time.Millisecond))
}

// era is when one API server served on swapCluster.port (to now when
// to is zero).
type era struct {
	server   string
	from, to time.Time
}

// kubeStopGrace is how long kube-apiserver is given to exit on SIGTERM
// before it is killed: with clients still watching it did not exit
// within 20 s in our runs (a kubelet kills it after its pod's grace
// period); killing it sooner keeps the swap short, and every write it
// acknowledged is in etcd.
const kubeStopGrace = 5 * time.Second

// startSwapCluster starts etcd and kube-apiserver, does kubeadm init's
// API part, starts the components and joins two nodes.
func startSwapCluster(t *testing.T) *swapCluster {
	if os.Getenv("E2E_BIN") == "" {
		t.Skip("E2E_BIN is not set: run hack/swap.sh, or set E2E_BIN=$(hack/e2e-components.sh)")
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("E2E_BIN"), "kube-apiserver")); err != nil {
		t.Skipf("no kube-apiserver in $E2E_BIN (%v): run hack/swap.sh, which builds it", err)
	}
	dir, err := os.MkdirTemp("", "e2e-swap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("E2E_KEEP") != "" {
			t.Logf("the logs (and data) of the run are kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	s := &swapCluster{top: t, dir: dir, ns: "swap", journal: &journal{}}
	if s.pki, err = newKubeadmPKI(filepath.Join(dir, "kubernetes")); err != nil {
		t.Fatal(err)
	}
	if s.port, err = freePort(); err != nil {
		t.Fatal(err)
	}
	s.mini = miniapiserverBinary(t, dir)
	s.etcdURL, s.etcd = startKubeadmEtcd(t, dir, s.mini, s.pki)
	s.server = s.startPrimary(t, "kube-apiserver")
	if err := s.pki.writeKubeconfigs(s.server.url); err != nil {
		t.Fatal(err)
	}
	if err := kubeadmInit(t.Context(), s.clientOf(t, "super-admin", ""), s.pki, s.server.url); err != nil {
		t.Fatal(err)
	}
	s.client = s.clientOf(t, "admin", "")
	s.eventually(t, 30*time.Second, "admin.conf's user (kubeadm:cluster-admins) bound to cluster-admin", "", func() (string, bool, error) {
		_, err := s.client.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{Limit: 1})
		return "", err == nil, err
	})
	s.components = startComponentsWith(t, dir, func(name string, port int) []flag {
		return kubeadmComponentFlags(s.pki, name, port)
	})
	ctx, cancel := context.WithCancel(context.Background())
	s.kubeletCtx = ctx
	s.kubelet, err = startKubelet(ctx, s.bootstrap(t), 2)
	t.Cleanup(func() {
		cancel()
		if s.kubelet != nil {
			s.kubelet.wait()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	s.waitNodesReady(t)
	s.checkClusterInfoSigned(t)
	return s
}

// startServer starts the API server kind on port, with kubeadm's flags.
func (s *swapCluster) startServer(t *testing.T, kind string, port int) *apiserver {
	s.servers++
	start := time.Now()
	server := startSwapServer(t, s.top, s.dir, kind, s.mini, fmt.Sprintf("%d-%s", s.servers, kind), s.pki, s.etcdURL, port)
	t.Logf("%s ready on port %d in %v", kind, port, time.Since(start).Round(time.Millisecond))
	return server
}

// startPrimary starts the API server kind on s.port, where the
// components and nodes connect.
func (s *swapCluster) startPrimary(t *testing.T, kind string) *apiserver {
	s.eras = append(s.eras, era{server: kind, from: time.Now()})
	return s.startServer(t, kind, s.port)
}

// stopServer stops server.
func stopServer(server *apiserver) {
	if server.name == "kube-apiserver" {
		server.proc.stopWithin(kubeStopGrace)
	}
	server.proc.stop()
}

// clientOf is a client with the kubeconfig dir/kubernetes/<user>.conf, of
// the server at url ("": the kubeconfig's).
func (s *swapCluster) clientOf(t *testing.T, user, url string) kubernetes.Interface {
	t.Helper()
	config, err := clientcmd.BuildConfigFromFlags(url, s.pki.path(user+".conf"))
	if err != nil {
		t.Fatal(err)
	}
	config.QPS, config.Burst = -1, -1
	config.WarningHandler = rest.NoWarnings{}
	return kubernetes.NewForConfigOrDie(config)
}

// bootstrap returns how a node gets its client: TLS bootstrap, with the
// bootstrap token, through the server on s.port.
func (s *swapCluster) bootstrap(t *testing.T) func(node string) (kubernetes.Interface, error) {
	return func(node string) (kubernetes.Interface, error) {
		start := time.Now()
		client, err := tlsBootstrap(t.Context(), s.server.url, s.pki.path("pki/ca.crt"), s.pki.bootstrapToken, node)
		if err == nil {
			t.Logf("node %s joined by TLS bootstrap through %s in %v", node, s.server.name, time.Since(start).Round(time.Millisecond))
		}
		return client, err
	}
}

// checkClusterInfoSigned: kube-controller-manager's bootstrapsigner signs
// kube-public/cluster-info with the bootstrap token, and anonymous users
// may read it (kubeadm join's discovery).
func (s *swapCluster) checkClusterInfoSigned(t *testing.T) {
	t.Helper()
	anonymous := kubernetes.NewForConfigOrDie(&rest.Config{Host: s.server.url, TLSClientConfig: rest.TLSClientConfig{CAFile: s.pki.path("pki/ca.crt")}})
	id, _, _ := strings.Cut(s.pki.bootstrapToken, ".")
	s.eventually(t, time.Minute, "cluster-info signed with the bootstrap token, read anonymously", "kube-public", func() (string, bool, error) {
		cm, err := anonymous.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(t.Context(), "cluster-info", metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		var keys []string
		for k := range cm.Data {
			keys = append(keys, k)
		}
		return fmt.Sprintf("keys %v", keys), cm.Data["jws-kubeconfig-"+id] != "", nil
	})
}

// workloadsOnKube: on kube-apiserver, a Deployment, its Service, a Job and
// a Secret (encrypted in etcd), and journalled writes watched.
func (s *swapCluster) workloadsOnKube(t *testing.T) {
	if _, err := s.client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := s.createDeployment(t, s.ns, "web", 3)
	if _, err := s.client.CoreV1().Services(s.ns).Create(t.Context(), serviceObject("web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitServiceIPs(t, "web", podIPs(pods))
	s.runJob(t, "count-1", 3)
	s.writeSecret(t, "db-1", "written through kube-apiserver")
	s.journalRound(t, s.server.name, s.client, "a")
}

// swapToMini: miniapiserver replaces kube-apiserver with the same command
// line on the same etcd. It serves every object as kube did, the
// components' informers resume (a scale-up, a new Job, a new node joining
// through miniapiserver), and new writes appear to watchers.
func (s *swapCluster) swapToMini(t *testing.T) {
	s.swap(t, "miniapiserver")
	s.readSecret(t, s.client, "db-1", "written through kube-apiserver")
	s.journalRound(t, s.server.name, s.client, "b")
	s.scale(t, s.client, 4)
	s.runJob(t, "count-2", 2)
	node2, err := s.bootstrap(t)("e2e-node-2")
	if err != nil {
		t.Fatalf("a node joining through miniapiserver: %v", err)
	}
	if err := s.kubelet.addNode(s.kubeletCtx, "e2e-node-2", node2); err != nil {
		t.Fatal(err)
	}
	s.waitNodesReady(t)
	s.writeSecret(t, "db-2", "written through miniapiserver")
}

// sideBySide: a kube-apiserver on another port beside miniapiserver, on
// the same etcd; journalled writes go through each in turn, and watchers
// through both see every one.
func (s *swapCluster) sideBySide(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	kube := s.startServer(t, "kube-apiserver", port)
	defer stopServer(kube)
	kubeClient := s.clientOf(t, "admin", kube.url)
	mini := s.server.name
	var recorders []*recorder
	for _, resource := range []string{"configmaps", "secrets"} {
		recorders = append(recorders,
			startRecorder(t, mini, s.client, s.ns, resource, s.journal),
			startRecorder(t, kube.name, kubeClient, s.ns, resource, s.journal))
	}
	for i := range 6 {
		via, client := mini, s.client
		if i%2 == 1 {
			via, client = kube.name, kubeClient
		}
		s.journalWrites(t, via, client, fmt.Sprintf("c%d", i), i)
	}
	for _, r := range recorders {
		r.check(t, s.journal)
		r.close()
	}
	s.readSecret(t, kubeClient, "db-2", "written through miniapiserver")
	s.scale(t, kubeClient, 2) // the components, on miniapiserver, act on it
}

// backToKube: kube-apiserver alone again in miniapiserver's place serves
// everything miniapiserver wrote, encrypted Secrets included, and the
// cluster carries on.
func (s *swapCluster) backToKube(t *testing.T) {
	s.swap(t, "kube-apiserver")
	s.readSecret(t, s.client, "db-2", "written through miniapiserver")
	for _, w := range s.journal.since(0) {
		if w.resource == "secrets" && w.via == "miniapiserver" && w.typ != watch.Deleted {
			s.checkEncrypted(t, w.name)
		}
	}
	s.journalRound(t, s.server.name, s.client, "d")
	s.scale(t, s.client, 3)
	s.runJob(t, "count-3", 2)
}

// componentLogs: the components ran throughout, and logged no resource
// not found and no list or watch forbidden while miniapiserver served
// them. (Lists and watches failing while no server was up are expected;
// what they logged while kube-apiserver served them is shown, not
// failed: that is kube's behaviour.)
func (s *swapCluster) componentLogs(t *testing.T) {
	for _, p := range s.components {
		if ended, how := p.exited(); ended {
			t.Errorf("%s exited during the test (%s); its log ends:\n%s", p.name, how, tail(p, 30))
		}
		bad := p.grep(func(l string) bool {
			return strings.Contains(l, "could not find the requested resource") || strings.Contains(l, "panic") ||
				(isBadLogLine(l) && strings.Contains(l, "forbidden"))
		})
		byServer := map[string][]string{}
		for _, l := range bad {
			server := s.serverAt(l)
			byServer[server] = append(byServer[server], l)
		}
		for server, lines := range byServer {
			shown := distinct(lines)
			report := t.Logf
			if server == "miniapiserver" {
				report = t.Errorf
			}
			report("%s logged %d lines of a resource not served or a list or watch forbidden while %s served it (%s):\n%s",
				p.name, len(lines), server, p.log, strings.Join(shown[:min(len(shown), 20)], "\n"))
		}
	}
}

// serverAt names the API server that served on s.port when the klog
// line was logged ("no server" between two, "unknown" for a line with no
// klog time).
func (s *swapCluster) serverAt(line string) string {
	if len(line) < 21 {
		return "unknown"
	}
	at, err := time.ParseInLocation("0102 15:04:05.000000", line[1:5]+line[5:21], time.Local)
	if err != nil {
		return "unknown"
	}
	now := time.Now()
	at = at.AddDate(now.Year(), 0, 0)
	for _, e := range s.eras {
		if !at.Before(e.from) && (e.to.IsZero() || at.Before(e.to)) {
			return e.server
		}
	}
	return "no server"
}

// swap stops the API server on s.port and starts kind there, with the same
// flags, and checks the new one serves exactly what the old one did.
func (s *swapCluster) swap(t *testing.T, kind string) {
	t.Helper()
	rv, before := s.snapshot(t, "")
	stop := time.Now()
	stopServer(s.server)
	s.eras[len(s.eras)-1].to = time.Now()
	s.server = s.startPrimary(t, kind)
	t.Logf("API server down for %v", time.Since(stop).Round(time.Millisecond))
	_, after := s.snapshot(t, rv)
	compareSnapshots(t, before, after)
}

// scale scales deployment web through client and waits for the rollout.
func (s *swapCluster) scale(t *testing.T, client kubernetes.Interface, replicas int32) {
	t.Helper()
	scale, err := client.AppsV1().Deployments(s.ns).GetScale(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = replicas
	if _, err := client.AppsV1().Deployments(s.ns).UpdateScale(t.Context(), "web", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("scaling deployment web to %d: %v", replicas, err)
	}
	pods := s.waitDeployment(t, s.ns, "web", replicas)
	s.waitServiceIPs(t, "web", podIPs(pods))
}

// runJob runs a Job of n pods to completion.
func (s *swapCluster) runJob(t *testing.T, name string, n int32) {
	t.Helper()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: jobSpec(name, n)}
	if _, err := s.client.BatchV1().Jobs(s.ns).Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating job %s: %v", name, err)
	}
	s.eventually(t, waitLong, fmt.Sprintf("job %s Complete with %d pods succeeded", name, n), s.ns, func() (string, bool, error) {
		j, err := s.client.BatchV1().Jobs(s.ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		complete := jobCondition(j, batchv1.JobComplete)
		return fmt.Sprintf("active %d succeeded %d failed %d, Complete=%s", j.Status.Active, j.Status.Succeeded, j.Status.Failed, complete),
			j.Status.Succeeded == n && complete == corev1.ConditionTrue, nil
	})
}

// journalRound watches the journalled objects through client and writes
// some through it: new ones named after round, and a change and a delete
// of the previous round's when there was one.
func (s *swapCluster) journalRound(t *testing.T, via string, client kubernetes.Interface, round string) {
	t.Helper()
	recorders := []*recorder{
		startRecorder(t, via, client, s.ns, "configmaps", s.journal),
		startRecorder(t, via, client, s.ns, "secrets", s.journal),
	}
	s.journalWrites(t, via, client, round, s.journal.len())
	for _, r := range recorders {
		r.check(t, s.journal)
		r.close()
	}
}

// journalWrites creates a ConfigMap and a Secret named after round, and,
// when the journal holds writes from before, changes and deletes objects
// it created then (those of the last two creations).
func (s *swapCluster) journalWrites(t *testing.T, via string, client kubernetes.Interface, round string, previous int) {
	t.Helper()
	var created []write
	for _, w := range s.journal.since(0) {
		if w.typ == watch.Added {
			created = append(created, w)
		}
	}
	j := s.journal
	j.apply(t, via, client, s.ns, "configmaps", watch.Added, "cm-"+round)
	j.apply(t, via, client, s.ns, "secrets", watch.Added, "s-"+round)
	if previous == 0 || len(created) < 2 {
		return
	}
	last := created[len(created)-2:] // the last round's ConfigMap and Secret
	j.apply(t, via, client, s.ns, last[0].resource, watch.Modified, last[0].name)
	j.apply(t, via, client, s.ns, last[1].resource, watch.Modified, last[1].name)
	if len(created) >= 4 {
		older := created[len(created)-4] // the ConfigMap of the round before
		j.apply(t, via, client, s.ns, older.resource, watch.Deleted, older.name)
	}
}
