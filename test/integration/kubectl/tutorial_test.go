package kubectl

import (
	"bufio"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

const tutorialDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  labels:
    app: nginx
spec:
  replicas: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports:
        - containerPort: 80
`

// TestTutorial is the kubectl tutorial of the issue, end to end: a
// Deployment created from a manifest, scaled, labelled, its image
// patched, a change applied, a field explained, the Deployment watched,
// then deleted. Each command prints what it prints against a cluster
// (with -record, the test runs against the reference and checks the same
// expectations), except that no pod ever runs: no controller creates
// them and no kubelet would start them, so READY stays 0 and rollout
// status would wait forever.
func TestTutorial(t *testing.T) {
	needKubectl(t)
	tg := testTarget(t)
	ns := tg.namespace(t, "kubectl-tutorial")
	kubectl := func(stdin string, args ...string) string {
		t.Helper()
		return tg.run(t, invocation{args: append([]string{"-n", ns}, args...), stdin: stdin})
	}
	expect := func(got string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !regexp.MustCompile(w).MatchString(got) {
				t.Errorf("output lacks %q:\n%s", w, got)
			}
		}
	}

	// Create the Deployment from its manifest, and look at it.
	expect(kubectl(tutorialDeployment, "apply", "-f", "-"), `^deployment.apps/nginx-deployment created\n$`)
	expect(kubectl("", "get", "deployments"),
		`^NAME +READY +UP-TO-DATE +AVAILABLE +AGE\n`, `\nnginx-deployment +0/2 +0 +0 +\d+s\n$`)
	expect(kubectl("", "describe", "deployment", "nginx-deployment"),
		`\nLabels: +app=nginx\n`, `\nReplicas: +2 desired \| 0 updated \| 0 total \| 0 available \| 0 unavailable\n`,
		`\nStrategyType: +RollingUpdate\n`, `\n +Image: +nginx:1.14.2\n`, `\nEvents: +<none>\n$`)

	// Scale it.
	expect(kubectl("", "scale", "deployment", "nginx-deployment", "--replicas=4"), `^deployment.apps/nginx-deployment scaled\n$`)
	expect(kubectl("", "get", "deployment", "nginx-deployment", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"), `^4 2$`)

	// Label it, and select it by its label.
	expect(kubectl("", "label", "deployment", "nginx-deployment", "env=tutorial"), `^deployment.apps/nginx-deployment labeled\n$`)
	expect(kubectl("", "get", "deployments", "-l", "env=tutorial", "--show-labels"), `\nnginx-deployment +0/4 +0 +0 +\d+s +app=nginx,env=tutorial\n$`)

	// Patch its image.
	expect(kubectl("", "patch", "deployment", "nginx-deployment", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.16.1"}]}}}}`),
		`^deployment.apps/nginx-deployment patched\n$`)
	expect(kubectl("", "get", "deployment", "nginx-deployment", "-o", "wide"), `\nnginx-deployment +0/4 +0 +0 +\d+s +nginx +nginx:1.16.1 +app=nginx\n$`)

	// Apply a change to the manifest: kubectl's three-way merge keeps the
	// label and sets what the manifest now says.
	changed := strings.NewReplacer("replicas: 2", "replicas: 3", "nginx:1.14.2", "nginx:1.25.3").Replace(tutorialDeployment)
	expect(kubectl(changed, "apply", "-f", "-"), `^deployment.apps/nginx-deployment configured\n$`)
	expect(kubectl("", "get", "deployment", "nginx-deployment", "-o", `jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} {.metadata.labels.env} {.metadata.generation}`),
		`^3 nginx:1.25.3 tutorial 4$`)
	expect(kubectl(changed, "diff", "-f", "-"), `^$`)

	// Explain a field.
	expect(kubectl("", "explain", "deployment.spec.strategy.rollingUpdate.maxSurge"),
		`^GROUP: +apps\nKIND: +Deployment\nVERSION: +v1\n\nFIELD: maxSurge <IntOrString>\n`, `The maximum number of pods that can be scheduled above the desired number of\n`)

	// Watch it while it is scaled.
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watch := tg.command(c, invocation{args: []string{"-n", ns, "get", "deployment", "nginx-deployment", "--watch", "--output-watch-events"}})
	stdout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); watch.Wait() }() //nolint:errcheck // killed
	lines := bufio.NewScanner(stdout)
	next := func(want string) {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("kubectl get --watch ended: %v", lines.Err())
		}
		expect(lines.Text(), want)
	}
	next(`^EVENT +NAME +READY +UP-TO-DATE +AVAILABLE +AGE$`)
	next(`^ADDED +nginx-deployment +0/3 +0 +0 +\d+s$`)
	expect(kubectl("", "scale", "deployment", "nginx-deployment", "--replicas=1"), `^deployment.apps/nginx-deployment scaled\n$`)
	next(`^MODIFIED +nginx-deployment +0/1 +0 +0 +\d+s$`)

	// Delete it: kubectl waits until it is gone.
	expect(kubectl(changed, "delete", "-f", "-"), `^deployment.apps "nginx-deployment" deleted\n$`)
	next(`^DELETED +nginx-deployment +0/1 +0 +0 +\d+s$`)
	expect(kubectl("", "get", "deployments"), `^No resources found in `+ns+` namespace.\n$`)
}
