package imagepolicy

import (
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// The bounds and defaults of kube's configuration. A duration is given as
// a bare number (seconds for the TTLs, milliseconds for the backoff); 0
// asks for the default and -1 turns the setting off (a zero duration).
const (
	defaultRetryBackoff = 500 * time.Millisecond
	minRetryBackoff     = time.Duration(1)
	maxRetryBackoff     = 5 * time.Minute
	defaultAllowTTL     = 5 * time.Minute
	defaultDenyTTL      = 30 * time.Second
	minAllowTTL         = time.Second
	maxAllowTTL         = 30 * time.Minute
	minDenyTTL          = time.Second
	maxDenyTTL          = 30 * time.Minute

	useDefault = time.Duration(0)
	disabled   = time.Duration(-1)
)

// AdmissionConfig is the plugin's configuration file, as kube reads it:
// JSON or YAML, with one key, imagePolicy. Other keys (apiVersion, kind)
// are ignored, as kube ignores them. The Go names are kube's, so that a
// decoding error names the same fields.
type AdmissionConfig struct {
	ImagePolicyWebhook imagePolicyWebhookConfig `json:"imagePolicy"`
}

// imagePolicyWebhookConfig holds the durations as decoded, bare numbers
// (nanoseconds to time.Duration) that normalize scales.
type imagePolicyWebhookConfig struct {
	KubeConfigFile string        `json:"kubeConfigFile"`
	AllowTTL       time.Duration `json:"allowTTL"`
	DenyTTL        time.Duration `json:"denyTTL"`
	RetryBackoff   time.Duration `json:"retryBackoff"`
	DefaultAllow   bool          `json:"defaultAllow"`
}

// Config is a configuration normalized: the durations scaled, defaulted
// and checked against kube's bounds.
type Config struct {
	// KubeConfigFile names the backend: a kubeconfig whose current
	// context's cluster is the server (and its CA), and whose user is
	// the client's credentials.
	KubeConfigFile string
	// AllowTTL and DenyTTL are how long an answer is cached.
	AllowTTL, DenyTTL time.Duration
	// RetryBackoff is the first wait before a retry.
	RetryBackoff time.Duration
	// DefaultAllow lets pods in when the backend cannot be reached.
	DefaultAllow bool
}

// LoadConfiguration reads and normalizes the plugin's configuration. As
// in kube, the plugin has no default: no configuration is an error.
func LoadConfiguration(r io.Reader) (Config, error) {
	if r == nil {
		return Config{}, errors.New("no config specified")
	}
	var file AdmissionConfig
	if err := yaml.NewYAMLOrJSONDecoder(r, 4096).Decode(&file); err != nil {
		return Config{}, err
	}
	c := file.ImagePolicyWebhook
	var err error
	cfg := Config{KubeConfigFile: c.KubeConfigFile, DefaultAllow: c.DefaultAllow}
	if cfg.RetryBackoff, err = normalize(time.Millisecond, c.RetryBackoff, minRetryBackoff, maxRetryBackoff, defaultRetryBackoff); err != nil {
		return Config{}, err
	}
	if cfg.AllowTTL, err = normalize(time.Second, c.AllowTTL, minAllowTTL, maxAllowTTL, defaultAllowTTL); err != nil {
		return Config{}, err
	}
	if cfg.DenyTTL, err = normalize(time.Second, c.DenyTTL, minDenyTTL, maxDenyTTL, defaultDenyTTL); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// normalize scales a decoded duration by unit and checks it against
// (lowest, highest], as kube does: a value equal to the lower bound is
// refused (an allowTTL of 1 is "got 1s").
func normalize(unit, value, lowest, highest, def time.Duration) (time.Duration, error) {
	switch value {
	case disabled:
		return 0, nil
	case useDefault:
		return def, nil
	}
	value *= unit
	if value <= lowest || value > highest {
		return value, fmt.Errorf("valid value is between %v and %v, got %v", lowest, highest, value)
	}
	return value, nil
}
