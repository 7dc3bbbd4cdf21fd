package generic_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// refusingREST is a declared wrapper: it serves its Store but refuses
// every delete.
type refusingREST struct {
	*generic.Store
}

func (r *refusingREST) Delete(context.Context, string, rest.ValidateObjectFunc, *metav1.DeleteOptions) (runtime.Object, bool, error) {
	return nil, false, errors.New("refused")
}

// logREST is a connect subresource declared with its resource.
type logREST struct{}

var _ rest.Connecter = (*logREST)(nil)

func (*logREST) New() runtime.Object { return &metav1.Status{} }
func (*logREST) Destroy()            {}
func (*logREST) Connect(context.Context, string, runtime.Object, rest.Responder) (http.Handler, error) {
	return http.NotFoundHandler(), nil
}
func (*logREST) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }
func (*logREST) ConnectMethods() []string                          { return []string{http.MethodGet} }

// TestResourceServe: a declared Serve wrapper is what the resource's path
// serves (its status and subresources are still built over the Store,
// which Install returns), and connect subresources declared with the
// resource are served at their paths.
func TestResourceServe(t *testing.T) {
	etcd := etcdtest.Start(t)
	opts := newOptions(t, etcd)

	log := &hookLog{}
	r := rcResource(log)
	var wrapped, connectedTo *generic.Store
	r.Serve = func(store *generic.Store) rest.Storage {
		wrapped = store
		return &refusingREST{Store: store}
	}
	r.Subresources = map[string]generic.SubresourceFunc{
		"replicationcontrollers/log": func(main *generic.Store) (rest.Storage, error) {
			connectedTo = main
			return &logREST{}, nil
		},
	}
	resources := map[string]rest.Storage{}
	store, err := r.Install(rcGV, opts, resources)
	if err != nil {
		t.Fatal(err)
	}
	if wrapped != store || connectedTo != store {
		t.Error("the wrapper or the connect subresource was not built over the resource's Store")
	}
	served, ok := resources["replicationcontrollers"].(*refusingREST)
	if !ok {
		t.Fatalf("replicationcontrollers serves %T, want the declared wrapper", resources["replicationcontrollers"])
	}
	if served.Store != store {
		t.Error("the served wrapper is not over the returned Store")
	}
	if _, ok := resources["replicationcontrollers/log"].(rest.Connecter); !ok {
		t.Errorf("replicationcontrollers/log serves %T, want the declared connecter", resources["replicationcontrollers/log"])
	}
	var paths []string
	for p := range resources {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	want := []string{"replicationcontrollers", "replicationcontrollers/log", "replicationcontrollers/status"}
	if !slices.Equal(paths, want) {
		t.Errorf("served %q, want %q", paths, want)
	}
	// Destroying what is served destroys the Store, once.
	resources["replicationcontrollers"].Destroy()
	wantCalls(t, log, "destroy")
}

// TestResourceServeBadDeclarations: a declaration the build cannot serve
// as declared fails it, releases what the declaration holds, and serves
// nothing.
func TestResourceServeBadDeclarations(t *testing.T) {
	etcd := etcdtest.Start(t)
	opts := newOptions(t, etcd)
	connect := func(*generic.Store) (rest.Storage, error) { return &logREST{}, nil }

	for _, tc := range []struct {
		name   string
		change func(r *generic.Resource)
	}{
		{"a connect subresource on a path served already", func(r *generic.Resource) {
			r.Subresources = map[string]generic.SubresourceFunc{"replicationcontrollers/log": connect}
		}},
		{"a connect subresource colliding with status", func(r *generic.Resource) {
			r.Subresources = map[string]generic.SubresourceFunc{"replicationcontrollers/status": connect}
		}},
		{"a connect subresource of another resource", func(r *generic.Resource) {
			r.Subresources = map[string]generic.SubresourceFunc{"pods/log": connect}
		}},
		{"a subresource that cannot be built", func(r *generic.Resource) {
			r.Subresources = map[string]generic.SubresourceFunc{
				"replicationcontrollers/proxy": func(*generic.Store) (rest.Storage, error) { return nil, errors.New("no transport") },
			}
		}},
		{"a wrapper with other versions", func(r *generic.Resource) {
			r.Serve = func(store *generic.Store) rest.Storage { return &refusingREST{Store: store} }
			r.Versions = []generic.Version{{Kind: schema.GroupVersionKind{Version: "v2", Kind: "ReplicationController"}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &hookLog{}
			r := rcResource(log)
			tc.change(&r)
			already := &logREST{}
			served := map[string]rest.Storage{"replicationcontrollers/log": already}
			if _, err := r.Install(rcGV, opts, served); err == nil {
				t.Fatal("installed, want an error")
			}
			wantCalls(t, log, "destroy")
			if len(served) != 1 || served["replicationcontrollers/log"] != already {
				t.Errorf("a failed install changed what is served: %v", served)
			}
		})
	}
}
