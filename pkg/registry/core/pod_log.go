package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// LogREST serves pods/log: the log of a container, read from the kubelet
// of the pod's node and streamed to the client as it comes.
type LogREST struct {
	// New gives a Pod: discovery names the kind Pod, as kube's.
	storeless[corev1.Pod, *corev1.Pod]
	conns *podConnections
}

var (
	_ rest.GetterWithOptions = (*LogREST)(nil)
	_ rest.Scoper            = (*LogREST)(nil)
)

// NewGetOptions implements rest.GetterWithOptions.
func (r *LogREST) NewGetOptions() (runtime.Object, bool, string) {
	return &corev1.PodLogOptions{}, false, ""
}

// Get implements rest.GetterWithOptions. A pod not yet on a node has no
// log: an empty answer, as kube's.
func (r *LogREST) Get(ctx context.Context, name string, options runtime.Object) (runtime.Object, error) {
	opts, ok := options.(*corev1.PodLogOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %#v", options)
	}
	if errs := validatePodLogOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "PodLogOptions"}, name, errs)
	}
	pod, err := r.conns.pod(ctx, name)
	if err != nil {
		return nil, err
	}
	container, err := podContainer(pod, opts.Container)
	if err != nil {
		return nil, err
	}
	streamer := &LocationStreamer{ContentType: "text/plain", Flush: opts.Follow,
		Resource: corev1.Resource("pods/log"), Name: name}
	if pod.Spec.NodeName == "" {
		return streamer, nil
	}
	kubelet, err := r.conns.kubeletOf(ctx, pod)
	if err != nil {
		return nil, err
	}
	streamer.Location = &url.URL{Scheme: kubelet.Scheme, Host: kubelet.Host(),
		Path:     fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container),
		RawQuery: logQuery(opts).Encode()}
	streamer.Transport = kubelet.Transport
	if opts.InsecureSkipTLSVerifyBackend {
		streamer.Transport = kubelet.InsecureSkipTLSVerifyTransport
	}
	return streamer, nil
}

// validatePodLogOptions is kube's ValidatePodLogOptions, with stream
// selection off (PodLogsQuerySplitStreams is off by default in 1.37).
func validatePodLogOptions(opts *corev1.PodLogOptions) field.ErrorList {
	var errs field.ErrorList
	if opts.TailLines != nil && *opts.TailLines < 0 {
		errs = append(errs, field.Invalid(field.NewPath("tailLines"), *opts.TailLines, "must be greater than or equal to 0"))
	}
	if opts.LimitBytes != nil && *opts.LimitBytes < 1 {
		errs = append(errs, field.Invalid(field.NewPath("limitBytes"), *opts.LimitBytes, "must be greater than 0"))
	}
	switch {
	case opts.SinceSeconds != nil && opts.SinceTime != nil:
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case opts.SinceSeconds != nil && *opts.SinceSeconds < 1:
		errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), *opts.SinceSeconds, "must be greater than 0"))
	}
	if opts.Stream != nil {
		errs = append(errs, field.Forbidden(field.NewPath("stream"), "may not be specified"))
	}
	return errs
}

// logQuery is the kubelet's query for opts.
func logQuery(opts *corev1.PodLogOptions) url.Values {
	q := url.Values{}
	if opts.Follow {
		q.Add("follow", "true")
	}
	if opts.Previous {
		q.Add("previous", "true")
	}
	if opts.Timestamps {
		q.Add("timestamps", "true")
	}
	if opts.SinceSeconds != nil {
		q.Add("sinceSeconds", strconv.FormatInt(*opts.SinceSeconds, 10))
	}
	if opts.SinceTime != nil {
		q.Add("sinceTime", opts.SinceTime.Format(time.RFC3339))
	}
	if opts.TailLines != nil {
		q.Add("tailLines", strconv.FormatInt(*opts.TailLines, 10))
	}
	if opts.LimitBytes != nil {
		q.Add("limitBytes", strconv.FormatInt(*opts.LimitBytes, 10))
	}
	return q
}

// LocationStreamer is the answer of a GET served from another server's
// body (a kubelet's log): the HTTP layer streams it (kube's
// LocationStreamer). A nil Location is an empty answer.
type LocationStreamer struct {
	Location    *url.URL
	Transport   http.RoundTripper
	ContentType string
	Flush       bool
	// Resource and Name name what an error status of the backend is
	// reported as.
	Resource schema.GroupResource
	Name     string
}

var _ rest.ResourceStreamer = (*LocationStreamer)(nil)

// GetObjectKind implements runtime.Object: a stream has no kind.
func (s *LocationStreamer) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object.
func (s *LocationStreamer) DeepCopyObject() runtime.Object {
	c := *s
	return &c
}

// errRedirect refuses redirects from the backend, as kube does: the
// client's credentials must not follow them elsewhere.
var errRedirect = errors.New("redirects forbidden")

// maxErrorBody bounds what of a backend's error body the status quotes.
const maxErrorBody = 50000

// InputStream implements rest.ResourceStreamer.
func (s *LocationStreamer) InputStream(ctx context.Context, _, _ string) (io.ReadCloser, bool, string, error) {
	if s.Location == nil {
		return nil, false, "", nil
	}
	client := &http.Client{Transport: s.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return errRedirect }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Location.String(), nil)
	if err != nil {
		return nil, false, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, false, "", err
	}
	if err := s.check(resp); err != nil {
		return nil, false, "", err
	}
	return resp.Body, s.Flush, s.ContentType, nil
}

// check turns an error status of the backend into the client's, as
// kube's GenericHttpResponseChecker does.
func (s *LocationStreamer) check(resp *http.Response) error {
	if resp.StatusCode >= http.StatusOK && resp.StatusCode <= http.StatusPartialContent {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	switch resp.StatusCode {
	case http.StatusInternalServerError:
		return apierrors.NewInternalError(errors.New(string(body)))
	case http.StatusBadRequest:
		return apierrors.NewBadRequest(string(body))
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, "", s.Resource, s.Name, string(body), 0, false)
}
