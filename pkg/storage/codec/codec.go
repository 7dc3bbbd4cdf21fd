// Package codec is the storage codec of miniapiserver: it turns objects into
// the values kube-apiserver stores in etcd (JSON, YAML, or kube's protobuf
// envelope, "k8s\x00" followed by a runtime.Unknown), and any such value
// back into the JSON the stores hand upwards. The protobuf rules are
// k8s.io/apimachinery's serializer, the one kube-apiserver stores with, so
// that either server reads what the other wrote.
//
// Layers: a leaf under pkg/storage (codec -> storage); cmd builds one per
// media type and hands it to the etcd3 stores.
package codec

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// protobufPrefix starts every value kube's protobuf serializer writes.
var protobufPrefix = []byte{'k', '8', 's', 0}

// Codec stores objects in one media type and reads every media type. It is
// safe for concurrent use.
type Codec struct {
	mediaType string
	scheme    *runtime.Scheme
	proto     *protobuf.Serializer
}

var _ storage.Codec = (*Codec)(nil)

// New returns the codec that stores objects as mediaType (one of kube's
// --storage-media-type values), with the Go types of scheme. Objects
// without a protobuf encoding (custom resources, which kube always stores
// as JSON) are stored as JSON whatever mediaType says.
func New(scheme *runtime.Scheme, mediaType string) (*Codec, error) {
	switch mediaType {
	case storage.MediaTypeJSON, storage.MediaTypeYAML, storage.MediaTypeProtobuf:
	default:
		return nil, fmt.Errorf("codec: media type %q is not one of %s, %s, %s", mediaType,
			storage.MediaTypeJSON, storage.MediaTypeYAML, storage.MediaTypeProtobuf)
	}
	return &Codec{mediaType: mediaType, scheme: scheme, proto: protobuf.NewSerializer(scheme, scheme)}, nil
}

// MediaType is the media type the codec stores objects in.
func (c *Codec) MediaType() string { return c.mediaType }

// Encode implements storage.Codec.
func (c *Codec) Encode(obj runtime.Object, data []byte) ([]byte, error) {
	switch {
	case c.mediaType == storage.MediaTypeJSON, isUnstructured(obj):
		return data, nil // custom resources: JSON whatever the media type, as kube
	case c.mediaType == storage.MediaTypeYAML:
		return yaml.JSONToYAML(data)
	case !hasProtobuf(obj):
		return data, nil
	}
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		// The envelope names the kind: a value without one is one kube
		// cannot read.
		return nil, fmt.Errorf("codec: cannot store a %T without its kind as protobuf", obj)
	}
	var buf bytes.Buffer
	buf.Grow(len(data)) // protobuf is smaller than JSON
	if err := c.proto.Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("codec: encoding %T as protobuf: %w", obj, err)
	}
	return buf.Bytes(), nil
}

// hasProtobuf tells whether obj has a protobuf encoding: every Go type of
// k8s.io/api has one.
func hasProtobuf(obj runtime.Object) bool {
	_, ok := obj.(interface{ Marshal() ([]byte, error) })
	return ok
}

func isUnstructured(obj runtime.Object) bool {
	_, ok := obj.(runtime.Unstructured)
	return ok
}

// Decode implements storage.Codec. JSON is returned as stored, without a
// trailing newline (kube's JSON encoder ends its values with one); YAML
// and protobuf are decoded into newFunc's type (or, protobuf, the kind the
// envelope names) and encoded as JSON, as this server stores it.
func (c *Codec) Decode(stored []byte, newFunc func() runtime.Object) ([]byte, bool, error) {
	switch {
	case bytes.HasPrefix(stored, protobufPrefix):
		obj, _, err := c.proto.Decode(stored, nil, newFunc())
		if runtime.IsNotRegisteredError(err) {
			obj, err = decodeOlderVersion(stored, newFunc, c.scheme)
		}
		if err != nil {
			return nil, false, fmt.Errorf("codec: decoding a protobuf value: %w", err)
		}
		restoreEmbeddedKinds(obj)
		data, err := storage.Encode(obj)
		return data, c.mediaType != storage.MediaTypeProtobuf, err
	case isJSON(stored):
		other := c.storedAs(newFunc) != storage.MediaTypeJSON
		if isOlderVersionJSON(stored) {
			data, err := olderVersionJSON(stored, newFunc, c.scheme)
			return data, true, err
		}
		return bytes.TrimRight(stored, " \t\r\n"), other, nil
	}
	obj := newFunc()
	if err := yaml.Unmarshal(stored, obj); err != nil {
		return nil, false, fmt.Errorf("codec: decoding a YAML value: %w", err)
	}
	data, err := storage.Encode(obj)
	return data, c.storedAs(newFunc) != storage.MediaTypeYAML, err
}

// storedAs returns the media type objects of newFunc's type are stored
// in: JSON for custom resources whatever the codec's media type.
func (c *Codec) storedAs(newFunc func() runtime.Object) string {
	if c.mediaType != storage.MediaTypeJSON && isUnstructured(newFunc()) {
		return storage.MediaTypeJSON
	}
	return c.mediaType
}

// isJSON tells whether stored is a JSON object: its first non-space byte
// is a brace (YAML written by kube starts with a key).
func isJSON(stored []byte) bool {
	for _, b := range stored {
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}
