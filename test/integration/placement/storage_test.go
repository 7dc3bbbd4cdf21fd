package placement

const (
	storageClasses  = "/apis/storage.k8s.io/v1/storageclasses"
	csiDrivers      = "/apis/storage.k8s.io/v1/csidrivers"
	csiNodes        = "/apis/storage.k8s.io/v1/csinodes"
	capacities      = "/apis/storage.k8s.io/v1/namespaces/NS/csistoragecapacities"
	attachments     = "/apis/storage.k8s.io/v1/volumeattachments"
	attributeClass  = "/apis/storage.k8s.io/v1/volumeattributesclasses"
	onlyNS          = "?fieldSelector=metadata.name%3D"
	tableOfOne      = "?includeObject=None&fieldSelector=metadata.name%3D"
	badName         = `"metadata":{"name":"Bad_Name"}`
	rfc1123Subdom   = "a lowercase RFC 1123 subdomain"
	storageClassMin = `{"metadata":{"name":"sc-NS"},"provisioner":"example.com/foo"}`
)

func init() {
	transcripts["storageclasses"] = []step{
		create("create-minimal", storageClasses, storageClassMin),
		create("already-exists", storageClasses, storageClassMin),
		get("get", storageClasses+"/sc-NS"),
		create("many-errors", storageClasses, `{`+badName+`,"provisioner":"","reclaimPolicy":"Recycle","volumeBindingMode":"Later","parameters":{"":"x"}}`),
		create("bad-provisioner-and-topologies", storageClasses, `{"metadata":{"name":"sc2-NS"},"provisioner":"Bad Prov!",
			"allowedTopologies":[{"matchLabelExpressions":[{"key":"zone","values":[]}]},{"matchLabelExpressions":[{"key":"","values":["a","a"]},{"key":"","values":["b"]}]}]}`),
		create("empty-policies", storageClasses, `{"metadata":{"name":"sc3-NS"},"provisioner":"a/b","reclaimPolicy":"","volumeBindingMode":""}`),
		create("empty-and-equal-terms", storageClasses, `{"metadata":{"name":"sc4-NS"},"provisioner":"a","allowedTopologies":[{},{"matchLabelExpressions":[{"key":"k","values":["b"]}]},{"matchLabelExpressions":[{"key":"k","values":["b"]}]}]}`),
		create("deprecated-topology-label-warns", storageClasses, `{"metadata":{"name":"sc5-NS","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},
			"provisioner":"a","reclaimPolicy":"Retain","volumeBindingMode":"WaitForFirstConsumer","allowVolumeExpansion":true,
			"allowedTopologies":[{"matchLabelExpressions":[{"key":"failure-domain.beta.kubernetes.io/zone","values":["z1"]}]}]}`),
		put("immutable-fields", storageClasses+"/sc-NS", `{"metadata":{"name":"sc-NS"},"provisioner":"other/x","parameters":{"a":"b"},"reclaimPolicy":"Retain","volumeBindingMode":"WaitForFirstConsumer"}`),
		patch("provisioner-emptied", storageClasses+"/sc-NS", `{"provisioner":""}`),
		patch("mutable-fields", storageClasses+"/sc-NS", `{"metadata":{"labels":{"a":"b"}},"allowVolumeExpansion":true,"mountOptions":["ro"]}`),
		get("list-one", storageClasses+onlyNS+"sc-NS"),
		get("unknown-field-selector", storageClasses+"?fieldSelector=provisioner%3Da"),
		table("table-of-the-default-in-a-list", storageClasses+tableOfOne+"sc5-NS"),
		table("table-of-nothing", storageClasses+tableOfOne+"none-NS"),
		table("table-of-the-default-alone", storageClasses+"/sc5-NS?includeObject=None"),
		del("delete", storageClasses+"/sc-NS"),
		del("delete-missing", storageClasses+"/sc-NS"),
	}
	transcripts["csidrivers"] = []step{
		create("create-minimal", csiDrivers, `{"metadata":{"name":"csi.NS"},"spec":{}}`),
		create("many-errors", csiDrivers, `{`+badName+`,"spec":{"fsGroupPolicy":"Sometimes","volumeLifecycleModes":["Persistent","Forever"],
			"tokenRequests":[{"audience":"a","expirationSeconds":60},{"audience":"a"},{"audience":"","expirationSeconds":5000000000}],
			"nodeAllocatableUpdatePeriodSeconds":5}}`),
		create("token-in-secrets-without-requests", csiDrivers, `{"metadata":{"name":"csi2.NS"},"spec":{"serviceAccountTokenInSecrets":true}}`),
		create("token-requests-warn", csiDrivers, `{"metadata":{"name":"csi3.NS"},"spec":{"tokenRequests":[{"audience":"vault"}],"attachRequired":false,"podInfoOnMount":true,"volumeLifecycleModes":["Ephemeral","Persistent"]}}`),
		put("update-needs-a-resource-version", csiDrivers+"/csi.NS", `{"metadata":{"name":"csi.NS"},"spec":{}}`),
		patch("immutable-fields", csiDrivers+"/csi.NS", `{"spec":{"attachRequired":false,"volumeLifecycleModes":["Ephemeral"]}}`),
		patch("spec-change-bumps-generation", csiDrivers+"/csi.NS", `{"spec":{"podInfoOnMount":true,"storageCapacity":true}}`),
		patch("metadata-change-keeps-generation", csiDrivers+"/csi.NS", `{"metadata":{"labels":{"a":"b"}}}`),
		table("table", csiDrivers+tableOfOne+"csi3.NS"),
		del("delete", csiDrivers+"/csi.NS"),
	}
	transcripts["csinodes"] = []step{
		create("create", csiNodes, `{"metadata":{"name":"node-NS"},"spec":{"drivers":[{"name":"csi.example.com","nodeID":"n1","topologyKeys":["topology.kubernetes.io/zone"],"allocatable":{"count":3}}]},"status":{"storageHealth":[{"name":"x"}]}}`),
		create("many-errors", csiNodes, `{`+badName+`,"spec":{"drivers":[{"name":"","nodeID":""},{"name":"Bad_Driver","nodeID":"`+longString(257)+`","allocatable":{"count":-1},"topologyKeys":["","k","k","bad key"]},{"name":"Bad_Driver","nodeID":"x"}]}}`),
		create("long-driver-name", csiNodes, `{"metadata":{"name":"node2-NS"},"spec":{"drivers":[{"name":"`+longString(64)+`","nodeID":"n"}]}}`),
		patch("driver-changed", csiNodes+"/node-NS", `{"spec":{"drivers":[{"name":"csi.example.com","nodeID":"n2","topologyKeys":["topology.kubernetes.io/zone"],"allocatable":{"count":3}}]}}`),
		patch("allocatable-changes", csiNodes+"/node-NS", `{"spec":{"drivers":[{"name":"csi.example.com","nodeID":"n1","topologyKeys":["topology.kubernetes.io/zone"],"allocatable":{"count":5}}]}}`),
		patch("status-storage-health-dropped", csiNodes+"/node-NS/status", `{"metadata":{"labels":{"a":"b"}},"status":{"storageHealth":[{"name":"csi.example.com"}]}}`),
		get("status-get", csiNodes+"/node-NS/status"),
		table("table", csiNodes+tableOfOne+"node-NS"),
		del("delete", csiNodes+"/node-NS"),
	}
	transcripts["csistoragecapacities"] = []step{
		create("create-minimal", capacities, `{"metadata":{"name":"cap"},"storageClassName":"sc"}`),
		create("many-errors", capacities, `{`+badName+`,"storageClassName":"Bad_Class","capacity":"-1Gi",
			"nodeTopology":{"matchLabels":{"bad key":"v"},"matchExpressions":[{"key":"k","operator":"Maybe"}]}}`),
		create("deprecated-labels-warn", capacities, `{"metadata":{"name":"cap2"},"storageClassName":"sc","capacity":"10Gi","maximumVolumeSize":"1Gi",
			"nodeTopology":{"matchLabels":{"beta.kubernetes.io/os":"linux"},"matchExpressions":[{"key":"failure-domain.beta.kubernetes.io/zone","operator":"In","values":["z"]}]}}`),
		patch("immutable-fields", capacities+"/cap", `{"storageClassName":"other","nodeTopology":{"matchLabels":{"a":"b"}}}`),
		patch("capacity-changes", capacities+"/cap", `{"capacity":"5Gi"}`),
		put("update-needs-a-resource-version", capacities+"/cap", `{"metadata":{"name":"cap"},"storageClassName":"sc"}`),
		table("table", capacities+tableOfOne+"cap2"),
		table("default-table-of-nothing", capacities+tableOfOne+"none"),
		get("field-selector-namespace", capacities+"?fieldSelector=metadata.namespace%3DNS%2Cmetadata.name%3Dcap"),
		get("unknown-field-selector", capacities+"?fieldSelector=storageClassName%3Dsc"),
		del("delete", capacities+"/cap"),
	}
	transcripts["volumeattachments"] = []step{
		create("create-minimal", attachments, `{"metadata":{"name":"va-NS"},"spec":{"attacher":"csi.example.com","nodeName":"node1","source":{"persistentVolumeName":"pv1"}},"status":{"attached":true}}`),
		create("many-errors", attachments, `{`+badName+`,"spec":{"attacher":"","nodeName":"Bad_Node","source":{}},"status":{"attachError":{"message":"x","errorCode":-1}}}`),
		create("bad-attacher-two-sources", attachments, `{"metadata":{"name":"va2-NS"},"spec":{"attacher":"Bad_Attacher!`+longString(60)+`","nodeName":"n","source":{"persistentVolumeName":"pv1","inlineVolumeSpec":{"accessModes":["ReadWriteOnce"]}}}}`),
		create("empty-volume-name", attachments, `{"metadata":{"name":"va3-NS"},"spec":{"attacher":"a","nodeName":"n","source":{"persistentVolumeName":""}}}`),
		create("inline-spec-errors", attachments, `{"metadata":{"name":"va4-NS"},"spec":{"attacher":"a","nodeName":"n","source":{"inlineVolumeSpec":{
			"capacity":{"storage":"1Gi"},"claimRef":{"name":"c"},"persistentVolumeReclaimPolicy":"Delete","storageClassName":"x","volumeMode":"Block",
			"nfs":{"server":"s","path":"/p"}}}}}`),
		create("inline-spec", attachments, `{"metadata":{"name":"va5-NS"},"spec":{"attacher":"csi.example.com","nodeName":"n","source":{"inlineVolumeSpec":{
			"accessModes":["ReadWriteOnce"],"csi":{"driver":"csi.example.com","volumeHandle":"h1"}}}}}`),
		patch("spec-immutable", attachments+"/va-NS", `{"spec":{"nodeName":"node2"}}`),
		patch("spec-immutable-attacher-emptied", attachments+"/va-NS", `{"spec":{"attacher":""}}`),
		patch("main-endpoint-ignores-status", attachments+"/va-NS", `{"metadata":{"labels":{"a":"b"}},"status":{"attached":true}}`),
		patch("status", attachments+"/va-NS/status", `{"metadata":{"labels":{"c":"d"}},"spec":{"nodeName":"ignored"},"status":{"attached":true,"attachmentMetadata":{"k":"v"}}}`),
		patch("status-errors", attachments+"/va-NS/status", `{"status":{"detachError":{"message":"`+longString(1025)+`","errorCode":-2}}}`),
		put("update-needs-a-resource-version", attachments+"/va-NS", `{"metadata":{"name":"va-NS"},"spec":{"attacher":"csi.example.com","nodeName":"node1","source":{"persistentVolumeName":"pv1"}}}`),
		table("table", attachments+tableOfOne+"va-NS"),
		del("delete", attachments+"/va-NS"),
	}
	transcripts["volumeattributesclasses"] = []step{
		create("create-minimal", attributeClass, `{"metadata":{"name":"vac-NS"},"driverName":"csi.example.com","parameters":{"iops":"100"}}`),
		create("many-errors", attributeClass, `{`+badName+`,"driverName":""}`),
		create("bad-driver-and-empty-key", attributeClass, `{"metadata":{"name":"vac2-NS"},"driverName":"Bad Driver","parameters":{"":"x"}}`),
		patch("immutable-fields", attributeClass+"/vac-NS", `{"driverName":"other","parameters":{"iops":"200"}}`),
		patch("labels-change", attributeClass+"/vac-NS", `{"metadata":{"labels":{"a":"b"}}}`),
		table("table", attributeClass+tableOfOne+"vac-NS"),
		del("delete-waits-for-the-finalizer", attributeClass+"/vac-NS"),
		patch("finalizer-removed", attributeClass+"/vac-NS", `{"metadata":{"finalizers":null}}`),
		get("gone", attributeClass+"/vac-NS"),
	}
}

const claims = "/api/v1/namespaces/NS/persistentvolumeclaims"

func claim(name, class, size string) string {
	return `{"metadata":{"name":"` + name + `"},"spec":{"storageClassName":"` + class + `","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"` + size + `"}}}}`
}

func init() {
	// kube's PersistentVolumeClaimResize admission: only bound claims of
	// a class that allows expansion may ask for more.
	transcripts["claim-resize"] = []step{
		create("expandable-class", storageClasses, `{"metadata":{"name":"exp-NS"},"provisioner":"a","allowVolumeExpansion":true}`),
		create("fixed-class", storageClasses, `{"metadata":{"name":"fixed-NS"},"provisioner":"a"}`),
		create("claim", claims, claim("c1", "exp-NS", "1Gi")),
		create("claim-fixed", claims, claim("c2", "fixed-NS", "1Gi")),
		create("claim-missing-class", claims, claim("c3", "missing-NS", "1Gi")),
		patch("grow-unbound", claims+"/c1", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`),
		patch("bind", claims+"/c1/status", `{"status":{"phase":"Bound"}}`),
		patch("bind-fixed", claims+"/c2/status", `{"status":{"phase":"Bound"}}`),
		patch("bind-missing", claims+"/c3/status", `{"status":{"phase":"Bound"}}`),
		patch("grow-bound", claims+"/c1", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`),
		patch("shrink-bound", claims+"/c1", `{"spec":{"resources":{"requests":{"storage":"1Gi"}}}}`),
		patch("grow-fixed-class", claims+"/c2", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`),
		patch("grow-missing-class", claims+"/c3", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`),
		patch("grow-with-beta-annotation-class", claims+"/c3", `{"metadata":{"annotations":{"volume.beta.kubernetes.io/storage-class":"exp-NS"}},"spec":{"resources":{"requests":{"storage":"3Gi"}}}}`),
	}
}

func longString(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a'
	}
	return string(b)
}
