package app

import (
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// builtGroups are the API groups: the registry of their stores, the
// groups --runtime-config serves, and the authorization the groups'
// reviews ask.
type builtGroups struct {
	stores *stores
	// served are the versions of stores.groups --runtime-config leaves on
	// (the wiring uses every group's storage).
	served        []rest.APIGroupInfo
	authorization *Authorization
	// reviews authenticates TokenReviews, once buildHandler has built the
	// authenticator (which reads the core group's stores).
	reviews *lateAuthenticator
}

// buildGroups is the part of Start that builds the authorizer and the
// storage of every API group (buildStores) over b, and checks the flags
// that name resources against what is built.
func (s *Server) buildGroups(o *Options, creds *credentials, b *builtStorage) (*builtGroups, error) {
	authorization, err := newAuthorization(o)
	if err != nil {
		return nil, err
	}
	var rootCA []byte // kube-root-ca.crt is published by a controller of kcm's
	if o.controllerEnabled(rootCAPublisherName) {
		rootCA = creds.caPEM
	}
	g := &builtGroups{authorization: authorization, reviews: &lateAuthenticator{}}
	g.stores, err = buildStores(o, b.getter, ProviderDeps{
		RootCA: rootCA, Tokens: creds.tokenIssuer(o), Authenticator: g.reviews, APIAudiences: o.Auth.apiAudiences(),
		StorageHealth: b.etcdHealth[0].Fn,
		Authorization: authorization, NoDefaultIngressClass: o.Admission.disabled("DefaultIngressClass"),
	})
	if err != nil {
		return nil, err
	}
	s.cleanup = append(s.cleanup, g.stores.destroy)
	authorization.bindNodeObjects(g.stores)
	if err := b.getter.checkResources("--watch-cache-sizes", watchCacheSizeNames(o)); err != nil {
		return nil, err
	}
	if err := b.getter.checkResources("--etcd-servers-overrides", overriddenNames(o)); err != nil {
		return nil, err
	}
	if g.served, err = o.Kube.servedGroups(g.stores.groups, o.Auth.EnablePriorityAndFairness); err != nil {
		return nil, err
	}
	return g, nil
}
