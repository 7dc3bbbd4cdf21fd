package admissionregistration

import (
	"context"
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var validatingWebhookConfigurations = generic.Resource{
	Name: "validatingwebhookconfigurations", Singular: "validatingwebhookconfiguration", Kind: "ValidatingWebhookConfiguration",
	Categories: apiExtensions,
	New:        generic.NewOf[admissionregistrationv1.ValidatingWebhookConfiguration], NewList: generic.NewOf[admissionregistrationv1.ValidatingWebhookConfigurationList],
	Strategy: validatingWebhooksStrategy,
	Table: webhooksTable(func(obj runtime.Object) (string, int, metav1.Time) {
		c := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
		return c.Name, len(c.Webhooks), c.CreationTimestamp
	}),
}

var mutatingWebhookConfigurations = generic.Resource{
	Name: "mutatingwebhookconfigurations", Singular: "mutatingwebhookconfiguration", Kind: "MutatingWebhookConfiguration",
	Categories: apiExtensions,
	New:        generic.NewOf[admissionregistrationv1.MutatingWebhookConfiguration], NewList: generic.NewOf[admissionregistrationv1.MutatingWebhookConfigurationList],
	Strategy: mutatingWebhooksStrategy,
	Table: webhooksTable(func(obj runtime.Object) (string, int, metav1.Time) {
		c := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
		return c.Name, len(c.Webhooks), c.CreationTimestamp
	}),
}

// webhooksTable is kubectl's NAME WEBHOOKS AGE.
func webhooksTable(row func(runtime.Object) (string, int, metav1.Time)) generic.TablePrinter {
	return generic.TablePrinter{
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
			generic.AgeColumn,
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			name, n, created := row(obj)
			return []interface{}{name, int64(n), generic.TranslateTimestampSince(created)}, nil
		},
	}
}

// webhooksStrategy is the strategy of validating and mutating webhook
// configurations, which kube validates alike.
type webhooksStrategy struct {
	configStrategy
	// webhooks returns what validation reads of a configuration's webhooks.
	webhooks func(runtime.Object) []webhook
	// setDefaults sets kube v1's defaults of a configuration.
	setDefaults func(runtime.Object)
}

// Default implements rest.Defaulter.
func (s webhooksStrategy) Default(obj runtime.Object) { s.setDefaults(obj) }

func (webhooksStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.StartGeneration(obj)
}

// PrepareForUpdate moves the generation on when the webhooks change.
func (s webhooksStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	if !reflect.DeepEqual(s.webhooks(obj), s.webhooks(old)) {
		generic.BumpGeneration(obj, old)
	}
}

func (s webhooksStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	allErrs := validateWebhookConfiguration(objectMeta(obj), s.webhooks(obj), strictWebhookOptions())
	return append(allErrs, validateStaticSuffix(obj)...)
}

func (s webhooksStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	hooks := s.webhooks(obj)
	return validateWebhookConfiguration(objectMeta(obj), hooks, webhookUpdateOptions(hooks, s.webhooks(old)))
}

func (s webhooksStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return excludedRuleWarnings(s.webhooks(obj))
}

func (s webhooksStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return append(staticSuffixWarnings(obj), excludedRuleWarnings(s.webhooks(obj))...)
}

var validatingWebhooksStrategy = webhooksStrategy{
	webhooks: func(obj runtime.Object) []webhook {
		return validatingWebhooks(obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks)
	},
	setDefaults: func(obj runtime.Object) {
		for i := range obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks {
			w := &obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks[i]
			defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, &w.ClientConfig, w.Rules)
		}
	},
}

var mutatingWebhooksStrategy = webhooksStrategy{
	webhooks: func(obj runtime.Object) []webhook {
		return mutatingWebhooks(obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks)
	},
	// and reinvocationPolicy Never.
	setDefaults: func(obj runtime.Object) {
		for i := range obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks {
			w := &obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks[i]
			defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, &w.ClientConfig, w.Rules)
			if w.ReinvocationPolicy == nil {
				w.ReinvocationPolicy = ptr.To(admissionregistrationv1.NeverReinvocationPolicy)
			}
		}
	},
}

// defaultWebhook sets kube v1's defaults of a webhook: failurePolicy
// Fail, matchPolicy Equivalent, empty (matching) selectors, a 10 second
// timeout, port 443 of a service, rules of every scope.
func defaultWebhook(failurePolicy **admissionregistrationv1.FailurePolicyType, matchPolicy **admissionregistrationv1.MatchPolicyType,
	namespaceSelector, objectSelector **metav1.LabelSelector, timeoutSeconds **int32,
	clientConfig *admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations) {
	if *failurePolicy == nil {
		*failurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	if *matchPolicy == nil {
		*matchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if *namespaceSelector == nil {
		*namespaceSelector = &metav1.LabelSelector{}
	}
	if *objectSelector == nil {
		*objectSelector = &metav1.LabelSelector{}
	}
	if *timeoutSeconds == nil {
		*timeoutSeconds = ptr.To[int32](10)
	}
	if s := clientConfig.Service; s != nil && s.Port == nil {
		s.Port = ptr.To[int32](443)
	}
	for i := range rules {
		defaultRule(&rules[i].Rule)
	}
}

// defaultRule: a rule without scope matches every scope.
func defaultRule(r *admissionregistrationv1.Rule) {
	if r.Scope == nil {
		r.Scope = ptr.To(admissionregistrationv1.AllScopes)
	}
}
