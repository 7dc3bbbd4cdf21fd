package workloads

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// testWarnings sends objects with deprecated or dubious fields and checks
// the Warning headers against what kube-apiserver v1.37.2 sent for the
// same requests (bodies in testdata/warnings, texts recorded below).
func testWarnings(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-warnings")
	if _, err := e.client.CoreV1().ServiceAccounts(ns).Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	core, apps := "/api/v1/namespaces/"+ns, "/apis/apps/v1/namespaces/"+ns

	t.Run("CleanPod", func(t *testing.T) {
		pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"clean"},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}],"resources":{"requests":{"memory":"64Mi"}}}]}}`
		e.expectWarnings(t, "POST", core+"/pods", []byte(pod), 201)
	})

	t.Run("PodSchedulingAndContainers", func(t *testing.T) {
		e.expectWarnings(t, "POST", core+"/pods", readWarningsFile(t, "pod-scheduling-and-containers.json"), 201,
			`metadata.annotations[container.apparmor.security.beta.kubernetes.io/c1]: deprecated since v1.30; use the "appArmorProfile" field instead`,
			`spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`,
			`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
			`spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" instead`,
			`spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/region is deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
			`spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod`,
			`metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead`,
			`metadata.annotations[security.alpha.kubernetes.io/sysctls]: non-functional in v1.11+; use the "sysctls" field instead`,
			`metadata.annotations[security.alpha.kubernetes.io/unsafe-sysctls]: non-functional in v1.11+; use the "sysctls" field instead`,
			`spec.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+`,
			`spec.volumes[2].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`,
			`volume "cm" (ConfigMap "cfg"): overlapping paths: "x/y" with "x"`,
			`spec.hostAliases[1].ip: duplicate ip "1.2.3.4"`,
			`spec.imagePullSecrets[1].name: duplicate name "s"`,
			`spec.imagePullSecrets[2].name: invalid empty name ""`,
			`metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead`,
			`spec.initContainers[0].env[1]: hides previous definition of "A", which may be dropped when using apply`,
			`metadata.annotations[container.seccomp.security.alpha.kubernetes.io/c1]: non-functional in v1.27+; use the "seccompProfile" field instead`,
			`spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.containers[0].ports[1]: overlapping port definition with spec.containers[0].ports[0]`,
			`spec.containers[0].ports[2]: hostIP set without hostPort: {Name: HostPort:0 ContainerPort:81 Protocol:TCP HostIP:1.2.3.4}`,
			`spec.containers[1].ports[0]: duplicate port definition with spec.containers[0].ports[0]`,
			`spec.containers[1].ports[0]: overlapping port definition with spec.containers[0].ports[1]`,
			`spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod`,
			`spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector: a null labelSelector results in matching no pod`,
			`spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod`,
		)
		// As kube, the pod gets the profile its annotation names; the
		// negative grace period became 1 (so no warning for it).
		pod, err := e.client.CoreV1().Pods(ns).Get(ctx(t), "p1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc := pod.Spec.Containers[0].SecurityContext; sc == nil || sc.AppArmorProfile == nil || sc.AppArmorProfile.Type != corev1.AppArmorProfileTypeRuntimeDefault {
			t.Errorf("container c1: want the RuntimeDefault AppArmor profile, got security context %+v", sc)
		}
		if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g != 1 {
			t.Errorf("terminationGracePeriodSeconds: want 1, got %v", g)
		}
	})

	t.Run("PodVolumesAndResources", func(t *testing.T) {
		// kube's RuntimeClass admission refuses the pod (an overhead
		// without a runtime class) after the strategy has warned.
		e.expectWarnings(t, "POST", core+"/pods?dryRun=All", readWarningsFile(t, "pod-volumes-and-resources.json"), 403,
			`spec.volumes[0].photonPersistentDisk: deprecated in v1.11, non-functional in v1.16+`,
			`spec.volumes[1].scaleIO: deprecated in v1.16, non-functional in v1.22+`,
			`spec.volumes[2].flocker: deprecated in v1.22, non-functional in v1.25+`,
			`spec.volumes[3].storageOS: deprecated in v1.22, non-functional in v1.25+`,
			`spec.volumes[4].quobyte: deprecated in v1.22, non-functional in v1.25+`,
			`spec.volumes[5].glusterfs: deprecated in v1.25, non-functional in v1.26+`,
			`spec.volumes[6].cephfs: deprecated in v1.28, non-functional in v1.31+`,
			`spec.volumes[7].rbd: deprecated in v1.28, non-functional in v1.31+`,
			`volume "v8" (Projected): overlapping paths: "tok/a" (ConfigMap "c") with "tok" (ServiceAccountToken)`,
			`volume "v8" (Projected): overlapping paths: "b/c" (Secret "s") with "b" (Secret "s")`,
			`volume "v9" (Projected) has no sources provided`,
			`volume "v10" (Secret "s"): overlapping paths: "p" with "p"`,
			`volume "v11" (DownwardAPI): overlapping paths: "a/b" with "a"`,
			`spec.overhead[memory]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.overhead[ephemeral-storage]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.containers[0].resources.limits[ephemeral-storage]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.containers[0].env[1]: hides previous definition of "B", which may be dropped when using apply`,
			`spec.containers[0].env[3]: hides previous definition of "B", which may be dropped when using apply`,
			`spec.containers[0].ports[1]: dangerously ambiguous port definition with spec.containers[0].ports[0]`,
		)
	})

	t.Run("PodOverlappingPaths", func(t *testing.T) {
		e.expectWarnings(t, "POST", core+"/pods?dryRun=All", readWarningsFile(t, "pod-overlapping-paths.json"), 201,
			`volume "v0" (Secret "s"): overlapping paths: "a/b" with "a/b/c"`,
			`volume "v0" (Secret "s"): overlapping paths: "a" with "a/b/c"`,
			`volume "v0" (Secret "s"): overlapping paths: "a" with "a/b"`,
			`volume "v0" (Secret "s"): overlapping paths: "a" with "a"`,
			`volume "v1" (Projected): overlapping paths: "t" (DownwardAPI) with "t/x" (ServiceAccountToken)`,
			`volume "v1" (Projected): overlapping paths: "t/y" (DownwardAPI) with "t" (DownwardAPI)`,
			`volume "v1" (Projected): overlapping paths: "t/z" (ClusterTrustBundle "example.com/s") with "t" (DownwardAPI)`,
			`volume "w1" (Projected): overlapping paths: "x/y" (Secret "s") with "x" (ConfigMap "c")`,
		)
	})

	t.Run("PodUpdatesAndStatus", func(t *testing.T) {
		// kube warns on no pod update, even one that keeps dubious fields.
		e.editExpect(t, core+"/pods/p1", func(o map[string]any) { setPath(o, "x", "metadata", "labels", "edited") }, 200)
		e.editExpect(t, core+"/pods/p1/status", func(o map[string]any) {
			setPath(o, "10.1.2.3", "status", "podIP")
			setPath(o, []any{map[string]any{"ip": "10.1.2.3"}, map[string]any{"ip": "fd00::0:1"}}, "status", "podIPs")
			setPath(o, "10.0.0.1", "status", "hostIP")
			setPath(o, []any{map[string]any{"ip": "10.0.0.1"}, map[string]any{"ip": "fd00:0::2"}}, "status", "hostIPs")
		}, 200,
			`status.podIPs[1].ip: IPv6 address "fd00::0:1" should be in RFC 5952 canonical format ("fd00::1")`,
			`status.hostIPs[1].ip: IPv6 address "fd00:0::2" should be in RFC 5952 canonical format ("fd00::2")`)
	})

	deploymentWarnings := []string{
		`spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`,
		`spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: deprecated since v1.30; use the "appArmorProfile" field instead`,
		`spec.template.spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer`,
		`spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1`,
	}
	t.Run("Deployment", func(t *testing.T) {
		e.expectWarnings(t, "POST", apps+"/deployments", readWarningsFile(t, "deployment.json"), 201, deploymentWarnings...)
		d := apps + "/deployments/d1"
		// Labels do not move the generation: no template warnings.
		e.editExpect(t, d, func(o map[string]any) { setPath(o, "y", "metadata", "labels", "x") }, 200)
		// Replicas and annotations do (kube warns on both).
		e.editExpect(t, d, func(o map[string]any) { setPath(o, 3.0, "spec", "replicas") }, 200, deploymentWarnings...)
		e.editExpect(t, d, func(o map[string]any) { setPath(o, "b", "metadata", "annotations", "a") }, 200, deploymentWarnings...)
	})

	t.Run("DaemonSet", func(t *testing.T) {
		nodeSelector := `spec.template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`
		// No name warning for daemon sets, unlike replica sets.
		e.expectWarnings(t, "POST", apps+"/daemonsets", readWarningsFile(t, "daemonset.json"), 201, nodeSelector)
		e.editExpect(t, apps+"/daemonsets/ds.a", func(o map[string]any) { setPath(o, 5.0, "spec", "minReadySeconds") }, 200)
		e.editExpect(t, apps+"/daemonsets/ds.a", func(o map[string]any) { setPath(o, "1", "spec", "template", "metadata", "annotations", "q") }, 200, nodeSelector)
	})

	t.Run("ReplicaSetAndPodTemplate", func(t *testing.T) {
		rs := strings.ReplaceAll(string(readWarningsFile(t, "daemonset.json")), `"DaemonSet"`, `"ReplicaSet"`)
		rs = strings.ReplaceAll(rs, `"ds.a"`, `"rs.a"`)
		e.expectWarnings(t, "POST", apps+"/replicasets?dryRun=All", []byte(rs), 201,
			`metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]`,
			`spec.template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`)
		pt := `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"pt.a"},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"nodeSelector":{"beta.kubernetes.io/arch":"amd64"},"containers":[{"name":"c","image":"nginx"}]}}}`
		want := `template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`
		e.expectWarnings(t, "POST", core+"/podtemplates", []byte(pt), 201, want)
		e.editExpect(t, core+"/podtemplates/pt.a", func(o map[string]any) { setPath(o, "b", "metadata", "labels", "a") }, 200)
		e.editExpect(t, core+"/podtemplates/pt.a", func(o map[string]any) { setPath(o, "1", "template", "metadata", "labels", "z") }, 200, want)
	})

	t.Run("ReplicationController", func(t *testing.T) {
		arch := `spec.template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`
		e.expectWarnings(t, "POST", core+"/replicationcontrollers", readWarningsFile(t, "replicationcontroller.json"), 201, arch)
		rc := core + "/replicationcontrollers/rc1"
		// kube v1.37 warns about the template being replaced, not the new
		// one: fixing the template warns, breaking it does not.
		fix := func(o map[string]any) {
			setPath(o, map[string]any{"kubernetes.io/arch": "amd64"}, "spec", "template", "spec", "nodeSelector")
		}
		e.editExpect(t, rc, fix, 200, arch)
		e.editExpect(t, rc, func(o map[string]any) {
			setPath(o, map[string]any{"beta.kubernetes.io/os": "linux"}, "spec", "template", "spec", "nodeSelector")
		}, 200)
	})

	t.Run("StatefulSet", func(t *testing.T) {
		e.expectWarnings(t, "POST", apps+"/statefulsets", readWarningsFile(t, "statefulset.json"), 201,
			`spec.template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`,
			`spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.volumeClaimTemplates[0].resources.limits[storage]: fractional byte value "2500m" is invalid, must be an integer`,
			`spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended`)
		// Claim templates and the history limit warn on every update,
		// under kube's path with "Spec"; the template only when it moved.
		e.editExpect(t, apps+"/statefulsets/s1", func(o map[string]any) { setPath(o, "b", "metadata", "labels", "a") }, 200,
			`spec.volumeClaimTemplates[0].Spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.volumeClaimTemplates[0].Spec.resources.limits[storage]: fractional byte value "2500m" is invalid, must be an integer`,
			`spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended`)
	})

	t.Run("PersistentVolumeAndClaim", func(t *testing.T) {
		pvWarnings := []string{
			`metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead`,
			`spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.`,
			`spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key: beta.kubernetes.io/arch is deprecated since v1.14; use "kubernetes.io/arch" instead`,
		}
		e.expectWarnings(t, "POST", "/api/v1/persistentvolumes", readWarningsFile(t, "persistentvolume.json"), 201, pvWarnings...)
		t.Cleanup(func() { e.do(t, "DELETE", "/api/v1/persistentvolumes/wl-warnings-pv", "", nil) })
		e.editExpect(t, "/api/v1/persistentvolumes/wl-warnings-pv", func(o map[string]any) { setPath(o, "b", "metadata", "labels", "a") }, 200, pvWarnings...)
		gluster := `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"wl-warnings-gluster"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"glusterfs":{"endpoints":"e","path":"p"}}}`
		e.expectWarnings(t, "POST", "/api/v1/persistentvolumes?dryRun=All", []byte(gluster), 201, `spec.glusterfs: deprecated in v1.25, non-functional in v1.26+`)

		pvcWarnings := []string{
			`metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead`,
			`spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.resources.limits[storage]: fractional byte value "2500m" is invalid, must be an integer`,
		}
		e.expectWarnings(t, "POST", core+"/persistentvolumeclaims", readWarningsFile(t, "persistentvolumeclaim.json"), 201, pvcWarnings...)
		e.editExpect(t, core+"/persistentvolumeclaims/pvc1", func(o map[string]any) { setPath(o, "b", "metadata", "labels", "a") }, 200, pvcWarnings...)
	})

	t.Run("ClientGo", func(t *testing.T) {
		// client-go hands the headers to the config's WarningHandler.
		h := &recordingWarnings{}
		cfg := rest.CopyConfig(e.srv.ClientConfig)
		cfg.WarningHandler = h
		client := kubernetes.NewForConfigOrDie(cfg)
		var pod corev1.Pod
		if err := json.Unmarshal(readWarningsFile(t, "pod-scheduling-and-containers.json"), &pod); err != nil {
			t.Fatal(err)
		}
		pod.Name = "via-client-go"
		pod.Annotations = nil
		pod.Spec.Affinity, pod.Spec.TopologySpreadConstraints, pod.Spec.HostAliases = nil, nil, nil
		pod.Spec.ImagePullSecrets, pod.Spec.Volumes, pod.Spec.InitContainers = nil, nil, nil
		pod.Spec.Containers = pod.Spec.Containers[1:]
		if _, err := client.CoreV1().Pods(ns).Create(ctx(t), &pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
		want := []string{`spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`}
		if got := h.list(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("client-go warnings:\n got %q\nwant %q", got, want)
		}
	})
}

// recordingWarnings is a client-go WarningHandler that keeps the texts.
type recordingWarnings struct {
	mu    sync.Mutex
	texts []string
}

func (r *recordingWarnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts = append(r.texts, text)
}

func (r *recordingWarnings) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.texts...)
}

func readWarningsFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/warnings/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// expectWarnings sends a request and checks its status code and the texts
// of its Warning headers, in order.
func (e *env) expectWarnings(t *testing.T, method, path string, body []byte, code int, want ...string) []byte {
	t.Helper()
	status, header, data := e.send(t, method, path, "application/json", body)
	if status != code {
		t.Fatalf("%s %s: want %d, got %d: %s", method, path, code, status, data)
	}
	headers, errs := utilnet.ParseWarningHeaders(header.Values("Warning"))
	if len(errs) > 0 {
		t.Fatalf("%s %s: malformed Warning headers: %v", method, path, errs)
	}
	var got []string
	for _, h := range headers {
		if h.Code != 299 || h.Agent != "-" {
			t.Errorf("%s %s: want code 299 and agent -, got %+v", method, path, h)
		}
		got = append(got, h.Text)
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("%s %s: warnings differ at %s\n got:\n%s", method, path, firstDiff(w, g), g)
	}
	return data
}

// editExpect reads an object, changes it with edit, writes it back with
// PUT and checks the Warning headers of the write.
func (e *env) editExpect(t *testing.T, path string, edit func(map[string]any), code int, want ...string) {
	t.Helper()
	objPath := strings.TrimSuffix(path, "/status")
	status, data := e.do(t, "GET", objPath, "", nil)
	if status != 200 {
		t.Fatalf("GET %s: %d %s", objPath, status, data)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	edit(obj)
	e.expectWarnings(t, "PUT", path, mustJSON(t, obj), code, want...)
}

// setPath sets obj[keys...] = value, creating the maps on the way.
func setPath(obj map[string]any, value any, keys ...string) {
	for _, k := range keys[:len(keys)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	obj[keys[len(keys)-1]] = value
}
