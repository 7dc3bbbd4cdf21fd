package value

import (
	"encoding/base64"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kube's messages for an invalid EncryptionConfiguration.
const (
	moreThanOneProvider = "more than one provider specified in a single element, should split into different list elements"
	noProvider          = "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"
	keyLenErrFmt        = "secret is not of the expected length, got %d, expected one of %v"
	atLeastOneFmt       = "at least one %s is required"
	mandatoryFieldFmt   = "%s is a mandatory field for a %s"
	base64EncodingErr   = "secrets must be base64 encoded"
	eventsGroupErr      = "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"
	extensionsGroupErr  = "'extensions' group has been removed and cannot be used for encryption"
	starResourceErr     = "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
	overlapErr          = "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"
	nonRESTResourceErr  = "resources which do not have REST API/s cannot be encrypted"
	resourceNameErr     = "resource name should not contain capital letters"
	acrossGroupsErr     = "encrypting the same resource across groups is not supported"
	duplicateErr        = "the same resource cannot be specified multiple times"
	kmsUnsupported      = "kms providers are not supported by this server"
)

var (
	aesKeySizes       = []int{16, 24, 32}
	secretboxKeySizes = []int{32}
)

// validate is kube's ValidateEncryptionConfiguration, and refuses KMS.
func validate(c *EncryptionConfiguration) field.ErrorList {
	root := field.NewPath("resources")
	if len(c.Resources) == 0 {
		return field.ErrorList{field.Required(root, fmt.Sprintf(atLeastOneFmt, root))}
	}
	var allErrs field.ErrorList
	for i, rc := range c.Resources {
		r, p := root.Index(i).Child("resources"), root.Index(i).Child("providers")
		if len(rc.Resources) == 0 {
			allErrs = append(allErrs, field.Required(r, fmt.Sprintf(atLeastOneFmt, r)))
		}
		allErrs = append(allErrs, validateOverlap(rc.Resources, r)...)
		allErrs = append(allErrs, validateResourceNames(rc.Resources, r)...)
		if len(rc.Providers) == 0 {
			allErrs = append(allErrs, field.Required(p, fmt.Sprintf(atLeastOneFmt, p)))
		}
		for j, provider := range rc.Providers {
			allErrs = append(allErrs, validateProvider(provider, p.Index(j))...)
		}
	}
	return allErrs
}

func validateProvider(p ProviderConfiguration, path *field.Path) field.ErrorList {
	found := 0
	for _, set := range []bool{p.KMS != nil, p.AESGCM != nil, p.AESCBC != nil, p.Secretbox != nil, p.Identity != nil} {
		if set {
			found++
		}
	}
	switch {
	case found == 0:
		return field.ErrorList{field.Invalid(path, p.internal(), noProvider)}
	case found > 1:
		return field.ErrorList{field.Invalid(path, p.internal(), moreThanOneProvider)}
	case p.KMS != nil:
		return field.ErrorList{field.Invalid(path.Child("kms"), "", kmsUnsupported)}
	case p.AESGCM != nil:
		return validateKeys(p.AESGCM.Keys, path.Child("aesgcm", "keys"), aesKeySizes)
	case p.AESCBC != nil:
		return validateKeys(p.AESCBC.Keys, path.Child("aescbc", "keys"), aesKeySizes)
	case p.Secretbox != nil:
		return validateKeys(p.Secretbox.Keys, path.Child("secretbox", "keys"), secretboxKeySizes)
	}
	return nil
}

func validateKeys(keys []Key, path *field.Path, sizes []int) field.ErrorList {
	if len(keys) == 0 {
		return field.ErrorList{field.Required(path, fmt.Sprintf(atLeastOneFmt, "keys"))}
	}
	var allErrs field.ErrorList
	for i, k := range keys {
		p := path.Index(i)
		if k.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), fmt.Sprintf(mandatoryFieldFmt, "name", "key")))
		}
		if k.Secret == "" {
			allErrs = append(allErrs, field.Required(p.Child("secret"), fmt.Sprintf(mandatoryFieldFmt, "secret", "key")))
			continue
		}
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("secret"), "REDACTED", base64EncodingErr))
			continue
		}
		ok := false
		for _, n := range sizes {
			ok = ok || len(secret) == n
		}
		if !ok {
			allErrs = append(allErrs, field.Invalid(p.Child("secret"), "REDACTED", fmt.Sprintf(keyLenErrFmt, len(secret), sizes)))
		}
	}
	return allErrs
}

// validateOverlap refuses a list naming a resource twice, or a resource
// and a wildcard that covers it.
func validateOverlap(resources []string, path *field.Path) field.ErrorList {
	if len(resources) < 2 {
		return nil
	}
	grs := make([]schema.GroupResource, len(resources))
	for i, r := range resources {
		grs[i] = schema.ParseGroupResource(r)
	}
	// kube's loop, to the letter: the second duplicate pair is also
	// checked for overlap (so "*.*" twice is both).
	var duplicate, overlap bool
	for i, a := range grs {
		for j, b := range grs {
			if i == j {
				continue
			}
			if a == b && !duplicate {
				duplicate = true
				continue
			}
			if !overlap && (a == anyResource || a.Group == b.Group && (a.Resource == "*" || b.Resource == "*")) {
				overlap = true
			}
		}
	}
	var allErrs field.ErrorList
	if duplicate {
		allErrs = append(allErrs, field.Invalid(path, resources, duplicateErr))
	}
	if overlap {
		allErrs = append(allErrs, field.Invalid(path, resources, overlapErr))
	}
	return allErrs
}

func validateResourceNames(resources []string, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, r := range resources {
		gr := schema.ParseGroupResource(r)
		var msg string
		switch {
		case hasCapital(r):
			msg = resourceNameErr
		case r == "*":
			msg = starResourceErr
		case r == "apiserveripinfo" || r == "serviceipallocations" || r == "servicenodeportallocations":
			msg = nonRESTResourceErr
		case gr.Group == "events.k8s.io":
			msg = eventsGroupErr
		case gr.Group == "extensions":
			msg = extensionsGroupErr
		case gr.Group == "*" && gr.Resource != "*":
			msg = acrossGroupsErr
		default:
			continue
		}
		allErrs = append(allErrs, field.Invalid(path.Index(i), r, msg))
	}
	return allErrs
}

// internalProvider is a provider as kube's validation prints it: its
// internal type, with Go field names.
type internalProvider struct {
	AESGCM    *internalKeys
	AESCBC    *internalKeys
	Secretbox *internalKeys
	Identity  *struct{}
	KMS       *struct{}
}

type internalKeys struct {
	Keys []struct{ Name, Secret string }
}

func (p ProviderConfiguration) internal() internalProvider {
	keys := func(c *KeysConfiguration) *internalKeys {
		if c == nil {
			return nil
		}
		out := &internalKeys{}
		for _, k := range c.Keys {
			out.Keys = append(out.Keys, struct{ Name, Secret string }{k.Name, k.Secret})
		}
		return out
	}
	out := internalProvider{AESGCM: keys(p.AESGCM), AESCBC: keys(p.AESCBC), Secretbox: keys(p.Secretbox), Identity: p.Identity}
	if p.KMS != nil {
		out.KMS = &struct{}{}
	}
	return out
}
