package app

import (
	"github.com/miniapiserver/miniapiserver/pkg/apiserver"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/aggregator"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/availability"
)

// newAggregator builds the aggregation layer's proxy: services reached
// through their EndpointSlices (--enable-aggregator-routing, on by
// default here) or their cluster IP, presenting --proxy-client-cert-file.
func newAggregator(o *Options, st *stores, creds *credentials) *aggregator.Proxy {
	var resolver aggregator.Resolver = aggregator.ClusterIPResolver{Services: st.core.Services}
	if o.Auth.ProxyClient.EnableAggregatorRouting {
		resolver = aggregator.EndpointsResolver{Services: st.core.Services, EndpointSlices: st.discovery.EndpointSlices}
	}
	return aggregator.New(aggregator.Config{Resolver: resolver, ClientCert: creds.proxyClient,
		RejectForwardingRedirects: o.Auth.ProxyClient.RejectForwardingRedirects})
}

// availabilityController keeps the APIServices' Available condition and
// hands them to api, which proxies and lists them.
func availabilityController(st *stores, proxy *aggregator.Proxy, api *apiserver.Server) *availability.Controller {
	return availability.New(availability.Config{
		APIServices:    st.apiRegistration.APIServices,
		Status:         st.apiRegistration.APIServiceStatus,
		Services:       st.core.Services,
		EndpointSlices: st.discovery.EndpointSlices,
		Checker:        proxy,
		Sink:           apiServiceSink{api},
	})
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
