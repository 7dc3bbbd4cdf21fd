package podspec

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSecurityContexts: pods with invalid pod and container security
// contexts get kube-apiserver v1.37.2's errors, in its order, to the
// letter. testdata/security_context.json holds each pod's spec and the
// message kube's 422 gave for it (a dry-run create; the ServiceAccount
// plugin off, --allow-privileged=true).
func TestSecurityContexts(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/security_context.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Spec   corev1.PodSpec `json:"spec"`
		Errors string         `json:"errors"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: tc.Spec}
		SetDefaultsPod(pod)
		var got []string
		for _, err := range ValidatePodCreate(pod) {
			got = append(got, err.Error())
		}
		if strings.Join(got, ", ") != tc.Errors {
			t.Errorf("case %d:\n got %s\nwant %s", i, strings.Join(got, ", "), tc.Errors)
		}
	}
}

// TestSecurityContextValid: what kube accepts passes: IDs at their
// bounds, each enum's values, profiles of every type, Windows user names
// with NetBIOS and DNS domains, Unmasked proc mounts without host users.
func TestSecurityContextValid(t *testing.T) {
	t.Parallel()
	pod := validPod()
	localhost := "profiles/p.json"
	maxID := int64(2147483647)
	zero := int64(0)
	sc := pod.Spec.SecurityContext
	sc.RunAsUser, sc.RunAsGroup, sc.FSGroup, sc.SupplementalGroups = &maxID, &zero, &maxID, []int64{0, maxID}
	onRoot, strict, mountOption := corev1.FSGroupChangeOnRootMismatch, corev1.SupplementalGroupsPolicyStrict, corev1.SELinuxChangePolicyMountOption
	sc.FSGroupChangePolicy, sc.SupplementalGroupsPolicy, sc.SELinuxChangePolicy = &onRoot, &strict, &mountOption
	sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: &localhost}
	sc.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: &localhost}
	netbios, dns := `CORP\svc.account`, `corp.Example-1.com\user`
	sc.WindowsOptions = &corev1.WindowsSecurityContextOptions{RunAsUserName: &netbios}
	unmasked, noHostUsers, no := corev1.UnmaskedProcMount, false, false
	pod.Spec.HostUsers = &noHostUsers
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
		ProcMount: &unmasked, AllowPrivilegeEscalation: &no, Privileged: &no, RunAsUser: &zero,
		Capabilities:    &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}},
		SeccompProfile:  &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined},
		WindowsOptions:  &corev1.WindowsSecurityContextOptions{RunAsUserName: &dns, HostProcess: &no},
	}
	checkErrors(t, pod, nil)
}

func TestRunAsUserName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string][]string{
		`user`:                          nil,
		`a.b\u`:                         nil,
		`.startsWithDot\u`:              {"runAsUserName's Domain doesn't match the NetBios nor the DNS format"},
		`x\` + strings.Repeat("u", 105): {"runAsUserName's User length must not be longer than 104 characters"},
		strings.Repeat("d", 256) + `\u`: {"runAsUserName's Domain length must be under 256 characters", "runAsUserName's Domain doesn't match the NetBios nor the DNS format"},
		"tab\tuser":                     {"runAsUserName cannot contain control characters"},
		`d\`:                            {"runAsUserName's User cannot be empty"},
		`ЖЖЖЖЖЖЖЖЖЖЖЖЖЖЖ\u`:             nil, // 15 runes: a NetBIOS name
		`ЖЖЖЖЖЖЖЖЖЖЖЖЖЖЖЖ\u`:            {"runAsUserName's Domain doesn't match the NetBios nor the DNS format"},
	} {
		got := runAsUserNameErrors(name)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%q: %q, want %q", name, got, want)
		}
	}
}

// TestUpdateRatchets: a pod stored with a security context kube refuses
// (by a build before the check) can still be updated when the update
// keeps it as it was; an update that makes it worse, or a new such pod,
// is refused.
func TestUpdateRatchets(t *testing.T) {
	t.Parallel()
	minusOne, minusTwo := int64(-1), int64(-2)
	old := validPod()
	old.ResourceVersion = "1"
	old.Spec.SecurityContext.RunAsUser = &minusOne
	if len(ValidatePodCreate(old)) == 0 {
		t.Fatal("runAsUser -1 is accepted on create")
	}
	pod := old.DeepCopy()
	pod.Labels = map[string]string{"relabelled": "yes"}
	if errs := ValidatePodUpdate(pod, old); len(errs) != 0 {
		t.Errorf("an update keeping the stored security context: %v", errs)
	}
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: &minusTwo}
	if errs := ValidatePodUpdate(pod, old); len(errs) == 0 {
		t.Error("an update adding an invalid container security context is accepted")
	}
}
