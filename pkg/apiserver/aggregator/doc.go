// Package aggregator is the aggregation layer's HTTP side, as
// kube-aggregator's: the requests of a group version whose APIService
// names a service are proxied to that extension API server (over TLS
// verified with the APIService's caBundle, presenting the front-proxy
// client certificate, the authenticated user in the X-Remote-* headers),
// the check the availability controller makes of such a server, and the
// place of its groups in discovery.
//
// Layers: cmd -> apiserver (this package) -> registry. It reads services
// and EndpointSlices through the registry's verbs; what is served comes
// from the availability controller (pkg/controllers/availability), which
// cmd connects to the server's ServeAPIServices.
package aggregator
