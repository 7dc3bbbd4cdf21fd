package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// Timings of the fake kubelet, a kubelet's defaults shortened: it renews
// its node's Lease every leaseRenew (kubelet: 10 s of a 40 s lease) and
// posts the node's status every statusUpdate (kubelet: 5 min when nothing
// changes); the node lifecycle controller's grace period is 50 s.
const (
	leaseDuration = 40
	leaseRenew    = 5 * time.Second
	statusUpdate  = 20 * time.Second
)

// kubelet is a fake kubelet for several nodes: it registers them Ready,
// keeps their Leases in kube-node-lease and their status fresh, and runs
// the pods bound to them: a pod becomes Running and Ready with a pod IP
// (a Job's pod Succeeded), and a pod being deleted is removed at once, as
// a kubelet does once its containers have stopped. No containers run.
type kubelet struct {
	queue workqueue.TypedRateLimitingInterface[podKey]

	nodesMu sync.RWMutex
	nodes   []string
	// clients call the API as each node: the admin, or the node's own
	// identity (system:node:NAME) once it has joined by TLS bootstrap.
	clients map[string]kubernetes.Interface
	// informers watch each node's pods, as a kubelet does
	// (spec.nodeName=<node>).
	informers map[string]cache.SharedIndexInformer

	mu  sync.Mutex
	ips map[types.UID]string // pod IPs given, by pod
	// next is each node's next pod IP, in 10.244.<node index>.0/24.
	next map[string]int

	wg sync.WaitGroup
}

// podKey names a pod on a node.
type podKey struct{ node, namespace, name string }

// startKubelet registers n nodes, e2e-node-0 onwards, each calling the
// API with the client clientFor returns for it, and runs them until ctx
// ends; the returned wait blocks until every goroutine it started has
// returned. More nodes may join later (addNode).
func startKubelet(ctx context.Context, clientFor func(node string) (kubernetes.Interface, error), n int) (*kubelet, error) {
	k := &kubelet{
		clients:   map[string]kubernetes.Interface{},
		informers: map[string]cache.SharedIndexInformer{},
		queue:     workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[podKey]()),
		ips:       map[types.UID]string{},
		next:      map[string]int{},
	}
	for i := range n {
		name := fmt.Sprintf("e2e-node-%d", i)
		client, err := clientFor(name)
		if err != nil {
			return nil, err
		}
		if err := k.addNode(ctx, name, client); err != nil {
			return nil, err
		}
	}
	k.wg.Add(3)
	go func() {
		defer k.wg.Done()
		<-ctx.Done()
		k.queue.ShutDown()
	}()
	for range 2 {
		go func() {
			defer k.wg.Done()
			for k.processNext(ctx) {
			}
		}()
	}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		k.heartbeat(ctx)
	}()
	return k, nil
}

// wait blocks until the kubelet has stopped (its ctx ended).
func (k *kubelet) wait() { k.wg.Wait() }

// addNode registers node, calling the API with client, and runs its pods
// once their informer has synced.
func (k *kubelet) addNode(ctx context.Context, node string, client kubernetes.Interface) error {
	k.nodesMu.Lock()
	k.nodes = append(k.nodes, node)
	k.clients[node] = client
	k.nodesMu.Unlock()
	if err := k.register(ctx, node); err != nil {
		return err
	}
	if err := k.renewLease(ctx, node); err != nil {
		return fmt.Errorf("fake kubelet: node %s's lease: %w", node, err)
	}
	inf := k.watchPods(ctx, node)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("fake kubelet: node %s's pod informer did not sync: %w", node, ctx.Err())
	}
	return nil
}

// nodeNames returns the nodes registered so far.
func (k *kubelet) nodeNames() []string {
	k.nodesMu.RLock()
	defer k.nodesMu.RUnlock()
	return slices.Clone(k.nodes)
}

// client is node's client.
func (k *kubelet) client(node string) kubernetes.Interface {
	k.nodesMu.RLock()
	defer k.nodesMu.RUnlock()
	return k.clients[node]
}

// register creates node name with its status, as kubelet registers a node.
func (k *kubelet) register(ctx context.Context, name string) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		}},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Conditions:  nodeConditions(time.Now()),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: k.nodeIP(name)},
				{Type: corev1.NodeHostName, Address: name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64",
				ContainerRuntimeVersion: "fake://1.0", OSImage: "e2e", KernelVersion: "6.0",
			},
		},
	}
	if _, err := k.client(name).CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("fake kubelet: registering node %s: %w", name, err)
	}
	return nil
}

// nodeConditions are a healthy node's, heard from at now.
func nodeConditions(now time.Time) []corev1.NodeCondition {
	t := metav1.NewTime(now)
	cond := func(kind corev1.NodeConditionType, status corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: kind, Status: status, Reason: reason, LastHeartbeatTime: t, LastTransitionTime: t}
	}
	return []corev1.NodeCondition{
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
		cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
	}
}

// heartbeat renews the nodes' Leases and refreshes their status until ctx
// ends. A failed renewal is retried at the next tick, as kubelet does.
func (k *kubelet) heartbeat(ctx context.Context) {
	renew := time.NewTicker(leaseRenew)
	defer renew.Stop()
	status := time.NewTicker(statusUpdate)
	defer status.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			for _, n := range k.nodeNames() {
				k.renewLease(ctx, n)
			}
		case <-status.C:
			for _, n := range k.nodeNames() {
				k.postStatus(ctx, n)
			}
		}
	}
}

// renewLease creates or renews node's Lease in kube-node-lease, owned by
// the Node as kubelet's is.
func (k *kubelet) renewLease(ctx context.Context, node string) error {
	leases := k.client(node).CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		n, err := k.client(node).CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: corev1.NamespaceNodeLease,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node, UID: n.UID}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To[int32](leaseDuration), RenewTime: &now},
		}
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// postStatus refreshes node's conditions.
func (k *kubelet) postStatus(ctx context.Context, node string) {
	n, err := k.client(node).CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return
	}
	n.Status.Conditions = nodeConditions(time.Now())
	k.client(node).CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
}

// watchPods starts an informer of the pods bound to node.
func (k *kubelet) watchPods(ctx context.Context, node string) cache.SharedIndexInformer {
	selector := fields.OneTermEqualSelector("spec.nodeName", node).String()
	lw := cache.NewFilteredListWatchFromClient(k.client(node).CoreV1().RESTClient(), "pods", metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.FieldSelector = selector })
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	enqueue := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			k.queue.Add(podKey{node, pod.Namespace, pod.Name})
		}
	}
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	k.nodesMu.Lock()
	k.informers[node] = inf
	k.nodesMu.Unlock()
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		inf.Run(ctx.Done())
	}()
	return inf
}

func (k *kubelet) processNext(ctx context.Context) bool {
	key, quit := k.queue.Get()
	if quit {
		return false
	}
	defer k.queue.Done(key)
	if err := k.syncPod(ctx, key); err != nil && ctx.Err() == nil {
		k.queue.AddRateLimited(key)
		return true
	}
	k.queue.Forget(key)
	return true
}

// syncPod moves one pod along: removed once being deleted, else Running
// and Ready (a Job's pod Succeeded).
func (k *kubelet) syncPod(ctx context.Context, key podKey) error {
	k.nodesMu.RLock()
	inf := k.informers[key.node]
	k.nodesMu.RUnlock()
	obj, exists, err := inf.GetStore().GetByKey(key.namespace + "/" + key.name)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	pods := k.client(key.node).CoreV1().Pods(pod.Namespace)
	if pod.DeletionTimestamp != nil {
		err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil // gone, or replaced by a pod of the same name
		}
		return err
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	_, isJobPod := pod.Labels["batch.kubernetes.io/job-name"]
	if !isJobPod && pod.Status.Phase == corev1.PodRunning && podReady(pod) {
		return nil
	}
	pod = pod.DeepCopy()
	k.setStatus(pod, isJobPod)
	_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// setStatus writes the status a kubelet would report for a pod that runs
// (or, done, has run to completion).
func (k *kubelet) setStatus(pod *corev1.Pod, done bool) {
	now := metav1.Now()
	ip := k.podIP(pod)
	ready := corev1.ConditionTrue
	phase := corev1.PodRunning
	if done {
		ready, phase = corev1.ConditionFalse, corev1.PodSucceeded
	}
	cond := func(kind corev1.PodConditionType, status corev1.ConditionStatus) corev1.PodCondition {
		c := corev1.PodCondition{Type: kind, Status: status, LastTransitionTime: now}
		if status == corev1.ConditionFalse {
			c.Reason = "PodCompleted"
		}
		return c
	}
	pod.Status.Phase = phase
	pod.Status.Conditions = []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, corev1.ConditionTrue),
		cond(corev1.PodInitialized, corev1.ConditionTrue),
		cond(corev1.PodReady, ready),
		cond(corev1.ContainersReady, ready),
		cond(corev1.PodScheduled, corev1.ConditionTrue),
	}
	pod.Status.HostIP = k.nodeIP(pod.Spec.NodeName)
	pod.Status.HostIPs = []corev1.HostIP{{IP: pod.Status.HostIP}}
	pod.Status.PodIP = ip
	pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	if pod.Status.StartTime == nil {
		pod.Status.StartTime = &now
	}
	pod.Status.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, containerStatus(pod, c, true, now))
	}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, containerStatus(pod, c, done, now))
	}
}

// containerStatus is c's status: running and ready, or exited 0.
func containerStatus(pod *corev1.Pod, c corev1.Container, exited bool, now metav1.Time) corev1.ContainerStatus {
	s := corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: c.Image,
		ContainerID: fmt.Sprintf("fake://%s-%s", pod.UID, c.Name),
		Ready:       !exited, Started: ptr.To(!exited),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
	}
	if exited {
		s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now, ContainerID: s.ContainerID}}
	}
	return s
}

// podIP gives pod an address in its node's 10.244.<node>.0/24, the same
// one every time.
func (k *kubelet) podIP(pod *corev1.Pod) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if ip, ok := k.ips[pod.UID]; ok {
		return ip
	}
	n := k.next[pod.Spec.NodeName]
	k.next[pod.Spec.NodeName] = n + 1
	ip := fmt.Sprintf("10.244.%d.%d", k.nodeIndex(pod.Spec.NodeName), n%250+2)
	k.ips[pod.UID] = ip
	return ip
}

func (k *kubelet) nodeIP(node string) string {
	return fmt.Sprintf("10.0.0.%d", k.nodeIndex(node)+10)
}

func (k *kubelet) nodeIndex(node string) int {
	for i, n := range k.nodeNames() {
		if n == node {
			return i
		}
	}
	return 255
}

// podReady reports whether pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
