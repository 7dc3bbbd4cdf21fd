package app

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/codec"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/value"
)

// defaultStorageMediaType is what --storage-media-type defaults to (see
// BENCHMARKS.md, "Stored media type: JSON or protobuf in etcd", for why).
const defaultStorageMediaType = storage.MediaTypeProtobuf

// validateStorageMediaType refuses what kube-apiserver refuses, in its words.
func validateStorageMediaType(mediaType string) error {
	allowed := []string{storage.MediaTypeJSON, storage.MediaTypeProtobuf, storage.MediaTypeYAML} // sorted, as kube lists them
	for _, t := range allowed {
		if mediaType == t {
			return nil
		}
	}
	return fmt.Errorf("--storage-media-type %q invalid, allowed values: %s", mediaType, strings.Join(allowed, ", "))
}

// jsonGroups are stored as JSON whatever --storage-media-type says:
// kube-apiserver stores them through the codecs of apiextensions-apiserver
// and kube-aggregator, which are JSON (pkg/controlplane/apiserver,
// apiextensions.go and aggregator.go).
var jsonGroups = map[string]bool{"apiextensions.k8s.io": true, "apiregistration.k8s.io": true}

// storageCodecs returns the codec of each resource: the media type of
// --storage-media-type for built-in resources, JSON for jsonGroups and
// custom resources (which have no protobuf encoding). Every codec reads
// every media type.
func storageCodecs(mediaType string) (func(schema.GroupResource) storage.Codec, error) {
	chosen, err := codec.New(api.Scheme(), mediaType)
	if err != nil {
		return nil, err
	}
	asJSON, err := codec.New(api.Scheme(), storage.MediaTypeJSON)
	if err != nil {
		return nil, err
	}
	return func(gr schema.GroupResource) storage.Codec {
		if jsonGroups[gr.Group] {
			return asJSON
		}
		return chosen
	}, nil
}

// kubeResourcePrefixes are the built-in resources that kube-apiserver
// v1.37.2 keeps elsewhere than under <etcd-prefix>/<resource>: k8s.io/kubernetes
// pkg/kubeapiserver SpecialDefaultResourcePrefixes, and the groups of
// apiextensions-apiserver and kube-aggregator, whose storage factory
// (k8s.io/apiserver SimpleStorageFactory) keys them <group>/<resource>.
var kubeResourcePrefixes = map[schema.GroupResource]string{
	{Resource: "replicationcontrollers"}:                                   "controllers",
	{Resource: "endpoints"}:                                                "services/endpoints",
	{Resource: "nodes"}:                                                    "minions",
	{Resource: "services"}:                                                 "services/specs",
	{Group: "networking.k8s.io", Resource: "ingresses"}:                    "ingress",
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: "apiextensions.k8s.io/customresourcedefinitions",
	{Group: "apiregistration.k8s.io", Resource: "apiservices"}:             "apiregistration.k8s.io/apiservices",
}

// ResourcePrefix returns the key prefix (without a trailing slash) of a
// built-in resource under etcdPrefix: kube-apiserver's, so that either
// server serves what the other wrote.
func ResourcePrefix(etcdPrefix string, gr schema.GroupResource) string {
	if p, ok := kubeResourcePrefixes[gr]; ok {
		return etcdPrefix + "/" + p
	}
	return etcdPrefix + "/" + strings.ToLower(gr.Resource)
}

// clusterScoped are the resources of kubeResourcePrefixes without a
// namespace in their keys.
var clusterScoped = map[string]bool{"nodes": true, "customresourcedefinitions": true, "apiservices": true}

// moveToKubeKeys moves what earlier versions of this server stored under
// <etcd-prefix>/<resource> to kube's keys (kubeResourcePrefixes), once:
// afterwards there is nothing left to move, and a replica starting beside
// another that is moving the same keys loses no object (etcd3.MoveKeys).
// It runs before any store is built, so that nothing is served from, or
// written to, the old keys meanwhile. Servers of the old layout must not
// run beside it: what they write afterwards is not moved.
func moveToKubeKeys(ctx context.Context, client *clientv3.Client, etcdPrefix string, transformers func(schema.GroupResource) value.Transformer) error {
	grs := make([]schema.GroupResource, 0, len(kubeResourcePrefixes))
	for gr := range kubeResourcePrefixes {
		grs = append(grs, gr)
	}
	sort.Slice(grs, func(i, j int) bool { return grs[i].String() < grs[j].String() })
	for _, gr := range grs {
		segments := 2
		if clusterScoped[gr.Resource] {
			segments = 1
		}
		m := etcd3.Move{From: etcdPrefix + "/" + gr.Resource + "/", To: ResourcePrefix(etcdPrefix, gr) + "/",
			Segments: segments, Transformer: transformers(gr)}
		moved, conflicts, err := etcd3.MoveKeys(ctx, client, m)
		if err != nil {
			return fmt.Errorf("moving %s to kube-apiserver's keys: %w", gr, err)
		}
		if moved > 0 || conflicts > 0 {
			slog.Info("moved objects to kube-apiserver's keys", "resource", gr.String(), "from", m.From, "to", m.To,
				"moved", moved, "leftBecauseTheNewKeyIsTaken", conflicts)
		}
	}
	return nil
}
