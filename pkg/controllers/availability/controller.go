// Package availability keeps the Available condition of every
// APIService, as kube-aggregator's two availability controllers do:
// a Local APIService (no service) is always available; one naming a
// service is available when the service exists, has a ready endpoint
// for its port, and its server answers the discovery check
// (GET /apis/GROUP/VERSION). It says so with kube's reasons and messages
// (ServiceNotFound, ServicePortError, EndpointsNotFound,
// MissingEndpoints, FailedDiscoveryCheck, Passed).
//
// It also hands the server every APIService, with what the last check
// fetched of its group version's discovery, so that the server proxies
// and lists what is served (the Sink). It watches APIServices, services
// and EndpointSlices through registry verbs, and checks each remote
// APIService again every 30 s, as kube does.
package availability

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/queue"
	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

const (
	// resync is how often every APIService is checked again (kube's
	// informer resync of its controller).
	resync = 30 * time.Second
	// workers is how many APIServices are checked at once.
	workers = 5
	// minBackoff and maxBackoff bound the wait before an APIService whose
	// check failed is checked again (kube's rate limiter).
	minBackoff = 5 * time.Millisecond
	maxBackoff = 30 * time.Second
	// manager is the field manager of the status writes, as kube's
	// loopback client's.
	manager = "kube-apiserver"
)

// Watched is a store the controller lists and watches.
type Watched = follow.Source

// Checker checks an APIService that names a service (the server's
// aggregation proxy).
type Checker interface {
	// CanCheck fails when s's TLS settings are unusable (a caBundle
	// without a certificate): the condition is left as it is and the
	// check tried again, as kube does.
	CanCheck(s *apiregistrationv1.APIService) error
	// Check asks s's server for its group version's discovery document;
	// the list is nil when the answer (2xx) was none.
	Check(ctx context.Context, s *apiregistrationv1.APIService) (*metav1.APIResourceList, error)
	// OpenAPI fetches the server's /openapi/v2 document and its
	// /openapi/v3 document of s's group version (nil when it serves
	// none).
	OpenAPI(ctx context.Context, s *apiregistrationv1.APIService) (v2, v3 []byte, err error)
}

// Served is one APIService as the Sink gets it: the object, and what its
// server last answered at /apis/GROUP/VERSION (nil: never; Stale: the
// last check failed).
type Served struct {
	APIService *apiregistrationv1.APIService
	Resources  []metav1.APIResource
	Stale      bool
	// OpenAPIV2 and OpenAPIV3 are the server's OpenAPI documents (its
	// whole /openapi/v2, its /openapi/v3 of the group version) as last
	// fetched.
	OpenAPIV2, OpenAPIV3 []byte
}

// Sink is the server: it proxies and lists what it is given, every
// APIService each time.
type Sink interface {
	ServeAPIServices([]Served) error
}

// Config of a Controller.
type Config struct {
	APIServices Watched
	// Status is the apiservices/status storage the condition is written
	// through.
	Status rest.Updater
	// Services are read for the service of each APIService, and
	// EndpointSlices for its endpoints (nil: none, and a ClusterIP
	// service is never available).
	Services interface {
		rest.Getter
		Watched
	}
	EndpointSlices Watched
	Checker        Checker
	Sink           Sink
}

// Controller keeps the Available condition of APIServices.
type Controller struct {
	cfg    Config
	writer *fieldmanager.Writer

	// publishing serializes publish: the sink gets the snapshots in the
	// order they were taken.
	publishing sync.Mutex
	mu         sync.Mutex
	// known are the APIServices as last listed or watched, by name.
	known map[string]*apiregistrationv1.APIService
	// fetched is what discovery knows of each remote APIService.
	fetched map[string]Served
	// failures counts each name's failed syncs in a row (its backoff).
	failures map[string]int
	pending  map[string]bool
	wake     queue.Signal
}

// New returns a controller of cfg.
func New(cfg Config) *Controller {
	return &Controller{
		cfg:      cfg,
		writer:   fieldmanager.NewWriter(cfg.Status, apiregistrationv1.SchemeGroupVersion.WithKind("APIService"), "status", manager),
		known:    map[string]*apiregistrationv1.APIService{},
		fetched:  map[string]Served{},
		failures: map[string]int{},
		pending:  map[string]bool{},
		wake:     queue.NewSignal(),
	}
}

// Run works until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	ctx = request.WithNamespace(ctx, "")
	stores := []any{c.cfg.APIServices, c.cfg.Services}
	if c.cfg.EndpointSlices != nil {
		stores = append(stores, c.cfg.EndpointSlices)
	}
	if rest.WaitForStorageReadiness(ctx, stores...) != nil {
		return
	}
	loops := []*follow.Loop{
		follow.New(follow.Config{Name: "availability: APIServices", Source: c.cfg.APIServices, Handler: follow.Objects[*apiregistrationv1.APIService]{
			New: func() *apiregistrationv1.APIService { return &apiregistrationv1.APIService{} }, List: c.replaceKnown, Event: c.observe,
		}}),
		follow.New(follow.Config{Name: "availability: services", Source: c.cfg.Services, Handler: follow.Objects[*corev1.Service]{
			New:   func() *corev1.Service { return &corev1.Service{} },
			Event: func(_ watch.EventType, svc *corev1.Service) { c.enqueueReferencing(svc.Namespace, svc.Name) },
		}}),
	}
	if c.cfg.EndpointSlices != nil {
		loops = append(loops, follow.New(follow.Config{Name: "availability: EndpointSlices", Source: c.cfg.EndpointSlices,
			Handler: follow.Objects[*discoveryv1.EndpointSlice]{
				New: func() *discoveryv1.EndpointSlice { return &discoveryv1.EndpointSlice{} },
				Event: func(_ watch.EventType, slice *discoveryv1.EndpointSlice) {
					if name := slice.Labels[discoveryv1.LabelServiceName]; name != "" {
						c.enqueueReferencing(slice.Namespace, name)
					}
				},
			}}))
	}
	var wg sync.WaitGroup
	wg.Go(func() { follow.RunAll(ctx, nil, loops...) })
	wg.Go(func() { c.resync(ctx) })
	c.work(ctx)
	wg.Wait()
}

// replaceKnown makes a list of the APIServices the known ones, queues
// every one and those gone since, and publishes them.
func (c *Controller) replaceKnown(list []*apiregistrationv1.APIService, _ int64) {
	c.mu.Lock()
	c.known = queue.Relist(c.known, list, c.pending)
	c.mu.Unlock()
	c.wake.Notify()
	c.publish()
}

// observe records one change of an APIService, queues it and publishes
// the APIServices.
func (c *Controller) observe(t watch.EventType, s *apiregistrationv1.APIService) {
	c.mu.Lock()
	if t == watch.Deleted {
		delete(c.known, s.Name)
		delete(c.fetched, s.Name)
	} else {
		c.known[s.Name] = s
	}
	c.pending[s.Name] = true
	c.mu.Unlock()
	c.wake.Notify()
	c.publish()
}

func (c *Controller) enqueueReferencing(namespace, name string) {
	c.mu.Lock()
	for _, s := range c.known {
		if ref := s.Spec.Service; ref != nil && ref.Namespace == namespace && ref.Name == name {
			c.pending[s.Name] = true
		}
	}
	c.mu.Unlock()
	c.wake.Notify()
}

// resync queues every APIService every 30 s.
func (c *Controller) resync(ctx context.Context) {
	queue.Signal(nil).Every(ctx, resync, func(bool) {
		c.mu.Lock()
		for name := range c.known {
			c.pending[name] = true
		}
		c.mu.Unlock()
		c.wake.Notify()
	})
}

// work syncs the pending names as they come, several at once; a name
// that fails is queued again after its backoff.
func (c *Controller) work(ctx context.Context) {
	slots := make(chan struct{}, workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	for c.wake.Wait(ctx) {
		c.mu.Lock()
		names := slices.Sorted(maps.Keys(c.pending))
		clear(c.pending)
		c.mu.Unlock()
		for _, name := range names {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			wg.Go(func() {
				defer func() { <-slots }()
				c.syncAndRetry(ctx, name)
			})
		}
	}
}

func (c *Controller) syncAndRetry(ctx context.Context, name string) {
	err := c.sync(ctx, name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil || ctx.Err() != nil {
		delete(c.failures, name)
		return
	}
	slog.Debug("availability: checking APIService", "name", name, "error", err)
	backoff := min(minBackoff<<min(c.failures[name], 20), maxBackoff)
	c.failures[name]++
	time.AfterFunc(backoff, func() {
		c.mu.Lock()
		c.pending[name] = true
		c.mu.Unlock()
		c.wake.Notify()
	})
}

// publish hands the sink every known APIService with what discovery
// knows of it.
func (c *Controller) publish() {
	c.publishing.Lock()
	defer c.publishing.Unlock()
	c.mu.Lock()
	list := make([]Served, 0, len(c.known))
	for _, name := range slices.Sorted(maps.Keys(c.known)) {
		served := c.fetched[name]
		served.APIService = c.known[name]
		list = append(list, served)
	}
	c.mu.Unlock()
	if err := c.cfg.Sink.ServeAPIServices(list); err != nil {
		slog.Error("availability: serving the APIServices", "error", err)
	}
}
