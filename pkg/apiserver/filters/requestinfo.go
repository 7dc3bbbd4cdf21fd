package filters

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// WithRequestInfo reads what each request addresses (request.Info) and
// puts it in the context, for every later filter and the handler. A
// resource path it cannot make sense of is answered 500 in plain text, as
// kube does.
func WithRequestInfo(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, err := NewRequestInfo(r)
		if err != nil {
			internalError(w, r, fmt.Errorf("failed to create RequestInfo: %w", err))
			return
		}
		h.ServeHTTP(w, r.WithContext(request.WithInfo(r.Context(), info)))
	})
}

// internalError answers as kube's responsewriters.InternalError: plain
// text naming the request URI.
func internalError(w http.ResponseWriter, r *http.Request, err error) {
	http.Error(w, htmlEscaper.Replace(fmt.Sprintf("Internal Server Error: %q: %v", r.RequestURI, err)), http.StatusInternalServerError)
}

// htmlEscaper is kube's sanitizer of text written into plain-text errors.
var htmlEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// The path words kube's request info knows.
var (
	// specialVerbs are verbs given by a path prefix (/api/v1/watch/...).
	specialVerbs = map[string]bool{"proxy": true, "watch": true}
	// namespaceSubresources follow a namespace's name.
	namespaceSubresources = map[string]bool{"status": true, "finalize": true}
)

// NewRequestInfo reads r as kube's RequestInfoFactory does, for the API
// prefixes /api (the core group) and /apis. Resource paths:
//
//	/api/VERSION/RESOURCE[/NAME[/SUBRESOURCE]]
//	/api/VERSION/namespaces/NS/RESOURCE[/NAME[/SUBRESOURCE]]
//	/apis/GROUP/VERSION/...            (the same forms)
//	/api/VERSION/watch/...             (the verb by path, legacy)
//
// Everything else (/healthz, discovery, ...) is a non-resource request
// whose verb is the lower-case method. When it fails, the Info holds what
// was read so far.
func NewRequestInfo(r *http.Request) (*request.Info, error) {
	info := &request.Info{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	parts := splitPath(r.URL.Path)
	if len(parts) < 3 || (parts[0] != "api" && parts[0] != "apis") {
		return info, nil
	}
	info.APIPrefix, parts = parts[0], parts[1:]
	if info.APIPrefix == "apis" {
		if len(parts) < 3 {
			return info, nil // /apis/GROUP/VERSION: discovery
		}
		info.APIGroup, parts = parts[0], parts[1:]
	}
	info.IsResourceRequest = true
	info.APIVersion, parts = parts[0], parts[1:]

	verbByPath := specialVerbs[parts[0]]
	if verbByPath {
		if len(parts) < 2 {
			return info, fmt.Errorf("unable to determine kind and namespace from url, %v", r.URL)
		}
		info.Verb, parts = parts[0], parts[1:]
	} else {
		info.Verb = methodVerb(r.Method)
	}
	if parts[0] == "namespaces" {
		if len(parts) > 1 {
			info.Namespace = parts[1]
			// namespaces/NS/RESOURCE...: the resource starts after the
			// namespace, unless it is the namespace's own subresource.
			if len(parts) > 2 && !namespaceSubresources[parts[2]] {
				parts = parts[2:]
			}
		}
	}
	info.Parts = parts
	switch {
	case len(parts) >= 3 && info.Verb != "proxy":
		info.Subresource = parts[2]
		fallthrough
	case len(parts) >= 2:
		info.Name = parts[1]
		fallthrough
	default:
		info.Resource = parts[0]
	}

	if info.Name == "" && info.Verb == "get" {
		readCollectionVerb(r, info)
	}
	if info.Name == "" && info.Verb == "delete" {
		info.Verb = "deletecollection"
	}
	if !verbByPath && (info.Verb == "list" || info.Verb == "watch" || info.Verb == "deletecollection") {
		// The raw selectors, for authorizers that look at them.
		q := r.URL.Query()
		info.FieldSelector, info.LabelSelector = q.Get("fieldSelector"), q.Get("labelSelector")
	}
	return info, nil
}

// methodVerb is the verb of a resource request by its method.
func methodVerb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// readCollectionVerb makes a GET of a collection a list or, with
// ?watch=true, a watch; a field selector metadata.name=NAME names the
// object. A query that does not parse is a list (or a watch, when its
// watch parameter says so), as kube reads it; the handler then refuses it.
func readCollectionVerb(r *http.Request, info *request.Info) {
	q := r.URL.Query()
	opts := metainternalversion.ListOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &opts); err != nil {
		opts = metainternalversion.ListOptions{}
		if v, ok := q["watch"]; ok && len(v) > 0 {
			switch strings.ToLower(v[0]) {
			case "false", "0":
			default:
				opts.Watch = true
			}
		}
	}
	info.Verb = "list"
	if opts.Watch {
		info.Verb = "watch"
	}
	if opts.FieldSelector != nil {
		if name, ok := opts.FieldSelector.RequiresExactMatch("metadata.name"); ok && len(content.IsPathSegmentName(name)) == 0 {
			info.Name = name
		}
	}
}

func splitPath(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}
