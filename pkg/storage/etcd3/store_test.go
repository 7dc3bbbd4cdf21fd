package etcd3_test

import (
	"crypto/aes"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/codec"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/value"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

func TestConformance(t *testing.T) {
	etcd := etcdtest.Start(t)
	storagetest.Run(t, storagetest.Harness{
		New: func(t *testing.T, cfg storage.Config) storage.Interface {
			return etcd3.New(etcd.Client, cfg)
		},
		Compact: func(t *testing.T, rev int64) { etcd.Compact(rev) },
	})
}

// testCBC is an aescbc transformer with a fixed test key, as an
// encryption configuration's first provider makes it.
func testCBC(t *testing.T) value.Transformer {
	t.Helper()
	block, err := aes.NewCipher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return value.NewPrefixTransformers(errors.New("no matching prefix found"),
		value.PrefixTransformer{Prefix: []byte("k8s:enc:aescbc:v1:key1:"), Transformer: value.NewCBC(block)})
}

// TestConformanceEncrypted runs the suite with every value encrypted:
// encryption at rest changes nothing a caller of the store sees.
func TestConformanceEncrypted(t *testing.T) {
	etcd := etcdtest.Start(t)
	cbc := testCBC(t)
	storagetest.Run(t, storagetest.Harness{
		New: func(t *testing.T, cfg storage.Config) storage.Interface {
			return etcd3.NewWithTransformer(etcd.Client, cfg, cbc)
		},
		Compact: func(t *testing.T, rev int64) { etcd.Compact(rev) },
	})
}

// TestConformanceMediaTypes runs the suite with values stored as kube's
// protobuf and as YAML, encrypted or not: what callers see is the same
// JSON whatever the stored media type.
func TestConformanceMediaTypes(t *testing.T) {
	etcd := etcdtest.Start(t)
	cbc := testCBC(t)
	for _, tc := range []struct {
		name        string
		mediaType   string
		transformer value.Transformer
	}{
		{"protobuf", storage.MediaTypeProtobuf, value.Identity},
		{"protobuf encrypted", storage.MediaTypeProtobuf, cbc},
		{"yaml", storage.MediaTypeYAML, value.Identity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := codec.New(api.Scheme(), tc.mediaType)
			if err != nil {
				t.Fatal(err)
			}
			storagetest.Run(t, storagetest.Harness{
				New: func(t *testing.T, cfg storage.Config) storage.Interface {
					return etcd3.NewWithCodec(etcd.Client, cfg, tc.transformer, c)
				},
				Compact: func(t *testing.T, rev int64) { etcd.Compact(rev) },
			})
		})
	}
}
