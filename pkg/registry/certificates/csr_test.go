package certificates

import (
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// TestCSRUpdateToleratesStoredFlaws: an update keeps what the stored
// object already had (kube's compatibility with data written by older
// versions), but a create does not get it.
func TestCSRUpdateToleratesStoredFlaws(t *testing.T) {
	flawed := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "old", ResourceVersion: "1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: legacyUnknownSignerName,
			Usages:     []certificatesv1.KeyUsage{"client auth", "client auth", "telepathy"},
		},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue},
			{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue},
		}},
	}
	errorsAbout := func(errs field.ErrorList) string {
		var out []string
		for _, e := range errs {
			if e.Field != "spec.request" { // not a real request: not the point here
				out = append(out, e.Error())
			}
		}
		return strings.Join(out, "; ")
	}
	if got := errorsAbout(append(validateCSR(flawed, csrOptionsFor(flawed, nil)), validateApprovalUnion(flawed, nil)...)); got == "" {
		t.Error("a create with the flaws passed")
	}
	updated := flawed.DeepCopy()
	updated.Labels = map[string]string{"touched": "yes"}
	if got := errorsAbout(validateCSRUpdate(updated, flawed, csrOptionsFor(updated, flawed))); got != "" {
		t.Errorf("an update of a stored object with the flaws: %s", got)
	}
}

func TestStampConditions(t *testing.T) {
	then, now := metav1.NewTime(time.Unix(1000, 0)), metav1.NewTime(time.Unix(2000, 0))
	old := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
		{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, LastTransitionTime: then},
	}}}
	csr := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
		{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue},
		{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue},
	}}}
	stampConditions(csr, old, now)
	approved, failed := csr.Status.Conditions[0], csr.Status.Conditions[1]
	if !approved.LastTransitionTime.Equal(&then) || !approved.LastUpdateTime.Equal(&now) {
		t.Errorf("approved: transition %v update %v, want the old transition and now", approved.LastTransitionTime, approved.LastUpdateTime)
	}
	if !failed.LastTransitionTime.Equal(&now) {
		t.Errorf("failed: transition %v, want now", failed.LastTransitionTime)
	}
}

func TestValidateSignerName(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, tc := range []struct {
		name, signer string
		want         []string // the errors' types, in order
	}{
		{"valid", "example.com/signer", nil},
		{"path of several labels", "example.com/ns.name", nil},
		{"empty", "", []string{"Required value"}},
		{"domain too long", strings.Repeat(long+".", 4) + "com/x", []string{"Too long"}},
		{"name too long", "example.com/" + strings.Repeat(strings.Repeat("a", 200)+".", 2) + strings.Repeat("a", 200), []string{"Too long"}},
		{"label too long", long + "a.com/x", []string{"Invalid value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range corevalidation.ValidateSignerName(field.NewPath("signerName"), tc.signer) {
				got = append(got, e.Type.String())
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
