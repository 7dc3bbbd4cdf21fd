package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// controllerManagerFlags run every on-by-default controller, with leader
// election, the CSR signer, the service-account token signer and node
// CIDR allocation, as kubeadm runs kube-controller-manager: each
// controller calls the API as its own service account (TokenRequest), so
// kube's bootstrap controller roles are what lets it work.
func controllerManagerFlags(p *pki, port int) []flag {
	return append(componentFlags(p, "kube-controller-manager", port),
		flag{"controllers", "*"},
		flag{"cluster-name", "e2e"},
		flag{"cluster-signing-cert-file", p.path("signing-ca.crt")},
		flag{"cluster-signing-key-file", p.path("signing-ca.key")},
		flag{"service-account-private-key-file", p.path("sa.key")},
		flag{"root-ca-file", p.path("ca.crt")},
		flag{"use-service-account-credentials", "true"},
		flag{"allocate-node-cidrs", "true"},
		flag{"cluster-cidr", clusterCIDR},
		flag{"service-cluster-ip-range", serviceCIDR},
	)
}

// componentFlags are those both components take: the component's own
// kubeconfig (its user, see componentUsers) for their API calls and their
// delegated authentication and authorization, leader election, and their
// own secure port (its /healthz says when they are up).
func componentFlags(p *pki, component string, port int) []flag {
	kubeconfig := p.path(component + ".conf")
	return []flag{
		{"kubeconfig", kubeconfig},
		{"authentication-kubeconfig", kubeconfig},
		{"authorization-kubeconfig", kubeconfig},
		{"leader-elect", "true"},
		{"bind-address", "127.0.0.1"},
		{"secure-port", strconv.Itoa(port)},
		{"v", "2"},
	}
}

// startComponents starts kube-controller-manager and kube-scheduler from
// $E2E_BIN and waits until both are healthy.
func startComponents(t *testing.T, dir string, p *pki) []*process {
	return startComponentsWith(t, dir, func(name string, port int) []flag {
		if name == "kube-controller-manager" {
			return controllerManagerFlags(p, port)
		}
		return componentFlags(p, name, port)
	})
}

// startComponentsWith starts kube-controller-manager and kube-scheduler
// from $E2E_BIN, each with the flags flagsFor gives it (port: its secure
// port), and waits until both are healthy.
func startComponentsWith(t *testing.T, dir string, flagsFor func(name string, port int) []flag) []*process {
	bin := os.Getenv("E2E_BIN")
	if bin == "" {
		t.Skip("E2E_BIN is not set: run hack/e2e.sh, or set E2E_BIN=$(hack/e2e-components.sh)")
	}
	var procs []*process
	for _, name := range []string{"kube-controller-manager", "kube-scheduler"} {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		flags := flagsFor(name, port)
		args := make([]string, len(flags))
		for i, f := range flags {
			args[i] = f.String()
		}
		proc, err := startProcess(name, filepath.Join(dir, name+".log"), filepath.Join(bin, name), args...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(proc.stop)
		if err := waitHealthy(t.Context(), proc, fmt.Sprintf("https://127.0.0.1:%d/healthz", port), "", time.Minute); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, proc)
	}
	return procs
}

// badLogLines are what neither component may log: each means a resource
// it uses is not served, or an informer cannot list or watch.
var badLogLines = []string{
	"could not find the requested resource",
	"Failed to watch",
	"failed to list",
	"Failed to list",
	"panic",
}

// isBadLogLine reports whether line says one of badLogLines.
func isBadLogLine(line string) bool {
	for _, b := range badLogLines {
		if strings.Contains(line, b) {
			return true
		}
	}
	return false
}

// testLeaderLeases: each component holds its leader-election Lease in
// kube-system and keeps renewing it (every 2 s by default).
func (c *cluster) testLeaderLeases(t *testing.T) {
	for _, name := range []string{"kube-controller-manager", "kube-scheduler"} {
		t.Run(name, func(t *testing.T) {
			leases := c.client.CoordinationV1().Leases(metav1.NamespaceSystem)
			first, err := leases.Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s's leader-election lease: %v", name, err)
			}
			holder := ptr.Deref(first.Spec.HolderIdentity, "")
			if !strings.HasPrefix(holder, hostname()) || first.Spec.RenewTime == nil {
				t.Fatalf("lease kube-system/%s: holder %q, renewTime %v; want held by this host's %s", name, holder, first.Spec.RenewTime, name)
			}
			c.eventually(t, 30*time.Second, "lease kube-system/"+name+" renewed by "+holder, "", func() (string, bool, error) {
				l, err := leases.Get(t.Context(), name, metav1.GetOptions{})
				if err != nil {
					return "", false, err
				}
				seen := fmt.Sprintf("holder %q renewTime %v (first seen %v)", ptr.Deref(l.Spec.HolderIdentity, ""), l.Spec.RenewTime, first.Spec.RenewTime)
				return seen, ptr.Deref(l.Spec.HolderIdentity, "") == holder && l.Spec.RenewTime != nil &&
					l.Spec.RenewTime.After(first.Spec.RenewTime.Time), nil
			})
		})
	}
}

// testComponentLogs: neither component has logged a resource it could not
// find, or an informer that could not list or watch, during the whole run.
func (c *cluster) testComponentLogs(t *testing.T) {
	for _, p := range c.components {
		if ended, how := p.exited(); ended {
			t.Errorf("%s exited during the test (%s); its log ends:\n%s", p.name, how, tail(p, 30))
		}
		bad, total, err := p.logLines(isBadLogLine)
		if err != nil || total < 10 {
			t.Errorf("%s's log %s: %d lines, %v; want the log of a whole run", p.name, p.log, total, err)
		}
		if len(bad) == 0 {
			continue
		}
		shown := distinct(bad)
		t.Errorf("%s logged %d lines (%d distinct) that say a resource is not served or an informer cannot list or watch (%s)\n"+
			"requests answered 404: %s\n%s", p.name, len(bad), len(shown), p.log, strings.Join(notFound(bad), ", "),
			strings.Join(shown[:min(len(shown), 40)], "\n"))
	}
}

// notFoundRequest is how client-go names a request answered 404.
var notFoundRequest = regexp.MustCompile(`could not find the requested resource \((\w+) ([^)]+)\)`)

// notFound returns the requests (verb resource.group) that lines say were
// answered 404, sorted.
func notFound(lines []string) []string {
	var reqs []string
	for _, l := range lines {
		if m := notFoundRequest.FindStringSubmatch(l); m != nil {
			reqs = append(reqs, m[1]+" "+m[2])
		}
	}
	slices.Sort(reqs)
	return slices.Compact(reqs)
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
