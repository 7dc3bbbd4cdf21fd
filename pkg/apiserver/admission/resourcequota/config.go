package resourcequota

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	resourcequotaapi "k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota/install"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota/validation"
)

var (
	configScheme = runtime.NewScheme()
	configCodecs = serializer.NewCodecFactory(configScheme, serializer.EnableStrict)
)

func init() {
	install.Install(configScheme)
}

// LoadConfiguration decodes and validates the plugin's configuration (a
// ResourceQuotaConfiguration of apiserver.config.k8s.io/v1, or the older
// Configuration of resourcequota.admission.k8s.io/v1beta1 or v1alpha1,
// strictly, as kube reads it);
// nil config is the default, which limits nothing.
func LoadConfiguration(config io.Reader) (*resourcequotaapi.Configuration, error) {
	if config == nil {
		return &resourcequotaapi.Configuration{}, nil
	}
	data, err := io.ReadAll(config)
	if err != nil {
		return nil, err
	}
	obj, err := runtime.Decode(configCodecs.UniversalDecoder(), data)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*resourcequotaapi.Configuration)
	if !ok {
		return nil, fmt.Errorf("unexpected type: %T", obj)
	}
	if errs := validation.ValidateConfiguration(cfg); len(errs) != 0 {
		return nil, errs.ToAggregate()
	}
	return cfg, nil
}
