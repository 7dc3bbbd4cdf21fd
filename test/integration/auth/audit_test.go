package auth

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// auditPolicy is the policy of the audit tests: a level per resource,
// the first matching rule wins.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: None
  users: ["quiet"]
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
- level: Request
  verbs: ["create", "update", "patch"]
  resources: [{group: "", resources: ["configmaps"]}]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
  namespaces: ["audited"]
- level: Metadata
  omitStages: [ResponseComplete]
  resources: [{group: "", resources: ["pods"]}]
- level: Metadata
`

// TestAuditLog writes requests of every level and reads them back from
// the log: who, what, how it ended, and the bodies the level keeps.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy, log := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, func(o *app.Options) { o.Audit.PolicyFile, o.Audit.Path = policy, log }, alwaysAllow)
	admin := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "audited"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	jane := kubernetes.NewForConfigOrDie(ts.ClientConfigFor(t, "jane", "dev"))
	quiet := kubernetes.NewForConfigOrDie(ts.ClientConfigFor(t, "quiet"))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Data: map[string]string{"k": "v"}}
	mustDo(t, func() error {
		_, err := jane.CoreV1().ConfigMaps("audited").Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
	mustDo(t, func() error {
		_, err := jane.CoreV1().ConfigMaps("audited").Get(ctx, "c1", metav1.GetOptions{})
		return err
	})
	mustDo(t, func() error {
		_, err := jane.CoreV1().Secrets("audited").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s1"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{})
		return err
	})
	mustDo(t, func() error {
		_, err := quiet.CoreV1().ConfigMaps("audited").Get(ctx, "c1", metav1.GetOptions{})
		return err
	})
	_, notFound := jane.CoreV1().ConfigMaps("audited").Get(ctx, "nope", metav1.GetOptions{})
	impersonating := rest.CopyConfig(ts.ClientConfig)
	impersonating.Impersonate = rest.ImpersonationConfig{UserName: "bob"}
	mustDo(t, func() error {
		_, err := kubernetes.NewForConfigOrDie(impersonating).CoreV1().Namespaces().Get(ctx, "audited", metav1.GetOptions{})
		return err
	})
	if notFound == nil {
		t.Fatal("getting a missing configmap succeeded")
	}

	events := readAudit(t, log, func(evs []auditv1.Event) bool {
		return slices.ContainsFunc(evs, func(e auditv1.Event) bool { return e.ImpersonatedUser != nil })
	})
	find := func(verb, resource, name, user string) auditv1.Event {
		t.Helper()
		for _, e := range events {
			if e.Verb == verb && e.ObjectRef != nil && e.ObjectRef.Resource == resource && e.ObjectRef.Name == name && e.User.Username == user && e.Stage == auditv1.StageResponseComplete {
				return e
			}
		}
		t.Fatalf("no ResponseComplete event of %s %s/%s by %s in:\n%s", verb, resource, name, user, dump(events))
		return auditv1.Event{}
	}

	create := find("create", "configmaps", "c1", "jane")
	if create.Level != auditv1.LevelRequest || create.RequestObject == nil || create.ResponseObject != nil ||
		!strings.Contains(string(create.RequestObject.Raw), `"k":"v"`) || create.ResponseStatus.Code != 201 {
		t.Errorf("create at Request: %s", dump([]auditv1.Event{create}))
	}
	if !slices.Equal(create.User.Groups, []string{"dev", "system:authenticated"}) || create.ObjectRef.Namespace != "audited" ||
		create.RequestURI != "/api/v1/namespaces/audited/configmaps" || len(create.SourceIPs) == 0 || create.UserAgent == "" {
		t.Errorf("create's metadata: %s", dump([]auditv1.Event{create}))
	}
	if create.Annotations["authorization.k8s.io/decision"] != "allow" {
		t.Errorf("create's annotations: %v", create.Annotations)
	}
	get := find("get", "configmaps", "c1", "jane")
	if get.Level != auditv1.LevelRequestResponse || get.ResponseObject == nil || !strings.Contains(string(get.ResponseObject.Raw), `"name":"c1"`) {
		t.Errorf("get at RequestResponse: %s", dump([]auditv1.Event{get}))
	}
	secret := find("create", "secrets", "s1", "jane")
	if secret.Level != auditv1.LevelMetadata || secret.RequestObject != nil || secret.ResponseObject != nil {
		t.Errorf("secret at Metadata: %s", dump([]auditv1.Event{secret}))
	}
	missing := find("get", "configmaps", "nope", "jane")
	if missing.ResponseStatus.Code != 404 || missing.ResponseStatus.Reason != metav1.StatusReasonNotFound || missing.ResponseStatus.Message != `configmaps "nope" not found` {
		t.Errorf("a 404: %+v", missing.ResponseStatus)
	}
	impersonated := find("get", "namespaces", "audited", "admin")
	// system:masters may do anything: the first mode that fits (another
	// user) allows it.
	if impersonated.ImpersonatedUser == nil || impersonated.ImpersonatedUser.Username != "bob" || impersonated.AuthenticationMetadata == nil ||
		impersonated.AuthenticationMetadata.ImpersonationConstraint != "impersonate:user-info" {
		t.Errorf("impersonation: %s", dump([]auditv1.Event{impersonated}))
	}
	for _, e := range events {
		if e.Stage == auditv1.StageRequestReceived {
			t.Errorf("an omitted stage was written: %s", dump([]auditv1.Event{e}))
		}
		if e.User.Username == "quiet" {
			t.Errorf("a request at level None was written: %s", dump([]auditv1.Event{e}))
		}
		if e.AuditID == "" || e.Kind != "Event" || e.APIVersion != "audit.k8s.io/v1" || e.StageTimestamp.IsZero() || e.RequestReceivedTimestamp.IsZero() {
			t.Errorf("an event lacks kube's fields: %s", dump([]auditv1.Event{e}))
		}
	}
}

// TestAuditWatchStages: a watch is long-running, so it has a
// ResponseStarted event before its ResponseComplete; and the Audit-Id
// header names the request's events.
func TestAuditWatchStages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy, log := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, func(o *app.Options) { o.Audit.PolicyFile, o.Audit.Path = policy, log })
	resp, err := ts.HTTPClient(t).Get(ts.URL + "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1")
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get("Audit-Id")
	_, _ = bufio.NewReader(resp.Body).ReadString(0) // until the watch ends
	resp.Body.Close()
	var stages []auditv1.Stage
	readAudit(t, log, func(evs []auditv1.Event) bool {
		stages = stages[:0]
		for _, e := range evs {
			if string(e.AuditID) == id {
				stages = append(stages, e.Stage)
			}
		}
		return len(stages) == 3
	})
	if !slices.Equal(stages, []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StageResponseStarted, auditv1.StageResponseComplete}) {
		t.Errorf("stages of the watch %s: %v", id, stages)
	}
}

// readAudit reads the events of the log until done says they are all
// there (the log is written from a buffer, a moment after the requests).
func readAudit(t *testing.T, path string, done func([]auditv1.Event) bool) []auditv1.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var events []auditv1.Event
		if data, err := os.ReadFile(path); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if line == "" {
					continue
				}
				var e auditv1.Event
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("an audit line is not an event: %v\n%s", err, line)
				}
				events = append(events, e)
			}
		}
		if done(events) {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit log is not complete:\n%s", dump(events))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func dump(events []auditv1.Event) string {
	var b strings.Builder
	for _, e := range events {
		data, _ := json.Marshal(e)
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

func mustDo(t *testing.T, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatal(err)
	}
}

// TestAuditLogRotation: past --audit-log-maxsize megabytes the log is
// rotated, the old part kept beside it.
func TestAuditLogRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy, log := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: RequestResponse\n  resources: [{group: \"\", resources: [configmaps]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, func(o *app.Options) { o.Audit.PolicyFile, o.Audit.Path, o.Audit.MaxSize = policy, log, 1 })
	client := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	ns := ts.CreateNamespace(t)
	big := strings.Repeat("x", 300*1024) // each event holds it twice (request and response, gzipped on the wire)
	for i := 0; i < 3; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big" + string(rune('a'+i))}, Data: map[string]string{"k": big}}
		mustDo(t, func() error {
			_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			return err
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rotated, _ := filepath.Glob(filepath.Join(dir, "audit-*.log"))
		if len(rotated) > 0 {
			break
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			t.Fatalf("no rotated log after 1.8 MB of events: %v", entries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAuditLogDirectoryCreated: --audit-log-path in a directory that does
// not exist yet starts the server, the directory made 0700, as kube's.
func TestAuditLogDirectoryCreated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy, log := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "logs", "apiserver", "audit.log")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: \"\", resources: [configmaps]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, func(o *app.Options) { o.Audit.PolicyFile, o.Audit.Path = policy, log })
	ns := ts.CreateNamespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited"}}
	mustDo(t, func() error {
		_, err := kubernetes.NewForConfigOrDie(ts.ClientConfig).CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
	info, err := os.Stat(filepath.Dir(log))
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the log's directory: %v %v", info, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(log)
		if strings.Contains(string(data), `"name":"audited"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the create is not in the log: %s", data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
