package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	storagemigrationv1beta1 "k8s.io/api/storagemigration/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// olderProto decodes the versions kube-apiserver v1.37.2 stores some
// resources at that are older than the ones this server serves and
// stores (k8s.io/kubernetes pkg/kubeapiserver, ResourceEncodingOverrides:
// clustertrustbundles and podcertificaterequests at certificates/v1beta1,
// storageversionmigrations at v1beta1, devicetaintrules at resource
// v1beta2), so that their values are read too.
// It is built on the first value read at one of them, not at every start.
var olderProto = sync.OnceValue(func() *protobuf.Serializer {
	s := runtime.NewScheme()
	utilruntime.Must(certificatesv1beta1.AddToScheme(s))
	utilruntime.Must(resourcev1beta2.AddToScheme(s))
	utilruntime.Must(storagemigrationv1beta1.AddToScheme(s))
	return protobuf.NewSerializer(s, s)
})

// olderAPIVersions are the apiVersions olderProto decodes.
var olderAPIVersions = map[string]bool{
	certificatesv1beta1.SchemeGroupVersion.String():     true,
	resourcev1beta2.SchemeGroupVersion.String():         true,
	storagemigrationv1beta1.SchemeGroupVersion.String(): true,
}

var apiVersionKey = []byte(`"apiVersion":"`)

// isOlderVersionJSON tells whether a JSON value is of one of those versions, from
// the apiVersion near its start (kube writes kind and apiVersion first).
func isOlderVersionJSON(data []byte) bool {
	head := data[:min(len(data), 160)]
	i := bytes.Index(head, apiVersionKey)
	if i < 0 {
		return false
	}
	rest := head[i+len(apiVersionKey):]
	end := bytes.IndexByte(rest, '"')
	return end > 0 && olderAPIVersions[string(rest[:end])]
}

// olderVersionJSON decodes a JSON value of one of those versions into newFunc's
// type, and returns the JSON of that.
func olderVersionJSON(data []byte, newFunc func() runtime.Object, served runtime.ObjectTyper) ([]byte, error) {
	into := newFunc()
	kinds, _, err := served.ObjectKinds(into)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return nil, err
	}
	into.GetObjectKind().SetGroupVersionKind(kinds[0])
	return storage.Encode(into)
}

// decodeOlderVersion decodes a protobuf value stored at one of
// those versions into newFunc's type, through JSON: the versions kube
// stores there differ from the served ones by their name only (a
// graduation), and fields the served version lacks are dropped, as a
// conversion would.
func decodeOlderVersion(stored []byte, newFunc func() runtime.Object, served runtime.ObjectTyper) (runtime.Object, error) {
	older, _, err := olderProto().Decode(stored, nil, nil)
	if err != nil {
		return nil, err
	}
	into := newFunc()
	kinds, _, err := served.ObjectKinds(into)
	if err != nil {
		return nil, err
	}
	got := older.GetObjectKind().GroupVersionKind()
	if got.GroupKind() != kinds[0].GroupKind() {
		return nil, fmt.Errorf("codec: a stored %s is not a %s", got, kinds[0])
	}
	data, err := json.Marshal(older)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return nil, err
	}
	into.GetObjectKind().SetGroupVersionKind(kinds[0])
	return into, nil
}

// restoreEmbeddedKinds gives embedded objects back the kind protobuf
// does not carry (their TypeMeta has no protobuf field), where kube's
// conversion to the served version sets it on every read: a
// StatefulSet's volumeClaimTemplates (k8s.io/kubernetes pkg/apis/apps/v1,
// Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec, issue 87583).
func restoreEmbeddedKinds(obj runtime.Object) {
	if sts, ok := obj.(*appsv1.StatefulSet); ok {
		for i := range sts.Spec.VolumeClaimTemplates {
			sts.Spec.VolumeClaimTemplates[i].APIVersion = "v1"
			sts.Spec.VolumeClaimTemplates[i].Kind = "PersistentVolumeClaim"
		}
	}
}
