package webhook

import (
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/miniapiserver/miniapiserver/pkg/registry/webhookclient"
)

// hook is one webhook of a configuration: the fields mutating and
// validating webhooks share, its selectors parsed, its matchConditions
// compiled on first use, and its client. It plays the part of kube's
// webhook accessors (k8s.io/apiserver's plugin/webhook package), which
// this package does not import: they link client-go's REST client and,
// through the generic dispatcher, client-go's whole clientset and
// informers (about 6 MB of binary and of pages touched at startup) for
// what a few fields give.
type hook struct {
	uid           string // kube's: configuration/webhook/index
	configuration string
	name          string
	mutating      bool

	clientConfig       admissionregistrationv1.WebhookClientConfig
	rules              []admissionregistrationv1.RuleWithOperations
	failurePolicy      *admissionregistrationv1.FailurePolicyType
	matchPolicy        *admissionregistrationv1.MatchPolicyType
	sideEffects        *admissionregistrationv1.SideEffectClass
	timeoutSeconds     *int32
	reviewVersions     []string
	matchConditions    []admissionregistrationv1.MatchCondition
	reinvocationPolicy *admissionregistrationv1.ReinvocationPolicyType // mutating webhooks only

	namespaceSelector    labels.Selector
	namespaceSelectorErr error
	objectSelector       labels.Selector
	objectSelectorErr    error
	matcher              func() matchconditions.Matcher

	client    *webhookclient.Client
	clientErr error // why the client could not be made (a bad caBundle)
}

func newMutatingHook(configuration string, index int, w *admissionregistrationv1.MutatingWebhook) *hook {
	h := &hook{uid: hookUID(configuration, w.Name, index), configuration: configuration, name: w.Name, mutating: true,
		clientConfig: w.ClientConfig, rules: w.Rules, failurePolicy: w.FailurePolicy, matchPolicy: w.MatchPolicy,
		sideEffects: w.SideEffects, timeoutSeconds: w.TimeoutSeconds, reviewVersions: w.AdmissionReviewVersions,
		matchConditions: w.MatchConditions, reinvocationPolicy: w.ReinvocationPolicy}
	h.parse(w.NamespaceSelector, w.ObjectSelector)
	return h
}

func newValidatingHook(configuration string, index int, w *admissionregistrationv1.ValidatingWebhook) *hook {
	h := &hook{uid: hookUID(configuration, w.Name, index), configuration: configuration, name: w.Name,
		clientConfig: w.ClientConfig, rules: w.Rules, failurePolicy: w.FailurePolicy, matchPolicy: w.MatchPolicy,
		sideEffects: w.SideEffects, timeoutSeconds: w.TimeoutSeconds, reviewVersions: w.AdmissionReviewVersions,
		matchConditions: w.MatchConditions}
	h.parse(w.NamespaceSelector, w.ObjectSelector)
	return h
}

// parse parses the selectors and prepares the compilation of the
// matchConditions, as kube's accessors do (the matcher is compiled by
// the first request the webhook's rules match).
func (h *hook) parse(namespaceSelector, objectSelector *metav1.LabelSelector) {
	h.namespaceSelector, h.namespaceSelectorErr = metav1.LabelSelectorAsSelector(namespaceSelector)
	h.objectSelector, h.objectSelectorErr = metav1.LabelSelectorAsSelector(objectSelector)
	matcherType := "validating"
	if h.mutating {
		matcherType = "admit"
	}
	h.matcher = sync.OnceValue(func() matchconditions.Matcher {
		expressions := make([]plugincel.ExpressionAccessor, len(h.matchConditions))
		for i, c := range h.matchConditions {
			expressions[i] = &matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression}
		}
		filter := conditions().CompileCondition(expressions,
			plugincel.OptionalVariableDeclarations{HasAuthorizer: true}, environment.StoredExpressions)
		return matchconditions.NewMatcher(filter, h.failurePolicy, "webhook", matcherType, h.name)
	})
}

// GetParsedObjectSelector implements kube's object.ObjectSelectorProvider.
func (h *hook) GetParsedObjectSelector() (labels.Selector, error) {
	return h.objectSelector, h.objectSelectorErr
}

// conditions compiles the matchConditions of webhooks. kube's CEL
// environments are built by the first webhook with a condition, not at
// startup: most servers have none, and the environments cost about
// 400 KB of heap.
var conditions = sync.OnceValue(func() plugincel.ConditionCompiler {
	return plugincel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
})

// invocation is how a webhook is called for a request: the resource,
// subresource and kind its rules matched (the request's, or with
// matchPolicy Equivalent, another version's).
type invocation struct {
	resource    schema.GroupVersionResource
	subresource string
	kind        schema.GroupVersionKind
}
