package eventratelimit

import (
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SchemeGroupVersion is the API version of the configuration file.
var SchemeGroupVersion = schema.GroupVersion{Group: "eventratelimit.admission.k8s.io", Version: "v1alpha1"}

// LimitType is what a limit's buckets are kept per.
type LimitType string

// kube's limit types.
const (
	// ServerLimitType: one bucket for every event the server receives.
	ServerLimitType LimitType = "Server"
	// NamespaceLimitType: a bucket per namespace.
	NamespaceLimitType LimitType = "Namespace"
	// UserLimitType: a bucket per user name.
	UserLimitType LimitType = "User"
	// SourceAndObjectLimitType: a bucket per event source and involved
	// object.
	SourceAndObjectLimitType LimitType = "SourceAndObject"
)

// Configuration is kube's eventratelimit.admission.k8s.io/v1alpha1
// Configuration. The type names are kube's (and this package's name its
// internal package's), so that validation errors print values alike.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`
	// Limits are the limits placed on events; at least one.
	Limits []Limit `json:"limits"`
}

// Limit is one limit: a token bucket of burst tokens refilled at qps per
// second, per key of its type; cacheSize buckets are kept (the least
// recently used is forgotten, and so starts full again), 4096 when 0.
type Limit struct {
	Type      LimitType `json:"type"`
	QPS       int32     `json:"qps"`
	Burst     int32     `json:"burst"`
	CacheSize int32     `json:"cacheSize,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (c *Configuration) DeepCopyObject() runtime.Object {
	out := *c
	out.Limits = append([]Limit(nil), c.Limits...)
	return &out
}

var (
	configScheme = runtime.NewScheme()
	configCodecs = serializer.NewCodecFactory(configScheme)
)

func init() {
	configScheme.AddKnownTypes(SchemeGroupVersion, &Configuration{})
}

// LoadConfiguration decodes and validates the plugin's configuration as
// kube does: JSON or YAML, apiVersion and kind required and known,
// unknown fields ignored. kube's default (no configuration) has no
// limits, and so fails validation: the plugin needs one.
func LoadConfiguration(r io.Reader) (*Configuration, error) {
	cfg := &Configuration{}
	if r != nil {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		obj, err := runtime.Decode(configCodecs.UniversalDeserializer(), data)
		if err != nil {
			return nil, err
		}
		var ok bool
		if cfg, ok = obj.(*Configuration); !ok {
			return nil, fmt.Errorf("unexpected type: %T", obj)
		}
	}
	if errs := validateConfiguration(cfg); len(errs) != 0 {
		return nil, errs.ToAggregate()
	}
	return cfg, nil
}

// limitTypes are the known types, in the order their list is given in a
// refusal (kube's comes from a map, in no set order).
var limitTypes = []LimitType{ServerLimitType, NamespaceLimitType, UserLimitType, SourceAndObjectLimitType}

// validateConfiguration is kube's validation, with its fields and
// messages.
func validateConfiguration(cfg *Configuration) field.ErrorList {
	var errs field.ErrorList
	limitsPath := field.NewPath("limits")
	if len(cfg.Limits) == 0 {
		errs = append(errs, field.Invalid(limitsPath, cfg.Limits, "must not be empty"))
	}
	for i, limit := range cfg.Limits {
		path := limitsPath.Index(i)
		if !knownType(limit.Type) {
			errs = append(errs, field.NotSupported(path.Child("type"), limit.Type, limitTypes))
		}
		if limit.Burst <= 0 {
			errs = append(errs, field.Invalid(path.Child("burst"), limit.Burst, "must be positive"))
		}
		if limit.QPS <= 0 {
			errs = append(errs, field.Invalid(path.Child("qps"), limit.QPS, "must be positive"))
		}
		if limit.Type != ServerLimitType && limit.CacheSize < 0 {
			errs = append(errs, field.Invalid(path.Child("cacheSize"), limit.CacheSize, "must not be negative"))
		}
	}
	return errs
}

func knownType(t LimitType) bool {
	for _, k := range limitTypes {
		if k == t {
			return true
		}
	}
	return false
}
