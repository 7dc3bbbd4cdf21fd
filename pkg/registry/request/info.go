package request

import "strings"

// Info is what a request addresses, read from its method, path and query
// once, by the request-info filter, as kube's RequestInfo: every later
// step (authorization, audit, limits, timeouts, metrics, the handlers)
// reads it here instead of parsing the request again.
type Info struct {
	// IsResourceRequest is true for /api/VERSION/... and
	// /apis/GROUP/VERSION/... paths that name a resource; the rest (/healthz,
	// /version, discovery, ...) are non-resource requests.
	IsResourceRequest bool
	// Path is the URL path.
	Path string
	// Verb is the kube verb: get, list, watch, create, update, patch,
	// delete, deletecollection for resource requests (a GET of a collection
	// is list, or watch with ?watch=true or under /watch/); the lower-case
	// HTTP method for the others.
	Verb string

	APIPrefix  string // "api" or "apis"
	APIGroup   string // "" for the core group
	APIVersion string
	Namespace  string // "" when cluster-scoped or across namespaces
	Resource   string
	// Subresource is "status", "scale", ... or "".
	Subresource string
	// Name is the object's name from the path, or from a field selector
	// metadata.name=NAME on a list or watch; "" otherwise.
	Name string
	// Parts are the path segments from the resource on.
	Parts []string

	// FieldSelector and LabelSelector are the raw selectors of a list,
	// watch or deletecollection.
	FieldSelector string
	LabelSelector string
}

// The verbs and subresources of long-running requests, as kube-apiserver
// configures them.
var (
	longRunningVerbs        = []string{"watch", "proxy"}
	longRunningSubresources = []string{"attach", "exec", "proxy", "log", "portforward"}
)

// LongRunning reports a request that may last as long as its client
// wants: a watch, a proxied connection, a log stream, a profile. It is the
// one place that decides it: long-running requests get no request timeout
// and are not counted by the in-flight limits.
func (i *Info) LongRunning() bool {
	for _, v := range longRunningVerbs {
		if i.Verb == v {
			return true
		}
	}
	if i.IsResourceRequest {
		for _, s := range longRunningSubresources {
			if i.Subresource == s {
				return true
			}
		}
		return false
	}
	return strings.HasPrefix(i.Path, "/debug/pprof/")
}

// ReadOnly reports a verb that changes nothing (kube's non-mutating verbs,
// which have their own in-flight limit).
func (i *Info) ReadOnly() bool {
	switch i.Verb {
	case "get", "list", "watch":
		return true
	}
	return false
}
