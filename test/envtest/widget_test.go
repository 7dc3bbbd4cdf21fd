package envtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Widgets are testdata/crds/widgets.yaml's custom resource, handled as
// unstructured objects (an operator would generate Go types; the server
// cannot tell).
var widgetGVK = schema.GroupVersionKind{Group: "test.miniapiserver.io", Version: "v1", Kind: "Widget"}

func newWidget(namespace, name string, size int64, color string) *unstructured.Unstructured {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	w.SetNamespace(namespace)
	w.SetName(name)
	spec := map[string]any{"size": size}
	if color != "" {
		spec["color"] = color
	}
	w.Object["spec"] = spec
	return w
}

// widgetReconciler keeps, for each widget, a ConfigMap it controls with
// the widget's size, and reports it and the generation it saw in the
// widget's status.
type widgetReconciler struct{ client.Client }

func setupWidgetController(mgr ctrl.Manager) error {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	return ctrl.NewControllerManagedBy(mgr).Named("widget").For(w).Owns(&corev1.ConfigMap{}).
		Complete(&widgetReconciler{mgr.GetClient()})
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetGVK)
	if err := r.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if w.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.GetNamespace(), Name: w.GetName() + "-config"}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"size": strconv.FormatInt(size, 10)}
		return controllerutil.SetControllerReference(w, cm, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	if err := unstructured.SetNestedField(w.Object, w.GetGeneration(), "status", "observedGeneration"); err != nil {
		return ctrl.Result{}, err
	}
	if err := unstructured.SetNestedField(w.Object, cm.Name, "status", "configMap"); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.Status().Update(ctx, w)
}

const (
	mutatePath   = "/mutate-widget"
	validatePath = "/validate-widget"
	// deniedColor is the color the validating webhook refuses.
	deniedColor = "red"
	// defaultColor is the color the mutating webhook sets when none is.
	defaultColor = "blue"
)

// registerWidgetWebhooks serves the widgets' webhooks: the mutating one
// gives widgets without a color the default one; the validating one
// refuses red widgets.
func registerWidgetWebhooks(srv webhook.Server) {
	srv.Register(mutatePath, &webhook.Admission{Handler: admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		var w map[string]any
		if err := json.Unmarshal(req.Object.Raw, &w); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		if color, _, _ := unstructured.NestedString(w, "spec", "color"); color != "" {
			return admission.Allowed("")
		}
		if err := unstructured.SetNestedField(w, defaultColor, "spec", "color"); err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		mutated, err := json.Marshal(w)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		return admission.PatchResponseFromRaw(req.Object.Raw, mutated)
	})})
	srv.Register(validatePath, &webhook.Admission{Handler: admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		var w map[string]any
		if err := json.Unmarshal(req.Object.Raw, &w); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		if color, _, _ := unstructured.NestedString(w, "spec", "color"); color == deniedColor {
			return admission.Denied(fmt.Sprintf("%s widgets are not allowed", deniedColor))
		}
		return admission.Allowed("")
	})})
}

// webhookInstallOptions declares the webhooks as kubebuilder's manifests
// do, by a service reference that envtest points at the manager's
// webhook server.
func webhookInstallOptions() envtest.WebhookInstallOptions {
	rules := []admissionv1.RuleWithOperations{{
		Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
		Rule: admissionv1.Rule{
			APIGroups: []string{widgetGVK.Group}, APIVersions: []string{widgetGVK.Version}, Resources: []string{"widgets"},
		},
	}}
	service := func(path string) admissionv1.WebhookClientConfig {
		return admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "system", Name: "webhook-service", Path: ptr.To(path)}}
	}
	return envtest.WebhookInstallOptions{
		MutatingWebhooks: []*admissionv1.MutatingWebhookConfiguration{{
			ObjectMeta: metav1.ObjectMeta{Name: "widget-defaulter"},
			TypeMeta:   metav1.TypeMeta{Kind: "MutatingWebhookConfiguration", APIVersion: "admissionregistration.k8s.io/v1"},
			Webhooks: []admissionv1.MutatingWebhook{{
				Name: "mwidget.test.miniapiserver.io", ClientConfig: service(mutatePath), Rules: rules,
				FailurePolicy: ptr.To(admissionv1.Fail), SideEffects: ptr.To(admissionv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"},
			}},
		}},
		ValidatingWebhooks: []*admissionv1.ValidatingWebhookConfiguration{{
			ObjectMeta: metav1.ObjectMeta{Name: "widget-validator"},
			TypeMeta:   metav1.TypeMeta{Kind: "ValidatingWebhookConfiguration", APIVersion: "admissionregistration.k8s.io/v1"},
			Webhooks: []admissionv1.ValidatingWebhook{{
				Name: "vwidget.test.miniapiserver.io", ClientConfig: service(validatePath), Rules: rules,
				FailurePolicy: ptr.To(admissionv1.Fail), SideEffects: ptr.To(admissionv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"},
			}},
		}},
	}
}

// isDenied reports whether err is the API's refusal of a write.
func isDenied(err error) bool { return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) }
