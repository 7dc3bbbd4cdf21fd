package crd

import (
	"context"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/miniapiserver/miniapiserver/pkg/registry/apiextensions/customresource"
)

// retireGrace is how long a store replaced (the definition changed) or
// withdrawn (it is gone) keeps serving the requests that reached it
// before: then it is destroyed, and the watches still on it end (their
// clients watch again, on its successor).
const retireGrace = 5 * time.Second

// servedDefinition is what a definition serves, and what it was built
// from.
type servedDefinition struct {
	served *customresource.Served
	uid    types.UID
	spec   apiextensionsv1.CustomResourceDefinitionSpec
	names  apiextensionsv1.CustomResourceDefinitionNames
}

// serve has the server serve crd under its (accepted) names: again, from
// new storage, when its spec or names changed since it was last served.
func (c *Controller) serve(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	cur := c.served[crd.Name]
	if cur != nil && cur.uid == crd.UID && equality.Semantic.DeepEqual(cur.spec, crd.Spec) &&
		equality.Semantic.DeepEqual(cur.names, crd.Status.AcceptedNames) {
		return nil
	}
	served, err := customresource.Build(crd, c.storage, c.services)
	if err != nil {
		return err
	}
	served.SetTerminating(crd.DeletionTimestamp != nil)
	if err := c.server.ServeCustomResources(crd.Name, served); err != nil {
		served.Destroy()
		return err
	}
	c.served[crd.Name] = &servedDefinition{served: served, uid: crd.UID, spec: *crd.Spec.DeepCopy(), names: *crd.Status.AcceptedNames.DeepCopy()}
	c.publishServed()
	if cur != nil {
		c.retire(ctx, cur.served)
	}
	return nil
}

// setTerminating marks what name serves as being deleted (no creates,
// fewer verbs in discovery).
func (c *Controller) setTerminating(name string) error {
	cur := c.served[name]
	if cur == nil || cur.served.Terminating() {
		return nil
	}
	cur.served.SetTerminating(true)
	return c.server.ServeCustomResources(name, cur.served)
}

// unserve stops serving what name served.
func (c *Controller) unserve(ctx context.Context, name string) {
	cur := c.served[name]
	if cur == nil {
		return
	}
	delete(c.served, name)
	c.publishServed()
	c.server.RemoveCustomResources(name)
	c.retire(ctx, cur.served)
}

// retire destroys what served once the requests in flight on it had
// their grace, or at once when the controller stops.
func (c *Controller) retire(ctx context.Context, served *customresource.Served) {
	c.retired.Add(1)
	go func() {
		defer c.retired.Done()
		t := time.NewTimer(retireGrace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		served.Destroy()
	}()
}
