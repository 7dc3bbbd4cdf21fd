package app

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// inspectedOnly gives every resource a nil storage.Interface: the groups
// are built, never served.
var inspectedOnly = generic.UndecoratedRESTOptions{
	Factory: func(storage.Config) (storage.Interface, storage.DestroyFunc, error) { return nil, func() {}, nil },
	Prefix:  "/registry",
}

// TestStoresHandles: the wiring builds every group, lists them in
// discovery's order, and sets every typed handle of the registry to a
// store it serves (not a copy, nor nil).
func TestStoresHandles(t *testing.T) {
	st, err := buildStores(NewOptions(), inspectedOnly, ProviderDeps{})
	if err != nil {
		t.Fatal(err)
	}
	storeType := reflect.TypeFor[*generic.Store]()
	var got []string
	// served are the stores served, by address: themselves, or under the
	// storage served (scheduling's priority classes, rbac's four kinds).
	served := map[uintptr]bool{}
	for _, g := range st.groups {
		got = append(got, g.GroupName)
		for _, resources := range g.VersionedResourcesStorageMap {
			for _, s := range resources {
				v := reflect.ValueOf(s)
				if v.Type() == storeType {
					served[v.Pointer()] = true
				} else if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
					if inner := v.Elem().FieldByName("Store"); inner.IsValid() && inner.Type() == storeType {
						served[inner.Pointer()] = true
					}
				}
			}
		}
	}
	if !reflect.DeepEqual(got, groupOrder) {
		t.Errorf("groups %q, want discovery's order %q", got, groupOrder)
	}
	handles := reflect.ValueOf(st).Elem()
	for i := range handles.NumField() {
		group := handles.Type().Field(i).Name
		if group == "groups" {
			continue
		}
		v := handles.Field(i)
		for j := range v.NumField() {
			name := group + "." + v.Type().Field(j).Name
			h := v.Field(j)
			if h.Kind() != reflect.Pointer && h.Kind() != reflect.Interface {
				continue
			}
			if h.IsNil() {
				t.Errorf("%s is not set", name)
				continue
			}
			if h.Type() == storeType && !served[h.Pointer()] {
				t.Errorf("%s is not a store the group serves", name)
			}
		}
	}
}

// TestDiscoveryOrderComplete: a group built without a place in
// discovery's order, or a place left empty, fails the build.
func TestDiscoveryOrderComplete(t *testing.T) {
	groups := func(names ...string) []rest.APIGroupInfo {
		var out []rest.APIGroupInfo
		for _, n := range names {
			out = append(out, rest.APIGroupInfo{GroupName: n, PrioritizedVersions: []string{"v1"}})
		}
		return out
	}
	all := groups(groupOrder...)
	tests := []struct {
		name      string
		built     []rest.APIGroupInfo
		wantError string
	}{
		{name: "every group", built: all},
		{name: "reversed", built: groups(reversed(groupOrder)...)},
		{name: "one left out", built: all[1:], wantError: `the "" API group is not built`},
		{name: "one unknown", built: append(groups("example.com"), all...), wantError: `"example.com" API group has no place`},
		{name: "one twice", built: append(groups("apps"), all...), wantError: `"apps" API group has no place`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := inDiscoveryOrder(tc.built)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, g := range got {
				if g.GroupName != groupOrder[i] {
					t.Fatalf("group %d is %q, want %q", i, g.GroupName, groupOrder[i])
				}
			}
		})
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// TestLoopsStop: stop ends the loops' ctx and returns once every loop has
// returned; the ctx of loops within others ends with theirs.
func TestLoopsStop(t *testing.T) {
	outer := newLoops(context.Background())
	inner := newLoops(outer.ctx)
	var returned atomic.Int32
	loop := func(ctx context.Context) {
		<-ctx.Done()
		returned.Add(1)
	}
	outer.Go(loop)
	outer.Go(loop)
	inner.Go(loop)
	inner.stop()
	if got := returned.Load(); got != 1 {
		t.Fatalf("%d loops returned after the inner loops' stop, want 1", got)
	}
	within := newLoops(outer.ctx)
	outer.stop()
	if got := returned.Load(); got != 3 {
		t.Fatalf("%d loops returned after stop, want 3", got)
	}
	if within.ctx.Err() == nil {
		t.Error("the ctx of loops within the stopped ones goes on")
	}
	outer.stop() // again: nothing left to wait for
}
