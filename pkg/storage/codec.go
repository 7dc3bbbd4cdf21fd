package storage

import "k8s.io/apimachinery/pkg/runtime"

// Media types a Codec may store objects in: kube-apiserver's
// --storage-media-type values.
const (
	MediaTypeJSON     = "application/json"
	MediaTypeYAML     = "application/yaml"
	MediaTypeProtobuf = "application/vnd.kubernetes.protobuf"
)

// Codec turns an object into the value stored for it in etcd, and a stored
// value back into the JSON every store hands upwards (Object), as kube's
// storage codec does. It sits above encryption: Encode's result is what
// the value transformer encrypts, Decode's input what it decrypted.
type Codec interface {
	// Encode returns the value to store for obj, whose JSON encoding
	// (Encode, without resourceVersion) is data. It may return data itself.
	Encode(obj runtime.Object, data []byte) ([]byte, error)
	// Decode returns the JSON of a stored value, in any media type a
	// kube-apiserver may have written (JSON, YAML, kube's protobuf), and
	// whether it is stored in another media type than Encode writes, so
	// that an update rewrites it even when nothing else changes (kube
	// compares the stored bytes). newFunc returns an empty object of the
	// resource's Go type to decode into. It never modifies stored.
	Decode(stored []byte, newFunc func() runtime.Object) (data []byte, other bool, err error)
}
