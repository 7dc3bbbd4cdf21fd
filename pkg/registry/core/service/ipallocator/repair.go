package ipallocator

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// The grace periods of kube's IPAddress repair: an address whose service
// is missing is released once it is older than leakGrace (its service may
// be being created: the address is reserved first); one its service does
// not hold, once older than updateGrace when it is newer than the service
// (the service may be being updated to hold it).
const (
	leakGrace   = 60 * time.Second
	updateGrace = 5 * time.Second
)

// Repair reclaims the cluster IPs reserved by no service (a server that
// crashed between a reservation and the write of its service leaked
// them) and reserves again those a service holds whose IPAddress is
// missing, following the rules of kube's IPAddress repair controller.
// services lists every service; it is called after the IPAddresses are
// read, so that an address released and reserved again in between is not
// taken for missing. now, the time the grace periods are counted to, is
// taken before either is read.
func (a *Allocator) Repair(ctx context.Context, list func(context.Context) ([]corev1.Service, error), now time.Time) error {
	ips, err := a.ips.GetList(ctx, a.ipPrefix+"/", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	if err != nil {
		return err
	}
	services, err := list(ctx)
	if err != nil {
		return err
	}
	byName := make(map[string]*corev1.Service, len(services))
	for i := range services {
		byName[services[i].Namespace+"/"+services[i].Name] = &services[i]
	}
	var errs []error
	reserved := map[string]bool{}
	for _, item := range ips.Items {
		ip := &networkingv1.IPAddress{}
		if err := item.Decode(ip); err != nil {
			errs = append(errs, err)
			continue
		}
		reserved[ip.Name] = true
		if ip.Labels[networkingv1.LabelManagedBy] != ManagedBy {
			continue // someone else's
		}
		if addr, err := netip.ParseAddr(ip.Name); err == nil && familyOf(addr) != a.family {
			continue // the other family's allocator repairs it
		}
		if reason := a.leaked(ip, byName, now); reason != "" {
			slog.Warn("cluster IP repair: releasing an address", "ip", ip.Name, "reason", reason)
			errs = append(errs, a.releaseLeaked(ctx, ip))
		}
	}
	for _, svc := range services {
		errs = append(errs, a.reserveMissing(ctx, &svc, reserved))
	}
	return errors.Join(errs...)
}

// leaked says why ip is reserved by no service, or "" when it is (or may
// be, within the grace periods).
func (a *Allocator) leaked(ip *networkingv1.IPAddress, services map[string]*corev1.Service, now time.Time) string {
	ref := ip.Spec.ParentRef
	if ref == nil || ref.Group != "" || ref.Resource != "services" {
		return "it does not name a service"
	}
	age := now.Sub(ip.CreationTimestamp.Time)
	svc := services[ref.Namespace+"/"+ref.Name]
	if svc == nil {
		if age > leakGrace {
			return "its service " + ref.Namespace + "/" + ref.Name + " does not exist"
		}
		return ""
	}
	for _, held := range svc.Spec.ClusterIPs {
		if held == ip.Name {
			return ""
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName && age < leakGrace {
		return ""
	}
	if ip.CreationTimestamp.After(svc.CreationTimestamp.Time) && age < updateGrace {
		return ""
	}
	return "its service " + ref.Namespace + "/" + ref.Name + " does not hold it"
}

// releaseLeaked deletes ip's IPAddress if it is still the one read.
func (a *Allocator) releaseLeaked(ctx context.Context, ip *networkingv1.IPAddress) error {
	err := a.ips.Delete(ctx, a.ipPrefix+"/"+ip.Name, &networkingv1.IPAddress{},
		&storage.Preconditions{UID: &ip.UID, ResourceVersion: &ip.ResourceVersion}, nil, nil)
	if storage.IsNotFound(err) || storage.IsConflict(err) {
		return nil // released, or reserved again since: not ours to delete
	}
	return err
}

// reserveMissing reserves the cluster IPs of svc that no IPAddress holds
// (and a ready range does).
func (a *Allocator) reserveMissing(ctx context.Context, svc *corev1.Service, reserved map[string]bool) error {
	var errs []error
	for _, s := range svc.Spec.ClusterIPs {
		ip, err := netip.ParseAddr(s)
		if err != nil || reserved[ip.String()] || familyOf(ip) != a.family || strings.EqualFold(s, corev1.ClusterIPNone) {
			continue
		}
		slog.Warn("cluster IP repair: a service's address is not reserved; repairing", "ip", s, "service", svc.Namespace+"/"+svc.Name)
		switch err := a.Allocate(ctx, svc, ip); {
		case errors.Is(err, ErrAllocated):
			slog.Warn("cluster IP repair: an address was assigned to several services; please recreate the service", "ip", s, "service", svc.Namespace+"/"+svc.Name)
		case errors.Is(err, ErrMismatchedNetwork):
			slog.Warn("cluster IP repair: a service's address is in no ready range; please recreate the service", "ip", s, "service", svc.Namespace+"/"+svc.Name)
		default:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
