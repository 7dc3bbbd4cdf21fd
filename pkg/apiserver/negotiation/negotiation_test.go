package negotiation

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func request(accept, query, userAgent string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps"+query, nil)
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	r.Header.Set("User-Agent", userAgent)
	return r
}

// TestNegotiateOutput checks the choices of kube's negotiation (each
// checked against a kube-apiserver 1.37) for an endpoint that serves
// Tables and PartialObjectMetadata.
func TestNegotiateOutput(t *testing.T) {
	tests := []struct {
		name, accept, query, userAgent string
		want                           Output // MediaType, Target, TargetVersion, Pretty
		notAcceptable                  bool
	}{
		{name: "no Accept", want: Output{MediaType: MediaTypeJSON}},
		{name: "wildcard", accept: "*/*", want: Output{MediaType: MediaTypeJSON}},
		{name: "client-go's typed clients", accept: "application/vnd.kubernetes.protobuf,application/json", want: Output{MediaType: MediaTypeProtobuf}},
		{name: "yaml", accept: "application/yaml", want: Output{MediaType: MediaTypeYAML}},
		{name: "weights", accept: "application/json;q=0.5,application/yaml", want: Output{MediaType: MediaTypeYAML}},
		{name: "CBOR preferred, JSON accepted", accept: "application/json;q=0.9,application/cbor;q=1", want: Output{MediaType: MediaTypeJSON}},
		{name: "CBOR only", accept: "application/cbor", notAcceptable: true},
		{name: "kubectl's Table", accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
			want: Output{MediaType: MediaTypeJSON, Target: TargetTable, TargetVersion: "v1"}},
		{name: "Table v1beta1", accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io", want: Output{MediaType: MediaTypeJSON, Target: TargetTable, TargetVersion: "v1beta1"}},
		{name: "Table in protobuf falls to the next clause", accept: "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json",
			want: Output{MediaType: MediaTypeJSON}},
		{name: "Table in protobuf only", accept: "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", notAcceptable: true},
		{name: "metadata client", accept: "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
			want: Output{MediaType: MediaTypeProtobuf, Target: TargetPartialObjectMetadataList, TargetVersion: "v1"}},
		{name: "the other PartialObjectMetadata form is the handler's to refuse", accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
			want: Output{MediaType: MediaTypeJSON, Target: TargetPartialObjectMetadata, TargetVersion: "v1"}},
		{name: "unknown kind", accept: "application/json;as=Foo;g=meta.k8s.io;v=v1", notAcceptable: true},
		{name: "unknown version", accept: "application/json;as=Table;g=meta.k8s.io;v=v2", notAcceptable: true},
		{name: "other group", accept: "application/json;as=Table;g=example.com;v=v1", notAcceptable: true},
		{name: "group and version without as", accept: "application/json;g=meta.k8s.io;v=v1", notAcceptable: true},
		{name: "stream=watch is a JSON stream", accept: "application/json;stream=watch", want: Output{MediaType: MediaTypeJSON}},
		{name: "YAML has no stream", accept: "application/yaml;stream=watch", notAcceptable: true},
		{name: "zero weight (kube serves it)", accept: "application/json;q=0", want: Output{MediaType: MediaTypeJSON}},
		{name: "?pretty", query: "?pretty=true", want: Output{MediaType: MediaTypeJSON, Pretty: true}},
		{name: "curl", userAgent: "curl/8.5.0", want: Output{MediaType: MediaTypeJSON, Pretty: true}},
		{name: "curl with pretty=false", query: "?pretty=false", userAgent: "curl/8.5.0", want: Output{MediaType: MediaTypeJSON}},
		{name: "pretty=1 in Accept", accept: "application/json;pretty=1", want: Output{MediaType: MediaTypeJSON, Pretty: true}},
		{name: "no pretty protobuf", accept: "application/vnd.kubernetes.protobuf", query: "?pretty=true", want: Output{MediaType: MediaTypeProtobuf}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NegotiateOutput(request(tc.accept, tc.query, tc.userAgent), TargetTable, TargetPartialObjectMetadataList)
			if tc.notAcceptable {
				if err == nil || err.Error() != "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf" {
					t.Fatalf("got %+v %v, want 406", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.MediaType != tc.want.MediaType || got.Target != tc.want.Target || got.TargetVersion != tc.want.TargetVersion ||
				got.Pretty != tc.want.Pretty || got.Info.MediaType != tc.want.MediaType {
				t.Errorf("got %s %q %q pretty=%v, want %s %q %q pretty=%v", got.MediaType, got.Target, got.TargetVersion, got.Pretty,
					tc.want.MediaType, tc.want.Target, tc.want.TargetVersion, tc.want.Pretty)
			}
		})
	}
}

// TestNegotiateWatchOutput checks the stream forms: JSON lines or
// protobuf frames, 406 when the first acceptable clause has no stream form.
func TestNegotiateWatchOutput(t *testing.T) {
	tests := []struct {
		accept    string
		mediaType string // "" for 406
	}{
		{"", MediaTypeJSON},
		{"application/vnd.kubernetes.protobuf,application/json", "application/vnd.kubernetes.protobuf;stream=watch"},
		{"application/vnd.kubernetes.protobuf;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch"},
		{"application/json;as=Table;v=v1;g=meta.k8s.io", MediaTypeJSON},
		{"application/yaml", ""},
		{"application/yaml, application/json", ""},
		{"application/cbor-seq", ""},
	}
	for _, tc := range tests {
		t.Run(tc.accept, func(t *testing.T) {
			got, err := NegotiateWatchOutput(request(tc.accept, "?pretty=true", "curl/8"), TargetTable, TargetPartialObjectMetadata)
			if tc.mediaType == "" {
				if err == nil || err.Error() != "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch" {
					t.Fatalf("got %+v %v, want 406", got, err)
				}
				return
			}
			if err != nil || got.MediaType != tc.mediaType || got.Pretty {
				t.Errorf("got %q pretty=%v %v, want %q", got.MediaType, got.Pretty, err, tc.mediaType)
			}
		})
	}
}

// TestNegotiateAggregatedDiscovery checks which Accept headers get the
// aggregated discovery document.
func TestNegotiateAggregatedDiscovery(t *testing.T) {
	tests := []struct {
		accept, mediaType string // "" when not aggregated
	}{
		{"", ""},
		{"application/json", ""},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{"application/json, application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
			"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", ""},
		{"application/cbor;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""},
	}
	for _, tc := range tests {
		t.Run(tc.accept, func(t *testing.T) {
			got, ok := NegotiateAggregatedDiscovery(request(tc.accept, "", "Go"))
			if ok != (tc.mediaType != "") || got.MediaType != tc.mediaType {
				t.Errorf("got %q %v, want %q", got.MediaType, ok, tc.mediaType)
			}
		})
	}
}
