package app

import "strings"

// refusedReasons say why each kube-apiserver flag this server does not
// register is refused: by name, or by a prefix ending in "*" for a family
// of flags. A test checks that every refused flag has a reason and every
// reason a flag.
var refusedReasons = map[string]string{
	"audit-log-batch-*":                           "batch mode writes its buffered events one at a time (kube's defaults for the log); other batch sizes, waits and throttling are not implemented",
	"audit-log-truncate-*":                        "audit events are never truncated",
	"audit-log-version":                           "audit events are written as audit.k8s.io/v1",
	"audit-webhook-*":                             "audit events go to the log file only: the webhook backend is not implemented",
	"authentication-token-webhook-*":              "webhook token authentication is not implemented",
	"authorization-policy-file":                   "ABAC authorization is not implemented",
	"cors-allowed-origins":                        "CORS is not served",
	"debug-socket-path":                           "profiling over a unix socket is not served",
	"delete-collection-workers":                   "deletecollection deletes with one worker",
	"disable-http2-serving":                       "HTTP/2 is always served",
	"egress-selector-config-file":                 "egress selection (konnectivity) is not implemented: kubelets and webhooks are dialled directly",
	"emulated-version":                            "this server serves kube 1.37's API only",
	"emulation-forward-compatible":                "this server serves kube 1.37's API only",
	"runtime-config-emulation-forward-compatible": "this server serves kube 1.37's API only",
	"min-compatibility-version":                   "this server serves kube 1.37's API only",
	"enable-garbage-collector":                    "deletions always leave dependents to a garbage collector (kube-controller-manager's, or --garbage-collector), as kube's default",
	"enable-logs-handler":                         "/logs is not served",
	"encryption-provider-config-automatic-reload": "--encryption-provider-config is read once, at start",
	"external-hostname":                           "the host name of generated URLs is not configurable",
	"kubernetes-service-node-port":                "the kubernetes Service is of type ClusterIP",
	"livez-grace-period":                          "/livez has no grace period",
	"max-connection-bytes-per-sec":                "connections are not rate limited",
	"peer-*":                                      "mixed-version proxying between replicas is not implemented: every replica serves the whole API",
	"service-account-signing-endpoint":            "external service account token signers are not supported: use --service-account-signing-key-file",
	"shutdown-send-retry-after":                   "requests arriving during shutdown are served while the server still accepts them",
	"shutdown-watch-termination-grace-period":     "watches end at once at shutdown, with a clean end of stream",
	"strict-transport-security-directives":        "HSTS headers are not sent",
	"tls-sni-cert-key":                            "one serving certificate is served (--tls-cert-file)",
	"tracing-config-file":                         "OpenTelemetry tracing is not implemented",
	"coordinated-leadership-*":                    "coordinated leader election is not implemented",
	"log-json-*":                                  "log output is not split or buffered",
	"log-text-*":                                  "log output is not split or buffered",
	"allow-metric-labels*":                        "kube's metric controls are not implemented",
	"disabled-metrics":                            "kube's metric controls are not implemented",
	"show-hidden-metrics-for-version":             "kube's metric controls are not implemented",
}

// refusedFlagReason is the reason of flag name: its own, else its
// longest matching prefix's.
func refusedFlagReason(name string) string {
	if r, ok := refusedReasons[name]; ok {
		return r
	}
	best, reason := "", "not implemented"
	for k, r := range refusedReasons {
		prefix, ok := strings.CutSuffix(k, "*")
		if ok && strings.HasPrefix(name, prefix) && len(prefix) > len(best) {
			best, reason = prefix, r
		}
	}
	return reason
}
