package imagepolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/cache"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// PluginName is kube's name of the plugin.
const PluginName = "ImagePolicyWebhook"

// AuditKeyPrefix prefixes the audit annotations the plugin adds: the
// backend's auditAnnotations, and FailedOpenKey.
const AuditKeyPrefix = "imagepolicywebhook.image-policy.k8s.io/"

// FailedOpenKey is the audit annotation (and, under the pod annotation
// corev1.ImagePolicyFailedOpenKey, the pod's) of a pod let in because
// the backend failed and defaultAllow is set.
const FailedOpenKey = AuditKeyPrefix + "failed-open"

// responseCacheSize is kube's: how many answers are kept.
const responseCacheSize = 1024

const ephemeralContainers = "ephemeralcontainers"

// The ImageReview is sent and read with a codec of this scheme, as
// kube's generic webhook does: apiVersion and kind are set on the wire.
var (
	reviewScheme = runtime.NewScheme()
	reviewCodecs = serializer.NewCodecFactory(reviewScheme)
)

func init() {
	utilruntime.Must(imagepolicyv1alpha1.AddToScheme(reviewScheme))
}

// Plugin is kube's validating plugin ImagePolicyWebhook: the images of a
// new or changed pod (or of its new ephemeral containers) are sent to a
// backend in an ImageReview, which allows or denies them. Answers are
// cached by the review's spec for allowTTL or denyTTL.
type Plugin struct {
	webhook      *webhook.GenericWebhook
	responses    *cache.LRUExpireCache
	allowTTL     time.Duration
	denyTTL      time.Duration
	defaultAllow bool
}

// New makes the plugin for cfg; the backend's kubeconfig is read now (a
// bad one is an error, failing the start as in kube).
func New(cfg Config) (*Plugin, error) {
	return newWithClock(cfg, clock.RealClock{})
}

func newWithClock(cfg Config, c clock.PassiveClock) (*Plugin, error) {
	// kube's generic webhook: its kubeconfig loading (30s timeout, no
	// client rate limit), retries (which errors, how often) and codec.
	restConfig, err := webhook.LoadKubeconfig(cfg.KubeConfigFile, nil)
	if err != nil {
		return nil, err
	}
	backoff := webhook.DefaultRetryBackoffWithInitialDelay(cfg.RetryBackoff)
	gw, err := webhook.NewGenericWebhook(reviewScheme, reviewCodecs, restConfig,
		[]schema.GroupVersion{imagepolicyv1alpha1.SchemeGroupVersion}, backoff)
	if err != nil {
		return nil, err
	}
	return &Plugin{
		webhook:      gw,
		responses:    cache.NewLRUExpireCacheWithClock(responseCacheSize, c),
		allowTTL:     cfg.AllowTTL,
		denyTTL:      cfg.DenyTTL,
		defaultAllow: cfg.DefaultAllow,
	}, nil
}

// Validate implements handlers.Admission: creates and updates of pods,
// and updates of their ephemeralcontainers subresource.
func (p *Plugin) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Operation != handlers.Create && a.Operation != handlers.Update {
		return nil
	}
	if a.Resource.GroupResource() != corev1.Resource("pods") || (a.Subresource != "" && a.Subresource != ephemeralContainers) {
		return nil
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	review := &imagepolicyv1alpha1.ImageReview{Spec: imagepolicyv1alpha1.ImageReviewSpec{
		Containers:  reviewedImages(pod, a.Subresource),
		Annotations: policyAnnotations(pod.Annotations),
		Namespace:   a.Namespace,
	}}
	if err := p.review(ctx, pod, review); err != nil {
		return a.Forbidden(obj, err)
	}
	return nil
}

// reviewedImages are the images a request brings: a pod's containers'
// then its init containers' (kube's order), or its ephemeral
// containers' for the subresource.
func reviewedImages(pod *corev1.Pod, subresource string) []imagepolicyv1alpha1.ImageReviewContainerSpec {
	var specs []imagepolicyv1alpha1.ImageReviewContainerSpec
	if subresource == ephemeralContainers {
		for _, c := range pod.Spec.EphemeralContainers {
			specs = append(specs, imagepolicyv1alpha1.ImageReviewContainerSpec{Image: c.Image})
		}
		return specs
	}
	for _, c := range pod.Spec.Containers {
		specs = append(specs, imagepolicyv1alpha1.ImageReviewContainerSpec{Image: c.Image})
	}
	for _, c := range pod.Spec.InitContainers {
		specs = append(specs, imagepolicyv1alpha1.ImageReviewContainerSpec{Image: c.Image})
	}
	return specs
}

// policyAnnotations are the pod's annotations meant for the backend:
// those whose key has ".image-policy.k8s.io/" in it.
func policyAnnotations(all map[string]string) map[string]string {
	out := make(map[string]string)
	for k, v := range all {
		if strings.Contains(k, ".image-policy.k8s.io/") {
			out[k] = v
		}
	}
	return out
}

// review fills review's status from the cache or the backend and returns
// why the images are refused, nil when they are allowed.
func (p *Plugin) review(ctx context.Context, pod *corev1.Pod, review *imagepolicyv1alpha1.ImageReview) error {
	key, err := json.Marshal(review.Spec)
	if err != nil {
		return err
	}
	if status, ok := p.responses.Get(string(key)); ok {
		review.Status = status.(imagepolicyv1alpha1.ImageReviewStatus)
	} else {
		if err := p.ask(ctx, review); err != nil {
			return p.backendFailed(ctx, pod, err)
		}
		ttl := p.denyTTL
		if review.Status.Allowed {
			ttl = p.allowTTL
		}
		p.responses.Add(string(key), review.Status, ttl)
	}
	for k, v := range review.Status.AuditAnnotations {
		addAuditAnnotation(ctx, AuditKeyPrefix+k, v)
	}
	if review.Status.Allowed {
		return nil
	}
	if review.Status.Reason != "" {
		return fmt.Errorf("image policy webhook backend denied one or more images: %s", review.Status.Reason)
	}
	return errors.New("one or more images rejected by webhook backend")
}

// ask POSTs review to the backend, with kube's retries, and reads its
// answer into review.
func (p *Plugin) ask(ctx context.Context, review *imagepolicyv1alpha1.ImageReview) error {
	result := p.webhook.WithExponentialBackoff(ctx, func() rest.Result {
		return p.webhook.RestClient.Post().Body(review).Do(ctx)
	})
	if err := result.Error(); err != nil {
		return err
	}
	var code int
	if result.StatusCode(&code); code < 200 || code >= 300 {
		return fmt.Errorf("Error contacting webhook: %d", code) //nolint:staticcheck // kube's wording, capital and all
	}
	return result.Into(review)
}

// backendFailed decides a pod whose review failed: with defaultAllow it
// is let in, marked in the audit event; else the failure refuses it.
// kube also marks the pod's annotations, which validation sees a copy
// of (in kube's store as in ours): the stored pod keeps no mark.
func (p *Plugin) backendFailed(ctx context.Context, pod *corev1.Pod, err error) error {
	slog.Debug("imagepolicy: error contacting webhook backend", "err", err)
	if !p.defaultAllow {
		return err
	}
	addAuditAnnotation(ctx, FailedOpenKey, "true")
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[corev1.ImagePolicyFailedOpenKey] = "true"
	return nil
}

// addAuditAnnotation adds an annotation to the request's audit event if
// its key is one kube's admission accepts (a qualified name with one
// "/"); kube logs and drops the others.
func addAuditAnnotation(ctx context.Context, key, value string) {
	if strings.Count(key, "/") != 1 || len(validation.IsQualifiedName(key)) != 0 {
		slog.Warn("imagepolicy: audit annotation with an invalid key dropped", "key", key)
		return
	}
	request.AddAuditAnnotation(ctx, key, value)
}
