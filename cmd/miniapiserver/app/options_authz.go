package app

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
)

// AuthorizationOptions are kube-apiserver's flags of the authorization
// webhook and of the structured authorization configuration, beside
// --authorization-mode (AuthOptions.AuthorizationModes).
type AuthorizationOptions struct {
	// WebhookConfigFile is a kubeconfig naming the webhook of the Webhook
	// mode; WebhookVersion the SubjectAccessReview version it speaks.
	WebhookConfigFile string
	WebhookVersion    string
	// WebhookCacheAuthorizedTTL and WebhookCacheUnauthorizedTTL are how
	// long the webhook's answers are reused (0: not at all).
	WebhookCacheAuthorizedTTL, WebhookCacheUnauthorizedTTL time.Duration
	// ConfigFile is kube's AuthorizationConfiguration, in place of
	// --authorization-mode and the webhook flags.
	ConfigFile string
	// ConfigReloadInterval is how often ConfigFile (and
	// --authentication-config) is read again for changes (0: a minute, as
	// kube). Not a flag: tests shorten it.
	ConfigReloadInterval time.Duration

	// changed tells whether a flag was given (nil when the options were
	// not parsed from flags).
	changed func(name string) bool
}

// The legacy authorization flags, which --authorization-config excludes.
var legacyAuthorizationFlags = []string{"authorization-mode", "authorization-webhook-config-file", "authorization-webhook-version",
	"authorization-webhook-cache-authorized-ttl", "authorization-webhook-cache-unauthorized-ttl"}

// defaultAuthorizationOptions are kube's defaults (the webhook speaks
// v1beta1 unless told otherwise, as kube's).
func defaultAuthorizationOptions() AuthorizationOptions {
	return AuthorizationOptions{
		WebhookVersion:              "v1beta1",
		WebhookCacheAuthorizedTTL:   5 * time.Minute,
		WebhookCacheUnauthorizedTTL: 30 * time.Second,
	}
}

func (o *AuthorizationOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.WebhookConfigFile, "authorization-webhook-config-file", o.WebhookConfigFile,
		"kubeconfig naming the webhook of --authorization-mode=Webhook: SubjectAccessReviews are POSTed to its cluster's server, as its user.")
	fs.StringVar(&o.WebhookVersion, "authorization-webhook-version", o.WebhookVersion,
		"The authorization.k8s.io SubjectAccessReview version sent to and expected from the webhook: v1 or v1beta1.")
	fs.DurationVar(&o.WebhookCacheAuthorizedTTL, "authorization-webhook-cache-authorized-ttl", o.WebhookCacheAuthorizedTTL,
		"How long the webhook's 'allowed' answers are reused for the same request (0: not at all).")
	fs.DurationVar(&o.WebhookCacheUnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", o.WebhookCacheUnauthorizedTTL,
		"How long the webhook's other answers are reused for the same request (0: not at all).")
	fs.StringVar(&o.ConfigFile, "authorization-config", o.ConfigFile,
		"kube's AuthorizationConfiguration (apiserver.config.k8s.io/v1): the chain of authorizers, read again when it changes. Mutually exclusive with --authorization-mode and --authorization-webhook-*.")
	o.changed = fs.Changed
}

// legacySet tells whether --authorization-mode or a webhook flag was
// given, on the command line or (for embedding programs) as a value other
// than the default.
func (o *AuthorizationOptions) legacySet(modes []string) bool {
	if o.changed != nil && slices.ContainsFunc(legacyAuthorizationFlags, o.changed) {
		return true
	}
	d := defaultAuthorizationOptions()
	return !slices.Equal(modes, defaultAuthOptions().AuthorizationModes) || o.WebhookConfigFile != "" ||
		o.WebhookVersion != d.WebhookVersion || o.WebhookCacheAuthorizedTTL != d.WebhookCacheAuthorizedTTL ||
		o.WebhookCacheUnauthorizedTTL != d.WebhookCacheUnauthorizedTTL
}

// validate checks the authorization flags as kube does; the file itself is
// loaded and validated when the server starts.
func (o *AuthorizationOptions) validate(modeList []string) error {
	if o.ConfigFile != "" {
		if o.legacySet(modeList) {
			return errors.New("--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined")
		}
		return nil
	}
	modes, err := authz.ParseModes(modeList)
	if err != nil {
		return fmt.Errorf("--authorization-mode: %w", err)
	}
	hasWebhook := slices.Contains(modes, authz.ModeWebhook)
	switch {
	case hasWebhook && o.WebhookConfigFile == "":
		return errors.New("--authorization-mode: authorization-mode Webhook's authorization config file not passed")
	case !hasWebhook && o.WebhookConfigFile != "":
		return errors.New("--authorization-webhook-config-file: cannot specify --authorization-webhook-config-file without mode Webhook")
	}
	if v := o.WebhookVersion; hasWebhook && v != "v1" && v != "v1beta1" {
		return fmt.Errorf("--authorization-webhook-version: unsupported webhook authorizer version %q, supported versions are \"v1\", \"v1beta1\"", v)
	}
	return nil
}

func (o *AuthorizationOptions) reloadInterval() time.Duration {
	if o.ConfigReloadInterval > 0 {
		return o.ConfigReloadInterval
	}
	return time.Minute
}
