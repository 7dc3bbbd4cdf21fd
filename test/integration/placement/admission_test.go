package placement

const pods = "/api/v1/namespaces/NS/pods"

// pod is a pod body: name, then spec fields (JSON members) besides its
// one container.
func pod(name, spec string) string {
	if spec != "" {
		spec += ","
	}
	return `{"metadata":{"name":"` + name + `"},"spec":{` + spec + `"containers":[{"name":"c","image":"nginx"}]}}`
}

// settled marks a step that reads what the step before wrote through an
// admission plugin of kube's (an informer, a moment late).
func settled(s step) step {
	s.Settle = true
	return s
}

// The admission steps kube runs on new pods and claims with the objects
// of these groups: Priority (a pod's priority from its class),
// RuntimeClass (its overhead and scheduling from its runtime class) and
// DefaultStorageClass (a claim's class). The transcripts run before the
// package's parallel tests, so the default classes they make meet no
// other test's pods or claims.
func init() {
	transcripts["pod-priority"] = []step{
		create("class", priorityClasses, `{"metadata":{"name":"high-NS"},"value":1000,"preemptionPolicy":"Never"}`),
		settled(create("pod-of-the-class", pods, pod("p1", `"priorityClassName":"high-NS"`))),
		create("pod-of-a-missing-class", pods, pod("p2", `"priorityClassName":"missing-NS"`)),
		create("pod-setting-a-priority", pods, pod("p3", `"priority":5`)),
		create("pod-setting-its-class-priority", pods, pod("p4", `"priorityClassName":"high-NS","priority":1000`)),
		create("pod-setting-another-policy", pods, pod("p5", `"priorityClassName":"high-NS","preemptionPolicy":"PreemptLowerPriority"`)),
		create("pod-of-a-system-class", pods, pod("p6", `"priorityClassName":"system-node-critical"`)),
		create("pod-without-class", pods, pod("p7", "")),
		create("pod-with-a-generated-name", pods, `{"metadata":{"generateName":"gen-"},"spec":{"priorityClassName":"missing","containers":[{"name":"c","image":"nginx"}]}}`),
		create("default-class", priorityClasses, `{"metadata":{"name":"default-NS"},"value":7,"globalDefault":true}`),
		settled(create("pod-gets-the-default", pods, pod("p8", ""))),
		create("pod-setting-zero-against-the-default", pods, pod("p9", `"priority":0`)),
		del("default-class-gone", priorityClasses+"/default-NS"),
	}
	transcripts["pod-runtime-class"] = []step{
		create("class", runtimeClasses, `{"metadata":{"name":"kata-NS"},"handler":"kata","overhead":{"podFixed":{"cpu":"250m","memory":"120Mi"}},
			"scheduling":{"nodeSelector":{"runtime":"kata"},"tolerations":[{"key":"kata","operator":"Exists","effect":"NoSchedule"},{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute"}]}}`),
		create("class-without-overhead", runtimeClasses, `{"metadata":{"name":"runc-NS"},"handler":"runc"}`),
		settled(create("pod-of-the-class", pods, pod("p1", `"runtimeClassName":"kata-NS","nodeSelector":{"disk":"ssd"},"tolerations":[{"key":"a","operator":"Exists"}]`))),
		create("pod-of-a-missing-class", pods, pod("p2", `"runtimeClassName":"missing-NS"`)),
		create("pod-with-another-overhead", pods, pod("p3", `"runtimeClassName":"kata-NS","overhead":{"cpu":"1"}`)),
		create("pod-with-the-class-overhead", pods, pod("p4", `"runtimeClassName":"kata-NS","overhead":{"cpu":"0.25","memory":"120Mi"}`)),
		create("pod-with-a-conflicting-selector", pods, pod("p5", `"runtimeClassName":"kata-NS","nodeSelector":{"runtime":"runc"}`)),
		create("pod-with-overhead-and-no-class", pods, pod("p6", `"overhead":{"cpu":"1"}`)),
		create("pod-with-overhead-and-a-class-without", pods, pod("p7", `"runtimeClassName":"runc-NS","overhead":{"cpu":"1"}`)),
		create("pod-of-the-class-without-overhead", pods, pod("p8", `"runtimeClassName":"runc-NS"`)),
	}
	transcripts["claim-default-class"] = []step{
		create("claim-before-any-default", claims, `{"metadata":{"name":"c0"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`),
		create("default-class", storageClasses, `{"metadata":{"name":"default-NS","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"a"}`),
		settled(create("claim-without-class", claims, `{"metadata":{"name":"c1"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`)),
		create("claim-choosing-no-class", claims, claim("c2", "", "1Gi")),
		create("claim-with-a-beta-annotation", claims, `{"metadata":{"name":"c3","annotations":{"volume.beta.kubernetes.io/storage-class":"other"}},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`),
		del("default-class-gone", storageClasses+"/default-NS"),
	}
}
