package nodeproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/google/go-cmp/cmp"
)

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// statusOf is the Status of a request made through client-go's REST
// client (the 204 of an empty log is a Status of code 204).
func statusOf(t *testing.T, path string) metav1.Status {
	t.Helper()
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	req := clientset(t).CoreV1().RESTClient().Get().AbsPath(u.Path)
	for k, vs := range u.Query() {
		for _, v := range vs {
			req.Param(k, v)
		}
	}
	var code int
	err = req.Do(context.Background()).StatusCode(&code).Error()
	if err == nil {
		return metav1.Status{Code: int32(code)}
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("GET %s: %v", path, err)
	}
	return status.Status()
}

// statusOfUpgrade is the Status answering an SPDY upgrade request.
func statusOfUpgrade(t *testing.T, method, path string) metav1.Status {
	t.Helper()
	code, body := http1(t, method, path, "Connection: Upgrade", "Upgrade: SPDY/3.1", "X-Stream-Protocol-Version: v4.channel.k8s.io")
	var status metav1.Status
	if err := json.Unmarshal([]byte(body), &status); err != nil || int(status.Code) != code {
		t.Fatalf("%s %s: %d %q", method, path, code, body)
	}
	status.TypeMeta = metav1.TypeMeta{}
	return status
}

func failure(code int32, reason metav1.StatusReason, message string) metav1.Status {
	return metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: message}
}

// TestErrors checks the answers of the subresources when a kubelet
// cannot be reached, or the request cannot be served, against those
// kube-apiserver v1.37.2 gave.
func TestErrors(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	port := closedPort(t)
	deaf := createNode(t, []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}, port)
	// InternalIP comes before ExternalIP (kube's default order): the
	// kubelet that listens, on 127.0.0.1, is not tried.
	ordered := createNode(t, []corev1.NodeAddress{
		{Type: corev1.NodeExternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeInternalIP, Address: "127.0.0.2"}}, kubelet.addr.Port)
	noAddress := createNode(t, nil, 0)
	createPod(t, ns, "one", deaf, "", containers("c1")...)
	createPod(t, ns, "two", deaf, "", containers("c1", "c2")...)
	createPod(t, ns, "unscheduled", "", "", containers("c1")...)
	createPod(t, ns, "homeless", noAddress, "", containers("c1")...)
	createPod(t, ns, "ghost", "no-such-node", "", containers("c1")...)
	createPod(t, ns, "ordered", ordered, "", containers("c1")...)
	createPod(t, ns, "loopback", deaf, "127.0.0.1", containers("c1")...)
	if _, err := clientset(t).CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "s1"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := "/api/v1/namespaces/" + ns + "/pods/"
	refused := func(host string) string {
		return fmt.Sprintf("dial tcp %s: connect: connection refused", net.JoinHostPort(host, fmt.Sprint(port)))
	}
	noAddresses := failure(500, "", "no preferred addresses found; known addresses: []")
	unscheduled := failure(400, metav1.StatusReasonBadRequest, "pod unscheduled does not have a host assigned")
	invalid := func(errs ...*field.Error) metav1.Status {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("PodLogOptions").GroupKind(), "one", errs).Status()
	}

	gets := []struct {
		path string
		want metav1.Status
	}{
		{pods + "two/log", failure(400, metav1.StatusReasonBadRequest, "a container name must be specified for pod two, choose one of: [c1 c2]")},
		{pods + "two/log?container=zz", failure(400, metav1.StatusReasonBadRequest, "container zz is not valid for pod two")},
		{pods + "unscheduled/log", metav1.Status{Code: http.StatusNoContent}},
		{pods + "homeless/log", noAddresses},
		{pods + "ghost/log", apierrors.NewNotFound(corev1.Resource("pods"), "no-such-node").Status()},
		{pods + "nope/log", apierrors.NewNotFound(corev1.Resource("pods"), "nope").Status()},
		{pods + "one/log?previous=true&sinceTime=2020-01-01T00:00:00Z&limitBytes=10", failure(500, "",
			fmt.Sprintf(`Get "https://127.0.0.1:%d/containerLogs/%s/one/c1?limitBytes=10&previous=true&sinceTime=2020-01-01T00%%3A00%%3A00Z": %s`, port, ns, refused("127.0.0.1")))},
		{pods + "ordered/log", failure(500, "",
			fmt.Sprintf(`Get "https://127.0.0.2:%d/containerLogs/%s/ordered/c1": dial tcp 127.0.0.2:%d: connect: connection refused`, kubelet.addr.Port, ns, kubelet.addr.Port))},
		{pods + "one/log?tailLines=-1&limitBytes=0", invalid(
			field.Invalid(field.NewPath("tailLines"), int64(-1), "must be greater than or equal to 0"),
			field.Invalid(field.NewPath("limitBytes"), int64(0), "must be greater than 0"))},
		{pods + "one/log?sinceSeconds=5&sinceTime=2020-01-01T00:00:00Z", invalid(
			field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))},
		{pods + "one/log?sinceSeconds=0", invalid(field.Invalid(field.NewPath("sinceSeconds"), int64(0), "must be greater than 0"))},
		{pods + "one/log?stream=Stdout", invalid(field.Forbidden(field.NewPath("stream"), "may not be specified"))},
		{pods + "one/log?tailLines=abc", failure(400, metav1.StatusReasonBadRequest, `strconv.ParseInt: parsing "abc": invalid syntax`)},
		{pods + "one/log?sinceTime=bad", failure(400, metav1.StatusReasonBadRequest, `parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"`)},
		{pods + "one/exec?command=ls&stdout=1", failure(400, metav1.StatusReasonBadRequest, "Upgrade request required")},
		{pods + "unscheduled/attach?stdout=1", unscheduled},
		{pods + "loopback/proxy/x", failure(400, metav1.StatusReasonBadRequest, "address not allowed")},
		{pods + "http:loopback:8080/proxy/", failure(400, metav1.StatusReasonBadRequest, "address not allowed")},
		{pods + "a:b:c:d/proxy", failure(400, metav1.StatusReasonBadRequest, `invalid pod request "a:b:c:d"`)},
		{"/api/v1/nodes/" + deaf + "/proxy/healthz", failure(400, metav1.StatusReasonBadRequest, "address not allowed")},
		{"/api/v1/nodes/" + noAddress + "/proxy", noAddresses},
		{"/api/v1/nodes/no-such-node/proxy", apierrors.NewNotFound(corev1.Resource("nodes"), "no-such-node").Status()},
		{"/api/v1/nodes/a:b:c:d/proxy/", failure(400, metav1.StatusReasonBadRequest, `invalid node request "a:b:c:d"`)},
		{"/api/v1/namespaces/" + ns + "/services/s1/proxy/", failure(503, metav1.StatusReasonServiceUnavailable, `no endpoints available for service "s1"`)},
		{"/api/v1/namespaces/" + ns + "/services/https:s1:http/proxy/", failure(503, metav1.StatusReasonServiceUnavailable, `no endpoints available for service "s1"`)},
		{"/api/v1/namespaces/" + ns + "/services/s1:81/proxy/", failure(503, metav1.StatusReasonServiceUnavailable, `no service port 81 found for service "s1"`)},
		{"/api/v1/namespaces/" + ns + "/services/a:b:c:d/proxy/", failure(400, metav1.StatusReasonBadRequest, `invalid service request "a:b:c:d"`)},
	}
	for _, tc := range gets {
		want := tc.want
		want.TypeMeta = metav1.TypeMeta{}
		if diff := cmp.Diff(want, statusOf(t, tc.path)); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", tc.path, diff)
		}
	}

	upgrades := []struct {
		method, path string
		want         metav1.Status
	}{
		{"POST", pods + "one/exec?command=ls&stdout=1", failure(500, "", "error dialing backend: "+refused("127.0.0.1"))},
		{"GET", pods + "one/portforward?ports=80", failure(500, "", "error dialing backend: "+refused("127.0.0.1"))},
		{"POST", pods + "unscheduled/exec?command=ls&stdout=1", unscheduled},
		{"POST", pods + "unscheduled/portforward", unscheduled},
		{"POST", pods + "homeless/attach?stdout=1", noAddresses},
		{"POST", pods + "two/exec?command=ls&stdout=1", failure(400, metav1.StatusReasonBadRequest, "a container name must be specified for pod two, choose one of: [c1 c2]")},
		{"POST", pods + "one/portforward?ports=abc", failure(400, metav1.StatusReasonBadRequest, `cannot convert to []int32: strconv.ParseUint: parsing "abc": invalid syntax`)},
	}
	for _, tc := range upgrades {
		if diff := cmp.Diff(tc.want, statusOfUpgrade(t, tc.method, tc.path)); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
		}
	}
}
