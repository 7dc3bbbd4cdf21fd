package validation

import (
	"encoding/json"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestInternalValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{
			// As kube-apiserver v1.37.2 printed it.
			name: "priority level spec",
			in: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](6), LimitResponse: flowcontrolv1.LimitResponse{Type: "Reject"}, LendablePercent: ptr.To[int32](0)}},
			want: `{"Type":"Limited","Limited":{"NominalConcurrencyShares":6,"LimitResponse":{"Type":"Reject","Queuing":null},"LendablePercent":0,"BorrowingLimitPercent":null},"Exempt":null}`,
		},
		{
			name: "times and bytes keep their form",
			in: struct {
				T metav1.Time `json:"t,omitempty"`
				B []byte      `json:"b"`
				M map[string]*flowcontrolv1.UserSubject
			}{T: metav1.Unix(0, 0).Rfc3339Copy(), B: []byte("x"), M: map[string]*flowcontrolv1.UserSubject{"a": {Name: "n"}}},
			want: `{"T":"1970-01-01T00:00:00Z","B":"eA==","M":{"a":{"Name":"n"}}}`,
		},
		{
			name: "apimachinery types keep their JSON names",
			in:   struct{ Resource metav1.GroupResource }{metav1.GroupResource{Group: "apps", Resource: "replicasets"}},
			want: `{"Resource":{"group":"apps","resource":"replicasets"}}`,
		},
		{name: "nil", in: nil, want: `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(InternalValue(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
