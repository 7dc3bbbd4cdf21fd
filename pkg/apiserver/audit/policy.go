package audit

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"sigs.k8s.io/yaml"
)

// RequestConfig is what the policy decides for one request.
type RequestConfig struct {
	Level             auditv1.Level
	OmitStages        []auditv1.Stage
	OmitManagedFields bool
}

// omits reports whether stage is left out.
func (c RequestConfig) omits(stage auditv1.Stage) bool { return slices.Contains(c.OmitStages, stage) }

// Policy decides the audit level of requests: the first rule that matches
// a request wins; none matching is None.
type Policy struct {
	rules             []auditv1.PolicyRule // with the policy's omitStages merged in
	omitStages        []auditv1.Stage
	omitManagedFields bool
}

// LoadPolicyFile reads an audit.k8s.io/v1 Policy (YAML or JSON), checks it
// as kube does, and returns it. Unknown fields are logged and ignored, as
// kube's lenient fallback does.
func LoadPolicyFile(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &auditv1.Policy{}
	if err := yaml.UnmarshalStrict(data, p); err != nil {
		slog.Warn("audit policy contains errors, falling back to lenient decoding", "file", path, "error", err)
		p = &auditv1.Policy{}
		if err := yaml.Unmarshal(data, p); err != nil {
			return nil, fmt.Errorf("failed decoding: %w", err)
		}
	}
	if p.APIVersion != auditv1.SchemeGroupVersion.String() || p.Kind != "Policy" {
		return nil, fmt.Errorf("unknown group version field %s, Kind=%s in policy", p.APIVersion, p.Kind)
	}
	if errs := validatePolicy(p); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if len(p.Rules) == 0 {
		return nil, errors.New("loaded illegal policy with 0 rules")
	}
	return NewPolicy(p), nil
}

// NewPolicy returns the evaluator of p (already validated).
func NewPolicy(p *auditv1.Policy) *Policy {
	out := &Policy{omitStages: p.OmitStages, omitManagedFields: p.OmitManagedFields}
	for _, r := range p.Rules {
		r.OmitStages = unionStages(p.OmitStages, r.OmitStages)
		out.rules = append(out.rules, r)
	}
	return out
}

func unionStages(a, b []auditv1.Stage) []auditv1.Stage {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Evaluate returns the level and stages of the request attrs describes.
func (p *Policy) Evaluate(attrs authorizer.Attributes) RequestConfig {
	for i := range p.rules {
		r := &p.rules[i]
		if ruleMatches(r, attrs) {
			omitMF := p.omitManagedFields
			if r.OmitManagedFields != nil {
				omitMF = *r.OmitManagedFields
			}
			return RequestConfig{Level: r.Level, OmitStages: r.OmitStages, OmitManagedFields: omitMF}
		}
	}
	return RequestConfig{Level: auditv1.LevelNone, OmitStages: p.omitStages, OmitManagedFields: p.omitManagedFields}
}

func ruleMatches(r *auditv1.PolicyRule, attrs authorizer.Attributes) bool {
	u := attrs.GetUser()
	if len(r.Users) > 0 && (u == nil || !slices.Contains(r.Users, u.GetName())) {
		return false
	}
	if len(r.UserGroups) > 0 {
		if u == nil || !slices.ContainsFunc(u.GetGroups(), func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
			return false
		}
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, attrs.GetVerb()) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return ruleMatchesResource(r, attrs)
	}
	if len(r.NonResourceURLs) > 0 {
		return !attrs.IsResourceRequest() && slices.ContainsFunc(r.NonResourceURLs, func(spec string) bool {
			return pathMatches(attrs.GetPath(), spec)
		})
	}
	return true
}

// pathMatches matches a path against "*", an exact path, or a prefix
// ending in "*".
func pathMatches(path, spec string) bool {
	return spec == "*" || spec == path ||
		strings.HasSuffix(spec, "*") && strings.HasPrefix(path, strings.TrimRight(spec, "*"))
}

func ruleMatchesResource(r *auditv1.PolicyRule, attrs authorizer.Attributes) bool {
	if !attrs.IsResourceRequest() {
		return false
	}
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, attrs.GetNamespace()) {
		return false // cluster-scoped requests have the namespace ""
	}
	if len(r.Resources) == 0 {
		return true
	}
	resource, sub := attrs.GetResource(), attrs.GetSubresource()
	combined := resource
	if sub != "" {
		combined = resource + "/" + sub
	}
	for _, gr := range r.Resources {
		if gr.Group != attrs.GetAPIGroup() && gr.Group != "*" {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, attrs.GetName()) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == combined || res == "*":
				return true
			case sub != "" && strings.HasPrefix(res, "*/") && sub == res[2:]:
				return true
			case strings.HasSuffix(res, "/*") && resource == strings.TrimSuffix(res, "/*"):
				return true
			}
		}
	}
	return false
}

var (
	validLevels     = []string{"None", "Metadata", "Request", "RequestResponse"}
	validOmitStages = []string{"RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"}
)

// validatePolicy is kube's validation of a Policy, with its messages.
func validatePolicy(p *auditv1.Policy) field.ErrorList {
	errs := validateOmitStages(p.OmitStages, field.NewPath("omitStages"))
	for i, r := range p.Rules {
		path := field.NewPath("rules").Index(i)
		switch {
		case r.Level == "":
			errs = append(errs, field.Required(path.Child("level"), ""))
		case !slices.Contains(validLevels, string(r.Level)):
			errs = append(errs, field.NotSupported(path.Child("level"), r.Level, validLevels))
		}
		for j, url := range r.NonResourceURLs {
			if url == "*" {
				continue
			}
			if !strings.HasPrefix(url, "/") {
				errs = append(errs, field.Invalid(path.Child("nonResourceURLs").Index(j), url, "non-resource URL rules must begin with a '/' character"))
			}
			if url != "" && strings.ContainsRune(url[:len(url)-1], '*') {
				errs = append(errs, field.Invalid(path.Child("nonResourceURLs").Index(j), url, "non-resource URL wildcards '*' must be the final character of the rule"))
			}
		}
		for _, gr := range r.Resources {
			if gr.Group != "" && gr.Group != "*" {
				if msgs := validation.NameIsDNSSubdomain(gr.Group, false); len(msgs) != 0 {
					errs = append(errs, field.Invalid(path.Child("resources").Child("group"), gr.Group, strings.Join(msgs, ",")))
				}
			}
			if len(gr.ResourceNames) > 0 && len(gr.Resources) == 0 {
				errs = append(errs, field.Invalid(path.Child("resources").Child("resourceNames"), gr.ResourceNames, "using resourceNames requires at least one resource"))
			}
		}
		errs = append(errs, validateOmitStages(r.OmitStages, path.Child("omitStages"))...)
		if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
			errs = append(errs, field.Invalid(path.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
	}
	return errs
}

func validateOmitStages(stages []auditv1.Stage, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range stages {
		if !slices.Contains(validOmitStages, string(s)) {
			errs = append(errs, field.Invalid(path.Index(i), string(s), "allowed stages are "+strings.Join(validOmitStages, ",")))
		}
	}
	return errs
}
