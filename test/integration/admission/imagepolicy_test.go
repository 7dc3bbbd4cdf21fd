package admission

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// imagePolicyBackend is an image policy backend of the test's own: it
// refuses images with "unsigned" in their name, says why, and asks for
// an audit annotation when a pod carries a break-glass annotation.
type imagePolicyBackend struct {
	*testserver.WebhookServer
	mu      sync.Mutex
	reviews []imagepolicyv1alpha1.ImageReview
	raw     []map[string]any
}

func startImagePolicyBackend(t *testing.T) *imagePolicyBackend {
	b := &imagePolicyBackend{}
	b.WebhookServer = testserver.StartWebhookServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review imagepolicyv1alpha1.ImageReview
		var raw map[string]any
		dec := json.NewDecoder(r.Body)
		if err := dec.Decode(&raw); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		data, _ := json.Marshal(raw)
		_ = json.Unmarshal(data, &review)
		b.mu.Lock()
		b.reviews, b.raw = append(b.reviews, review), append(b.raw, raw)
		b.mu.Unlock()
		review.Status.Allowed = true
		for _, c := range review.Spec.Containers {
			if strings.Contains(c.Image, "unsigned") {
				review.Status = imagepolicyv1alpha1.ImageReviewStatus{Reason: fmt.Sprintf("image %q is not signed", c.Image)}
			}
		}
		if review.Spec.Annotations["mycompany.image-policy.k8s.io/break-glass"] == "true" {
			review.Status = imagepolicyv1alpha1.ImageReviewStatus{Allowed: true, AuditAnnotations: map[string]string{"break-glass": "true"}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	return b
}

// reviewOf is the last review the backend got for namespace ns.
func (b *imagePolicyBackend) reviewOf(ns string) (imagepolicyv1alpha1.ImageReview, map[string]any, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.reviews) - 1; i >= 0; i-- {
		if b.reviews[i].Spec.Namespace == ns {
			return b.reviews[i], b.raw[i], true
		}
	}
	return imagepolicyv1alpha1.ImageReview{}, nil, false
}

// imagePolicyServer starts a server with ImagePolicyWebhook enabled,
// its backend at url (CA caPEM), the plugin's settings imagePolicy (YAML
// lines under imagePolicy:), and an audit log at Metadata level.
func imagePolicyServer(t *testing.T, url string, caPEM []byte, imagePolicy string) (kubernetes.Interface, string) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ca.crt"), string(caPEM))
	writeFile(t, filepath.Join(dir, "backend.kubeconfig"), `apiVersion: v1
kind: Config
clusters:
- name: images
  cluster:
    server: `+url+`
    certificate-authority: ca.crt
users:
- name: apiserver
  user: {}
contexts:
- name: images
  context: {cluster: images, user: apiserver}
current-context: images
`)
	writeFile(t, filepath.Join(dir, "admission.yaml"), `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ImagePolicyWebhook
  configuration:
    imagePolicy:
      kubeConfigFile: `+filepath.Join(dir, "backend.kubeconfig")+`
`+imagePolicy)
	writeFile(t, filepath.Join(dir, "policy.yaml"), "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: \"\", resources: [pods]}]\n")
	log := filepath.Join(dir, "audit.log")
	ts := testserver.Start(t, func(o *app.Options) {
		o.Admission.EnablePlugins = []string{"ImagePolicyWebhook"}
		o.Admission.ConfigFile = filepath.Join(dir, "admission.yaml")
		o.Audit.PolicyFile, o.Audit.Path = filepath.Join(dir, "policy.yaml"), log
	})
	return kubernetes.NewForConfigOrDie(ts.ClientConfig), log
}

// createPod creates pod in ns once the namespace's service account is
// there (the ServiceAccount plugin refuses pods before).
func createPod(t *testing.T, cs kubernetes.Interface, ns string, pod *corev1.Pod) (*corev1.Pod, error) {
	t.Helper()
	eventually(t, func(int) error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx(t), "default", metav1.GetOptions{})
		return err
	})
	return cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
}

func imagePod(name string, images ...string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for i, image := range images {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: image})
	}
	return pod
}

// TestImagePolicyWebhook: with the plugin enabled, the backend named by
// the kubeconfig decides a pod's images: it gets kube's ImageReview (the
// containers' then init containers' images, the image policy
// annotations only, the namespace); a refusal is kube's 403 with the
// backend's reason; ephemeral containers are reviewed on their own; what
// the backend asks is recorded in the audit event under kube's prefix.
func TestImagePolicyWebhook(t *testing.T) {
	if *reference {
		t.Skip("needs a server started with the test's admission configuration")
	}
	t.Parallel()
	b := startImagePolicyBackend(t)
	cs, log := imagePolicyServer(t, fmt.Sprintf("https://127.0.0.1:%d/review", b.Port()), b.CAPEM, "      retryBackoff: 10\n")
	ns := testserver.NamespaceName(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	pod := imagePod("signed", "registry.example/app:1")
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "registry.example/init:1"}}
	pod.Annotations = map[string]string{"mycompany.image-policy.k8s.io/ticket": "42", "unrelated": "x"}
	if _, err := createPod(t, cs, ns, pod); err != nil {
		t.Fatalf("a pod of signed images: %v", err)
	}
	review, raw, ok := b.reviewOf(ns)
	if !ok {
		t.Fatal("the backend got no review")
	}
	if raw["apiVersion"] != "imagepolicy.k8s.io/v1alpha1" || raw["kind"] != "ImageReview" {
		t.Errorf("review type %v/%v, want imagepolicy.k8s.io/v1alpha1 ImageReview", raw["apiVersion"], raw["kind"])
	}
	wantSpec := imagepolicyv1alpha1.ImageReviewSpec{Namespace: ns,
		Containers:  []imagepolicyv1alpha1.ImageReviewContainerSpec{{Image: "registry.example/app:1"}, {Image: "registry.example/init:1"}},
		Annotations: map[string]string{"mycompany.image-policy.k8s.io/ticket": "42"}}
	if got, _ := json.Marshal(review.Spec); string(got) != string(must(json.Marshal(wantSpec))) {
		t.Errorf("review spec %s, want %s", got, must(json.Marshal(wantSpec)))
	}

	_, err := createPod(t, cs, ns, imagePod("refused", "registry.example/app:1", "registry.example/unsigned:2"))
	status := statusOf(t, err)
	want := `pods "refused" is forbidden: image policy webhook backend denied one or more images: image "registry.example/unsigned:2" is not signed`
	if status.Code != 403 || status.Reason != metav1.StatusReasonForbidden || status.Message != want {
		t.Errorf("an unsigned image: %d %s %q, want 403 Forbidden %q", status.Code, status.Reason, status.Message, want)
	}

	debug := &corev1.Pod{}
	if debug, err = cs.CoreV1().Pods(ns).Get(ctx(t), "signed", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	debug.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "registry.example/unsigned-debug:1", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}}}
	_, err = cs.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx(t), "signed", debug, metav1.UpdateOptions{})
	want = `pods "signed" is forbidden: image policy webhook backend denied one or more images: image "registry.example/unsigned-debug:1" is not signed`
	if status := statusOf(t, err); status.Code != 403 || status.Message != want {
		t.Errorf("an unsigned ephemeral container: %d %q, want 403 %q", status.Code, status.Message, want)
	}
	debug.Spec.EphemeralContainers[0].Image = "registry.example/debug:1"
	if _, err = cs.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx(t), "signed", debug, metav1.UpdateOptions{}); err != nil {
		t.Errorf("a signed ephemeral container: %v", err)
	}
	if review, _, _ := b.reviewOf(ns); len(review.Spec.Containers) != 1 || review.Spec.Containers[0].Image != "registry.example/debug:1" {
		t.Errorf("the ephemeral containers' review: %+v, want their image only", review.Spec)
	}

	glass := imagePod("audited", "registry.example/unsigned:3")
	glass.Annotations = map[string]string{"mycompany.image-policy.k8s.io/break-glass": "true"}
	if _, err := createPod(t, cs, ns, glass); err != nil {
		t.Fatalf("a break-glass pod: %v", err)
	}
	event := podCreateEvent(t, log, ns, "audited")
	if got := event.Annotations["imagepolicywebhook.image-policy.k8s.io/break-glass"]; got != "true" {
		t.Errorf("audit annotations %v, want imagepolicywebhook.image-policy.k8s.io/break-glass=true", event.Annotations)
	}
}

// TestImagePolicyWebhookFailOpen: a backend that cannot be reached lets
// pods in with defaultAllow, marked failed-open in the audit event, as
// kube does.
func TestImagePolicyWebhookFailOpen(t *testing.T) {
	if *reference {
		t.Skip("needs a server started with the test's admission configuration")
	}
	t.Parallel()
	b := startImagePolicyBackend(t)
	cs, log := imagePolicyServer(t, "https://127.0.0.1:1/review", b.CAPEM, "      retryBackoff: 10\n      defaultAllow: true\n")
	ns := testserver.NamespaceName(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := createPod(t, cs, ns, imagePod("open", "registry.example/unsigned:1"))
	if err != nil {
		t.Fatalf("defaultAllow with the backend down: %v", err)
	}
	// kube's plugin also marks the pod, but validating admission sees a
	// copy of the object (kube's store validates obj.DeepCopyObject()):
	// the stored pod is not marked.
	if _, ok := pod.Annotations[corev1.ImagePolicyFailedOpenKey]; ok {
		t.Errorf("pod annotations %v: kube stores no %s", pod.Annotations, corev1.ImagePolicyFailedOpenKey)
	}
	if event := podCreateEvent(t, log, ns, "open"); event.Annotations["imagepolicywebhook.image-policy.k8s.io/failed-open"] != "true" {
		t.Errorf("audit annotations %v, want imagepolicywebhook.image-policy.k8s.io/failed-open=true", event.Annotations)
	}
}

// TestImagePolicyWebhookNeedsConfiguration: enabled without a
// configuration, the plugin fails the start with kube's error.
func TestImagePolicyWebhookNeedsConfiguration(t *testing.T) {
	if *reference {
		t.Skip("starts servers of its own")
	}
	t.Parallel()
	ts, err := testserver.New(t.TempDir(), func(o *app.Options) { o.Admission.EnablePlugins = []string{"ImagePolicyWebhook"} })
	if err == nil {
		ts.Server.Stop()
		t.Fatal("the server started")
	}
	if !strings.HasSuffix(err.Error(), "ImagePolicyWebhook: no config specified") {
		t.Errorf("err = %v, want kube's %q", err, "no config specified")
	}
}

func must(data []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return data
}

// podCreateEvent returns the audit event of the create of pod ns/name,
// once the log has it.
func podCreateEvent(t *testing.T, log, ns, name string) auditv1.Event {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		data, _ := os.ReadFile(log)
		for _, line := range strings.Split(string(data), "\n") {
			var e auditv1.Event
			if json.Unmarshal([]byte(line), &e) == nil && e.Verb == "create" && e.Stage == auditv1.StageResponseComplete &&
				e.ObjectRef != nil && e.ObjectRef.Resource == "pods" && e.ObjectRef.Subresource == "" &&
				e.ObjectRef.Namespace == ns && e.ObjectRef.Name == name {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit event of the create of pod %s/%s", ns, name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
