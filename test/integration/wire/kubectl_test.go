package wire

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// kubectlHeaders are the header lines kubectl 1.32 prints against
// kube-apiserver v1.37 for the fixtures, plain and -o wide (spaces
// squeezed).
var kubectlHeaders = map[string][2]string{
	"apiservices":                       {"NAME SERVICE AVAILABLE AGE", "NAME SERVICE AVAILABLE AGE"},
	"certificatesigningrequests":        {"NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION", "NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION"},
	"clustertrustbundles":               {"NAME SIGNERNAME", "NAME SIGNERNAME"},
	"configmaps":                        {"NAME DATA AGE", "NAME DATA AGE"},
	"controllerrevisions":               {"NAME CONTROLLER REVISION AGE", "NAME CONTROLLER REVISION AGE"},
	"cronjobs":                          {"NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE", "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE CONTAINERS IMAGES SELECTOR"},
	"csidrivers":                        {"NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE", "NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE"},
	"csinodes":                          {"NAME DRIVERS AGE", "NAME DRIVERS AGE"},
	"csistoragecapacities":              {"NAME CREATED AT", "NAME CREATED AT"},
	"daemonsets":                        {"NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE", "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE CONTAINERS IMAGES SELECTOR"},
	"deployments":                       {"NAME READY UP-TO-DATE AVAILABLE AGE", "NAME READY UP-TO-DATE AVAILABLE AGE CONTAINERS IMAGES SELECTOR"},
	"deviceclasses":                     {"NAME AGE", "NAME AGE"},
	"devicetaintrules":                  {"NAME KEY VALUE EFFECT TIMEADDED AGE", "NAME KEY VALUE EFFECT TIMEADDED AGE"},
	"endpoints":                         {"NAME ENDPOINTS AGE", "NAME ENDPOINTS AGE"},
	"endpointslices":                    {"NAME ADDRESSTYPE PORTS ENDPOINTS AGE", "NAME ADDRESSTYPE PORTS ENDPOINTS AGE"},
	"events":                            {"LAST SEEN TYPE REASON OBJECT MESSAGE", "LAST SEEN TYPE REASON OBJECT SUBOBJECT SOURCE MESSAGE FIRST SEEN COUNT NAME"},
	"flowschemas":                       {"NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD AGE MISSINGPL", "NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD AGE MISSINGPL"},
	"horizontalpodautoscalers":          {"NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE", "NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE"},
	"ingressclasses":                    {"NAME CONTROLLER PARAMETERS AGE", "NAME CONTROLLER PARAMETERS AGE"},
	"ingresses":                         {"NAME CLASS HOSTS ADDRESS PORTS AGE", "NAME CLASS HOSTS ADDRESS PORTS AGE"},
	"ipaddresses":                       {"NAME PARENTREF", "NAME PARENTREF"},
	"jobs":                              {"NAME STATUS COMPLETIONS DURATION AGE", "NAME STATUS COMPLETIONS DURATION AGE CONTAINERS IMAGES SELECTOR"},
	"leases":                            {"NAME HOLDER AGE", "NAME HOLDER AGE"},
	"limitranges":                       {"NAME CREATED AT", "NAME CREATED AT"},
	"mutatingadmissionpolicies":         {"NAME MUTATIONS PARAMKIND AGE", "NAME MUTATIONS PARAMKIND AGE"},
	"mutatingadmissionpolicybindings":   {"NAME POLICYNAME PARAMREF AGE", "NAME POLICYNAME PARAMREF AGE"},
	"mutatingwebhookconfigurations":     {"NAME WEBHOOKS AGE", "NAME WEBHOOKS AGE"},
	"namespaces":                        {"NAME STATUS AGE", "NAME STATUS AGE"},
	"networkpolicies":                   {"NAME POD-SELECTOR AGE", "NAME POD-SELECTOR AGE"},
	"nodes":                             {"NAME STATUS ROLES AGE VERSION", "NAME STATUS ROLES AGE VERSION INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME"},
	"persistentvolumeclaims":            {"NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE", "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE VOLUMEMODE"},
	"persistentvolumes":                 {"NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE", "NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE VOLUMEMODE"},
	"podcertificaterequests":            {"NAME PODNAME SERVICEACCOUNTNAME NODENAME SIGNERNAME STATE UNVERIFIEDUSERANNOTATIONS", "NAME PODNAME SERVICEACCOUNTNAME NODENAME SIGNERNAME STATE UNVERIFIEDUSERANNOTATIONS"},
	"poddisruptionbudgets":              {"NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE", "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE"},
	"pods":                              {"NAME READY STATUS RESTARTS AGE", "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES"},
	"podtemplates":                      {"NAME CONTAINERS IMAGES POD LABELS", "NAME CONTAINERS IMAGES POD LABELS"},
	"priorityclasses":                   {"NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY", "NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY"},
	"prioritylevelconfigurations":       {"NAME TYPE NOMINALCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT AGE", "NAME TYPE NOMINALCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT AGE"},
	"replicasets":                       {"NAME DESIRED CURRENT READY AGE", "NAME DESIRED CURRENT READY AGE CONTAINERS IMAGES SELECTOR"},
	"replicationcontrollers":            {"NAME DESIRED CURRENT READY AGE", "NAME DESIRED CURRENT READY AGE CONTAINERS IMAGES SELECTOR"},
	"resourceclaims":                    {"NAME STATE AGE", "NAME STATE AGE"},
	"resourceclaimtemplates":            {"NAME AGE", "NAME AGE"},
	"resourcequotas":                    {"NAME REQUEST LIMIT AGE", "NAME REQUEST LIMIT AGE"},
	"resourceslices":                    {"NAME NODE DRIVER POOL AGE", "NAME NODE DRIVER POOL AGE"},
	"runtimeclasses":                    {"NAME HANDLER AGE", "NAME HANDLER AGE"},
	"secrets":                           {"NAME TYPE DATA AGE", "NAME TYPE DATA AGE"},
	"serviceaccounts":                   {"NAME AGE", "NAME AGE"},
	"servicecidrs":                      {"NAME CIDRS AGE", "NAME CIDRS AGE"},
	"services":                          {"NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE", "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE SELECTOR"},
	"statefulsets":                      {"NAME READY AGE", "NAME READY AGE CONTAINERS IMAGES"},
	"storageclasses":                    {"NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE", "NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE"},
	"storageversionmigrations":          {"NAME RESOURCE STATUS", "NAME RESOURCE STATUS"},
	"validatingadmissionpolicies":       {"NAME VALIDATIONS PARAMKIND AGE", "NAME VALIDATIONS PARAMKIND AGE"},
	"validatingadmissionpolicybindings": {"NAME POLICYNAME PARAMREF AGE", "NAME POLICYNAME PARAMREF AGE"},
	"validatingwebhookconfigurations":   {"NAME WEBHOOKS AGE", "NAME WEBHOOKS AGE"},
	"volumeattachments":                 {"NAME ATTACHER PV NODE ATTACHED AGE", "NAME ATTACHER PV NODE ATTACHED AGE"},
	"volumeattributesclasses":           {"NAME DRIVERNAME AGE", "NAME DRIVERNAME AGE"},
}

// kubectl runs kubectl against the shared server and returns its stdout
// and stderr; a failure fails the test.
func kubectl(t *testing.T, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", srv.Server.KubeconfigPath}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

func needKubectl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (v1.32 or later) to run the kubectl tests")
	}
}

// squeeze joins the fields of a line with single spaces.
func squeeze(line string) string { return strings.Join(strings.Fields(line), " ") }

// TestKubectlGetEveryResource runs kubectl get and get -o wide on the
// fixture of every resource: the columns are kube's, the row is the
// fixture's, and the deprecation warning of v1 Endpoints comes through.
func TestKubectlGetEveryResource(t *testing.T) {
	needKubectl(t)
	ns, names := tableFixtures(t)
	for _, res := range fixtureResources(t) {
		t.Run(res, func(t *testing.T) {
			want, ok := kubectlHeaders[res]
			if !ok {
				t.Fatalf("no expected header for %s: add kube's", res)
			}
			args := []string{"get", res, names[res]}
			if servedResources(t)[res].namespaced {
				args = append(args, "-n", ns)
			}
			if res == "events" {
				// kubectl get events by name prints no LAST SEEN
				// column: select the event instead.
				args = []string{"get", res, "-n", ns, "--field-selector=metadata.name=" + names[res]}
			}
			for i, extra := range [][]string{nil, {"-o", "wide"}} {
				out, stderr := kubectl(t, append(args, extra...)...)
				lines := strings.Split(strings.TrimSpace(out), "\n")
				row := names[res]
				if res == "events" && i == 0 {
					row = "a table test" // the name is a wide column
				}
				if len(lines) != 2 || squeeze(lines[0]) != want[i] || !strings.Contains(lines[1], row) {
					t.Errorf("kubectl %s:\n%s\nwant header %q", strings.Join(append(args, extra...), " "), out, want[i])
				}
				wantWarning := res == "endpoints"
				if got := strings.Contains(stderr, "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"); got != wantWarning {
					t.Errorf("stderr: %q", stderr)
				}
			}
		})
	}
}

// TestKubectlWatch runs kubectl get -w (Table rows over a watch) and
// checks that a ConfigMap created meanwhile shows up as a row.
func TestKubectlWatch(t *testing.T) {
	needKubectl(t)
	ns := namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", srv.Server.KubeconfigPath, "-n", ns, "get", "configmaps", "-w")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("kubectl get -w ended: %v", lines.Err())
		}
		if got := squeeze(lines.Text()); !strings.HasPrefix(got, want) {
			t.Fatalf("got %q, want %q...", got, want)
		}
	}
	expect("NAME DATA AGE")
	expect("kube-root-ca.crt 1 ")
	createConfigMaps(t, ns, 1, 1)
	expect("cm-0 1 ")
}
