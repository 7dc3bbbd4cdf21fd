package app

import (
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/aggregator"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/availability"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// newAggregator builds the aggregation layer's proxy: services reached
// through their EndpointSlices (--enable-aggregator-routing, on by
// default here) or their cluster IP, presenting --proxy-client-cert-file.
func newAggregator(o *Options, groups []rest.APIGroupInfo, st groupStorages, creds *credentials) *aggregator.Proxy {
	var resolver aggregator.Resolver = aggregator.ClusterIPResolver{Services: st.core.Services}
	if o.Auth.ProxyClient.EnableAggregatorRouting {
		r := aggregator.EndpointsResolver{Services: st.core.Services}
		if slices, ok := servedStorage(groups, "discovery.k8s.io", "endpointslices").(rest.Lister); ok {
			r.EndpointSlices = slices
		}
		resolver = r
	}
	return aggregator.New(aggregator.Config{Resolver: resolver, ClientCert: creds.proxyClient,
		RejectForwardingRedirects: o.Auth.ProxyClient.RejectForwardingRedirects})
}

// availabilityController keeps the APIServices' Available condition and
// hands them to api, which proxies and lists them.
func availabilityController(groups []rest.APIGroupInfo, st groupStorages, proxy *aggregator.Proxy, api *apiserver.Server) *availability.Controller {
	cfg := availability.Config{
		APIServices: st.apiRegistration.APIServices,
		Status:      servedStorage(groups, apiregistrationv1.GroupName, "apiservices/status").(rest.Updater),
		Services:    st.core.Services,
		Checker:     proxy,
		Sink:        apiServiceSink{api},
	}
	if slices, ok := servedStorage(groups, "discovery.k8s.io", "endpointslices").(availability.Watched); ok {
		cfg.EndpointSlices = slices
	}
	return availability.New(cfg)
}

// apiServiceSink hands the controller's APIServices to the server.
type apiServiceSink struct{ api *apiserver.Server }

func (s apiServiceSink) ServeAPIServices(list []availability.Served) error {
	remote := make([]aggregator.Remote, len(list))
	for i, served := range list {
		remote[i] = aggregator.Remote(served)
	}
	return s.api.ServeAPIServices(remote)
}
