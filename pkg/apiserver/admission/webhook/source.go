package webhook

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/registry/webhookclient"
)

// Configurations is what the source needs of the storage of a kind of
// webhook configuration.
type Configurations = follow.Source

// Source keeps the webhooks of the configurations in storage, as kube's
// configuration managers do over their informers: a list, then a watch
// (again after a failure), and on every change the webhooks of a kind
// sorted by configuration name (kube's order), published at once.
type Source struct {
	services webhookclient.ServiceResolver
	// metrics are the server's webhook metrics, which its dispatchers
	// record in.
	metrics *Metrics
	// versions are the server's resources, set by Run.
	versions   atomic.Pointer[Resources]
	mutating   atomic.Pointer[[]*hook]
	validating atomic.Pointer[[]*hook]
	// synced is closed once both kinds were listed.
	synced     chan struct{}
	syncedOnce sync.Once
}

// NewSource returns a source of the webhooks in the storages of
// mutating and validating configurations; services finds webhooks
// served by services. It follows them once Run is called. The calls are
// counted in m (nil: registered nowhere).
func NewSource(services webhookclient.ServiceResolver, m *Metrics) *Source {
	if m == nil {
		m = NewMetrics(nil)
	}
	s := &Source{services: services, metrics: m, synced: make(chan struct{})}
	s.mutating.Store(&[]*hook{})
	s.validating.Store(&[]*hook{})
	return s
}

// Run follows both kinds of configuration until ctx ends; resources are
// the server's (the versions webhooks with matchPolicy Equivalent see).
func (s *Source) Run(ctx context.Context, resources Resources, mutating, validating Configurations) {
	s.versions.Store(&resources)
	loops := []*follow.Loop{
		follow.New(follow.Config{Name: "admission webhooks: mutatingwebhookconfigurations", Source: mutating,
			Handler: configurations(func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} }, s.publishMutating)}),
		follow.New(follow.Config{Name: "admission webhooks: validatingwebhookconfigurations", Source: validating,
			Handler: configurations(func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} }, s.publishValidating)}),
	}
	follow.RunAll(ctx, func() { s.syncedOnce.Do(func() { close(s.synced) }) }, loops...)
}

// configurations keeps the configurations of one kind by name, and
// publishes them all on every list and change.
func configurations(newObj func() runtime.Object, publish func(map[string]runtime.Object)) follow.Handler {
	var configs map[string]runtime.Object
	return follow.Objects[runtime.Object]{
		New: newObj,
		List: func(objs []runtime.Object, _ int64) {
			configs = make(map[string]runtime.Object, len(objs))
			for _, obj := range objs {
				configs[nameOf(obj)] = obj
			}
			publish(configs)
		},
		Event: func(t watch.EventType, obj runtime.Object) {
			if t == watch.Deleted {
				delete(configs, nameOf(obj))
			} else {
				configs[nameOf(obj)] = obj
			}
			publish(configs)
		},
	}
}

func nameOf(obj runtime.Object) string { return obj.(interface{ GetName() string }).GetName() }

// WaitSynced waits until both kinds were listed once, or ctx ends; it
// reports whether they were.
func (s *Source) WaitSynced(ctx context.Context) bool {
	select {
	case <-s.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Source) resources() Resources {
	if r := s.versions.Load(); r != nil {
		return *r
	}
	return nil
}

// idle reports that the configurations were listed and hooks (of one
// kind) are none: a request needs nothing more.
func (s *Source) idle(hooks []*hook) bool {
	select {
	case <-s.synced:
		return len(hooks) == 0
	default:
		return false
	}
}

func (s *Source) mutatingHooks() []*hook   { return *s.mutating.Load() }
func (s *Source) validatingHooks() []*hook { return *s.validating.Load() }

func (s *Source) publishMutating(configs map[string]runtime.Object) {
	hooks := hooksOf(s, configs, func(c *admissionregistrationv1.MutatingWebhookConfiguration) []admissionregistrationv1.MutatingWebhook {
		return c.Webhooks
	}, newMutatingHook)
	closeClients(*s.mutating.Swap(&hooks))
}

func (s *Source) publishValidating(configs map[string]runtime.Object) {
	hooks := hooksOf(s, configs, func(c *admissionregistrationv1.ValidatingWebhookConfiguration) []admissionregistrationv1.ValidatingWebhook {
		return c.Webhooks
	}, newValidatingHook)
	closeClients(*s.validating.Swap(&hooks))
}

// hooksOf makes the hooks of every configuration of one kind (C, with
// webhooks W), in the order kube calls them: by configuration name, then
// as listed.
func hooksOf[C runtime.Object, W any](s *Source, configs map[string]runtime.Object, webhooks func(C) []W,
	newHook func(configuration string, index int, w *W) *hook) []*hook {
	var hooks []*hook
	for _, name := range sortedNames(configs) {
		ws := webhooks(configs[name].(C))
		for i := range ws {
			hooks = append(hooks, s.withClient(newHook(name, i, &ws[i])))
		}
	}
	return hooks
}

// hookUID names a webhook as kube's configuration managers do.
func hookUID(configuration, name string, index int) string {
	return fmt.Sprintf("%s/%s/%d", configuration, name, index)
}

func sortedNames(configs map[string]runtime.Object) []string {
	names := make([]string, 0, len(configs))
	for name := range configs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// withClient makes the client of a webhook; a client that cannot be made
// fails each call (kube's "could not get REST client").
func (s *Source) withClient(h *hook) *hook {
	cc := h.clientConfig
	cfg := webhookclient.ClientConfig{CABundle: cc.CABundle}
	if cc.URL != nil {
		cfg.URL = *cc.URL
	}
	if ref := cc.Service; ref != nil {
		cfg.Service = &webhookclient.Service{Namespace: ref.Namespace, Name: ref.Name, Port: 443}
		if ref.Path != nil {
			cfg.Service.Path = *ref.Path
		}
		if ref.Port != nil {
			cfg.Service.Port = *ref.Port
		}
	}
	h.client, h.clientErr = webhookclient.New(cfg, s.services)
	return h
}

// closeClients releases the idle connections of replaced webhooks (calls
// in flight finish on theirs).
func closeClients(hooks []*hook) {
	for _, h := range hooks {
		if h.client != nil {
			h.client.Close()
		}
	}
}
