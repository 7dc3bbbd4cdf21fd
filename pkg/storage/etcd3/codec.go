package etcd3

import (
	"bytes"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// JSONCodec stores values as their JSON, and reads JSON values only: the
// codec of stores built without one (tests, tools). The server's stores
// get a storage/codec Codec, which reads every media type kube writes.
var JSONCodec storage.Codec = jsonCodec{}

type jsonCodec struct{}

var errNotJSON = errors.New("etcd3: the stored value is not JSON, and this store has no codec for other media types")

func (jsonCodec) Encode(_ runtime.Object, data []byte) ([]byte, error) { return data, nil }

func (jsonCodec) Decode(stored []byte, _ func() runtime.Object) ([]byte, bool, error) {
	trimmed := bytes.TrimSpace(stored)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, false, errNotJSON
	}
	return trimmed, false, nil
}
