package rest

import (
	"context"
	"io"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
)

// Connecter is implemented by subresources that hand the request on to
// another server (pods/exec, pods/portforward, nodes/proxy, ...): kube's
// connect verbs. The HTTP layer decodes the query into the options of
// NewConnectOptions and serves the request with the handler Connect
// returns.
type Connecter interface {
	// Connect returns the handler that serves the request for the named
	// object, or the error the client gets (the object does not exist,
	// has no node, ...).
	Connect(ctx context.Context, name string, options runtime.Object, r Responder) (http.Handler, error)
	// NewConnectOptions returns an empty options object; when subpath is
	// true, the rest of the URL after the subresource is its field
	// subpathKey (the path of .../proxy/{path}).
	NewConnectOptions() (options runtime.Object, subpath bool, subpathKey string)
	// ConnectMethods are the HTTP methods served.
	ConnectMethods() []string
}

// Responder writes the errors a Connect handler meets once it runs (the
// backend cannot be dialled) as the API's Status.
type Responder interface {
	Error(err error)
}

// GetterWithOptions reads an object with options from the query (pods/log
// reads PodLogOptions).
type GetterWithOptions interface {
	Get(ctx context.Context, name string, options runtime.Object) (runtime.Object, error)
	// NewGetOptions returns an empty options object; subpath and
	// subpathKey are as NewConnectOptions's.
	NewGetOptions() (options runtime.Object, subpath bool, subpathKey string)
}

// ResourceStreamer is an object a Getter returns whose body is a stream
// (the log of a container), written out as it comes rather than encoded.
type ResourceStreamer interface {
	runtime.Object
	// InputStream opens the stream. A nil stream with no error is an empty
	// answer (204). flush asks for every read to reach the client at
	// once; contentType is the response's ("" for
	// application/octet-stream).
	InputStream(ctx context.Context, apiVersion, acceptHeader string) (stream io.ReadCloser, flush bool, contentType string, err error)
}
