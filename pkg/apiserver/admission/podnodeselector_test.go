package admission

import (
	"context"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// TestReadPodNodeSelectorConfig: kube's lenient reading.
func TestReadPodNodeSelectorConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data string
		want       map[string]string
	}{
		{name: "YAML", data: "podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n  ns1: zone=a\n",
			want: map[string]string{"clusterDefaultNodeSelector": "env=prod", "ns1": "zone=a"}},
		{name: "JSON, any case", data: `{"PodNodeSelectorPluginConfig":{"ns1":"zone=a"}}`, want: map[string]string{"ns1": "zone=a"}},
		{name: "the first document that decodes", data: "podNodeSelectorPluginConfig: [1]\n---\npodNodeSelectorPluginConfig:\n  ns1: zone=a\n---\npodNodeSelectorPluginConfig:\n  ns2: zone=b\n",
			want: map[string]string{"ns1": "zone=a"}},
		{name: "nothing that decodes", data: "podNodeSelectorPluginConfig: 3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReadPodNodeSelectorConfig(strings.NewReader(tc.data)); !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPodNodeSelectorAdmit: merge, conflicts, whitelists and the names
// kube's refusals give.
func TestPodNodeSelectorAdmit(t *testing.T) {
	t.Parallel()
	p := &PodNodeSelector{
		Namespaces: fakeNamespaces{
			"plain":  annotated("plain", nil),
			"empty":  annotated("empty", map[string]string{NamespaceNodeSelector: ""}),
			"zoned":  annotated("zoned", map[string]string{NamespaceNodeSelector: "zone=a"}),
			"broken": annotated("broken", map[string]string{NamespaceNodeSelector: "zone"}),
		},
		Selectors: map[string]string{"clusterDefaultNodeSelector": "env=prod", "zoned": "zone=a,disk=ssd"},
	}
	for _, tc := range []struct {
		name, ns, generateName string
		sent, want             map[string]string
		wantCode               int32
		wantErr                string
	}{
		{name: "the cluster default", ns: "plain", sent: map[string]string{"disk": "ssd"}, want: map[string]string{"env": "prod", "disk": "ssd"}},
		{name: "an empty annotation: no default", ns: "empty", want: nil},
		{name: "the namespace's", ns: "zoned", sent: map[string]string{"disk": "ssd"}, want: map[string]string{"zone": "a", "disk": "ssd"}},
		{name: "a conflict", ns: "zoned", sent: map[string]string{"zone": "b"}, wantCode: 403,
			wantErr: `pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector`},
		{name: "a generated name is not there yet", ns: "zoned", generateName: "p-", sent: map[string]string{"zone": "b"}, wantCode: 403,
			wantErr: `pods is forbidden: pod node label selector conflicts with its namespace node label selector`},
		{name: "outside the whitelist", ns: "zoned", sent: map[string]string{"gpu": "yes"}, wantCode: 403,
			wantErr: `pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist`},
		{name: "an annotation that does not parse", ns: "broken", wantCode: 500, wantErr: "invalid selector: [zone]"},
		{name: "a missing namespace", ns: "gone", wantCode: 500, wantErr: "Internal error occurred: namespace gone does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", GenerateName: tc.generateName}, Spec: corev1.PodSpec{NodeSelector: tc.sent}}
			if tc.generateName != "" {
				pod.Name = tc.generateName + "abcde" // as the store generates it
			}
			err := p.Admit(context.Background(), podAttributes(handlers.Create, tc.ns), pod)
			if tc.wantErr != "" {
				status, ok := err.(apierrors.APIStatus)
				if !ok || status.Status().Code != tc.wantCode || status.Status().Message != tc.wantErr {
					t.Fatalf("got %v, want a %d: %q", err, tc.wantCode, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(pod.Spec.NodeSelector, tc.want) {
				t.Errorf("nodeSelector %v, want %v", pod.Spec.NodeSelector, tc.want)
			}
		})
	}
}
