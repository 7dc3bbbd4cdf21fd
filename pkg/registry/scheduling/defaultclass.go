package scheduling

import (
	"context"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ListPriorityClasses returns every priority class the watch cache holds,
// as kube's Priority admission reads its informer's, without a round trip
// to etcd per pod (a class created through this server just before
// counts: the cache waits for its own writes).
func ListPriorityClasses(ctx context.Context, classes rest.Lister) ([]*schedulingv1.PriorityClass, error) {
	list, err := classes.List(request.WithNamespace(ctx, ""), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	out := make([]*schedulingv1.PriorityClass, 0, len(list.Items))
	for _, item := range list.Items {
		pc := &schedulingv1.PriorityClass{}
		if err := item.Decode(pc); err != nil {
			return nil, err
		}
		out = append(out, pc)
	}
	return out, nil
}

// DefaultPriorityClass returns the class marked globalDefault, nil when
// none is. Should several be (two writers raced), kube takes the one of
// lowest value.
func DefaultPriorityClass(classes []*schedulingv1.PriorityClass) *schedulingv1.PriorityClass {
	var def *schedulingv1.PriorityClass
	for _, pc := range classes {
		if pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
			def = pc
		}
	}
	return def
}
