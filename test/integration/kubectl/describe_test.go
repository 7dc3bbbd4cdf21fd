package kubectl

import "testing"

// TestGenerators creates objects with kubectl's generators (create
// deployment, service, secret, configmap, namespace, serviceaccount,
// quota) and expose, and reads back what they made.
func TestGenerators(t *testing.T) {
	needKubectl(t)
	runScenario(t, "generators", []step{
		{name: "deployment", args: inNS("create", "deployment", "gen", "--image=nginx:1.25", "--replicas=2", "--port=80")},
		{name: "deployment of two containers", args: inNS("create", "deployment", "pair", "--image=nginx:1.25", "--image=redis:7")},
		{name: "deployment dry run", args: inNS("create", "deployment", "dry", "--image=nginx", "--dry-run=server", "-o", "yaml")},
		{name: "service clusterip", args: inNS("create", "service", "clusterip", "internal", "--tcp=80:8080")},
		{name: "service headless", args: inNS("create", "service", "clusterip", "headless", "--clusterip=None", "--tcp=5432")},
		{name: "service nodeport", args: inNS("create", "service", "nodeport", "public", "--tcp=80:8080")},
		{name: "service loadbalancer", args: inNS("create", "service", "loadbalancer", "balanced", "--tcp=443:8443")},
		{name: "service externalname", args: inNS("create", "service", "externalname", "outside", "--external-name=example.com")},
		{name: "services", args: inNS("get", "services", "-o", "wide")},
		{name: "secret generic", args: inNS("create", "secret", "generic", "plain", "--from-literal=user=admin", "--from-literal=password=s3cret")},
		{name: "secret docker-registry", args: inNS("create", "secret", "docker-registry", "registry", "--docker-server=registry.example.com", "--docker-username=u", "--docker-password=p", "--docker-email=u@example.com")},
		{name: "secret tls", args: inNS("create", "secret", "tls", "tls", "--cert=testdata/tls.crt", "--key=testdata/tls.key")},
		{name: "secrets", args: inNS("get", "secrets")},
		{name: "configmap", args: inNS("create", "configmap", "files", "--from-literal=mode=test", "--from-file=prune.yaml=testdata/manifests/prune.yaml")},
		{name: "configmap read", args: inNS("get", "configmap", "files", "-o", "yaml")},
		{name: "namespace", args: []string{"create", "namespace", "{ns}-created"}},
		{name: "namespace read", args: []string{"get", "namespace", "{ns}-created", "-o", "yaml"}},
		{name: "serviceaccount", args: inNS("create", "serviceaccount", "robot")},
		{name: "serviceaccounts", args: inNS("get", "serviceaccounts")},
		{name: "quota", args: inNS("create", "quota", "small", "--hard=pods=5,configmaps=3")},
		{name: "generated objects", args: inNS("get", "deployment/gen", "deployment/pair", "service/public", "secret/registry", "serviceaccount/robot", "resourcequota/small", "-o", "yaml")},
		{name: "create replicated", args: inNS("create", "-f", "-"), manifest: "replicated.yaml"},
		{name: "expose deployment", args: inNS("expose", "deployment", "gen", "--port=80", "--target-port=8080", "--name=gen-svc")},
		{name: "expose deployment nodeport", args: inNS("expose", "deployment", "pair", "--port=6379", "--type=NodePort")},
		{name: "expose replicationcontroller", args: inNS("expose", "replicationcontroller", "legacy", "--port=81")},
		{name: "expose replicaset", args: inNS("expose", "replicaset", "frontend", "--port=82", "--name=frontend-svc")},
		{name: "expose service", args: inNS("expose", "service", "internal", "--port=83", "--name=internal-again")},
		{name: "expose daemonset", args: inNS("expose", "daemonset", "agent", "--port=84")},
		{name: "exposed", args: inNS("get", "services", "gen-svc", "pair", "legacy", "frontend-svc", "internal-again", "-o", `jsonpath={range .items[*]}{.metadata.name} {.spec.selector} {.spec.ports}{"\n"}{end}`)},
	})
}

// TestDescribe describes an object of every kind (describe reads events
// and related objects too), and shows events with get events and kubectl
// events.
func TestDescribe(t *testing.T) {
	needKubectl(t)
	runScenario(t, "describe", []step{
		{name: "create", args: inNS("create", "-f", "-"), manifest: "multi.yaml"},
		{name: "create list", args: inNS("create", "-f", "-"), manifest: "list.yaml"},
		{name: "create replicated", args: inNS("create", "-f", "-"), manifest: "replicated.yaml"},
		{name: "create others", args: inNS("create", "-f", "-"), manifest: "misc.yaml"},
		{name: "create cluster objects", args: []string{"create", "-f", "-"}, manifest: "cluster.yaml"},
		{name: "create event", args: inNS("create", "-f", "-"), manifest: "event.yaml"},
		{name: "deployment", args: inNS("describe", "deployment", "web")},
		{name: "statefulset", args: inNS("describe", "statefulset", "db")},
		{name: "replicaset", args: inNS("describe", "replicaset", "frontend")},
		{name: "replicationcontroller", args: inNS("describe", "replicationcontroller", "legacy")},
		{name: "daemonset", args: inNS("describe", "daemonset", "agent")},
		{name: "service", args: inNS("describe", "service", "web")},
		{name: "configmap", args: inNS("describe", "configmap", "settings")},
		{name: "secret", args: inNS("describe", "secret", "credentials")},
		{name: "lease", args: inNS("describe", "lease", "leader")},
		{name: "serviceaccount", args: inNS("describe", "serviceaccount", "default")},
		{name: "pod", args: inNS("describe", "pod", "standalone")},
		{name: "persistentvolumeclaim", args: inNS("describe", "persistentvolumeclaim", "data")},
		{name: "resourcequota", args: inNS("describe", "resourcequota", "quota")},
		{name: "limitrange", args: inNS("describe", "limitrange", "limits")},
		{name: "endpoints", args: inNS("describe", "endpoints", "web")},
		{name: "podtemplate", args: inNS("describe", "podtemplate", "template")},
		{name: "event", args: inNS("describe", "event", "web.scaled")},
		{name: "namespace", args: []string{"describe", "namespace", "{ns}"}},
		{name: "node", args: []string{"describe", "node", "{ns}-node"}},
		{name: "persistentvolume", args: []string{"describe", "persistentvolume", "{ns}-pv"}},
		{name: "by label", args: inNS("describe", "deployments,services", "-l", "app=demo")},
		{name: "missing", args: inNS("describe", "deployment", "nothere")},
		{name: "get events", args: inNS("get", "events")},
		{name: "get events wide", args: inNS("get", "events", "-o", "wide")},
		{name: "get events selected", args: inNS("get", "events", "--field-selector", "involvedObject.kind=Deployment,reason=ScalingReplicaSet", "-o", "name")},
		{name: "events", args: inNS("events")},
		{name: "events for", args: inNS("events", "--for", "deployment/web")},
		{name: "events of a type", args: inNS("events", "--types=Warning")},
	})
}
