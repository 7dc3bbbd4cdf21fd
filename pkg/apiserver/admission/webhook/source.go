package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/webhook"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Configurations is what the source needs of the storage of a kind of
// webhook configuration.
type Configurations interface {
	rest.Lister
	rest.Watcher
}

// Source keeps the webhooks of the configurations in storage, as kube's
// configuration managers do over their informers: a list, then a watch
// (again after a failure), and on every change the webhooks of a kind
// sorted by configuration name (kube's order), published at once.
type Source struct {
	services webhook.ServiceResolver
	// versions are the server's resources, set by Run.
	versions   atomic.Pointer[Resources]
	mutating   atomic.Pointer[[]*hook]
	validating atomic.Pointer[[]*hook]
	synced     chan struct{}
	syncedOnce sync.Once
	waiting    sync.WaitGroup // the kinds not listed yet
}

// NewSource returns a source of the webhooks in the storages of
// mutating and validating configurations; services finds webhooks
// served by services. It follows them once Run is called.
func NewSource(services webhook.ServiceResolver) *Source {
	s := &Source{services: services, synced: make(chan struct{})}
	s.mutating.Store(&[]*hook{})
	s.validating.Store(&[]*hook{})
	return s
}

// Run follows both kinds of configuration until ctx ends; resources are
// the server's (the versions webhooks with matchPolicy Equivalent see).
func (s *Source) Run(ctx context.Context, resources Resources, mutating, validating Configurations) {
	s.versions.Store(&resources)
	ctx = request.WithNamespace(ctx, "")
	s.waiting.Add(2)
	go func() {
		s.waiting.Wait()
		s.syncedOnce.Do(func() { close(s.synced) })
	}()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.follow(ctx, "mutatingwebhookconfigurations", mutating, func() runtime.Object {
			return &admissionregistrationv1.MutatingWebhookConfiguration{}
		}, s.publishMutating)
	}()
	go func() {
		defer wg.Done()
		s.follow(ctx, "validatingwebhookconfigurations", validating, func() runtime.Object {
			return &admissionregistrationv1.ValidatingWebhookConfiguration{}
		}, s.publishValidating)
	}()
	wg.Wait()
}

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

// follow keeps the configurations of one kind, publishing them on every
// change, until ctx ends.
func (s *Source) follow(ctx context.Context, resource string, store Configurations, newObj func() runtime.Object,
	publish func(map[string]runtime.Object)) {
	listed := false
	for ctx.Err() == nil {
		err := s.followOnce(ctx, store, newObj, func(configs map[string]runtime.Object) {
			publish(configs)
			if !listed {
				listed = true
				s.waiting.Done()
			}
		})
		if err != nil && ctx.Err() == nil {
			slog.Warn("admission webhooks: following the configurations", "resource", resource, "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// followOnce lists, publishes, then publishes again on each event of a
// watch from the list's revision, until the watch ends.
func (s *Source) followOnce(ctx context.Context, store Configurations, newObj func() runtime.Object,
	publish func(map[string]runtime.Object)) error {
	list, err := store.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return err
	}
	configs := map[string]runtime.Object{}
	for _, item := range list.Items {
		if err := remember(configs, item, newObj(), false); err != nil {
			return err
		}
	}
	publish(configs)
	w, err := store.Watch(ctx, &metainternalversion.ListOptions{Watch: true, ResourceVersion: fmt.Sprint(list.ResourceVersion)})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			return ev.Err
		case watch.Added, watch.Modified, watch.Deleted:
			if err := remember(configs, ev.Object, newObj(), ev.Type == watch.Deleted); err != nil {
				return err
			}
			publish(configs)
		}
	}
	return errors.New("watch ended")
}

// remember decodes o into obj and keeps it in configs by name (drops it
// when deleted).
func remember(configs map[string]runtime.Object, o *storage.Object, obj runtime.Object, deleted bool) error {
	if err := o.Decode(obj); err != nil {
		return err
	}
	name := obj.(interface{ GetName() string }).GetName()
	if deleted {
		delete(configs, name)
	} else {
		configs[name] = obj
	}
	return nil
}

func (s *Source) publishMutating(configs map[string]runtime.Object) {
	var hooks []*hook
	for _, name := range sortedNames(configs) {
		c := configs[name].(*admissionregistrationv1.MutatingWebhookConfiguration)
		for i := range c.Webhooks {
			hooks = append(hooks, s.withClient(newMutatingHook(name, i, &c.Webhooks[i])))
		}
	}
	closeClients(*s.mutating.Swap(&hooks))
}

func (s *Source) publishValidating(configs map[string]runtime.Object) {
	var hooks []*hook
	for _, name := range sortedNames(configs) {
		c := configs[name].(*admissionregistrationv1.ValidatingWebhookConfiguration)
		for i := range c.Webhooks {
			hooks = append(hooks, s.withClient(newValidatingHook(name, i, &c.Webhooks[i])))
		}
	}
	closeClients(*s.validating.Swap(&hooks))
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
	cfg := webhook.ClientConfig{CABundle: cc.CABundle}
	if cc.URL != nil {
		cfg.URL = *cc.URL
	}
	if ref := cc.Service; ref != nil {
		cfg.Service = &webhook.Service{Namespace: ref.Namespace, Name: ref.Name, Port: 443}
		if ref.Path != nil {
			cfg.Service.Path = *ref.Path
		}
		if ref.Port != nil {
			cfg.Service.Port = *ref.Port
		}
	}
	h.client, h.clientErr = webhook.New(cfg, s.services)
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
