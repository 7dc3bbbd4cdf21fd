package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func serviceObject(app string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": app},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
}

// testServiceEndpoints: a Service gets a cluster IP from the service
// range, and EndpointSlices and Endpoints listing its ready pods' IPs and
// the port its target port names.
func (c *cluster) testServiceEndpoints(t *testing.T) {
	ns := c.namespace(t, "service")
	pods := c.createDeployment(t, ns, "echo", 2)
	svc, err := c.client.CoreV1().Services(ns).Create(t.Context(), serviceObject("echo"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating service: %v", err)
	}
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil || !netip.MustParsePrefix(serviceCIDR).Contains(ip) {
		t.Errorf("service echo's cluster IP %q is not in %s", svc.Spec.ClusterIP, serviceCIDR)
	}
	want := podIPs(pods)
	c.eventually(t, waitLong, fmt.Sprintf("EndpointSlices of service echo with the ready pod IPs %v, port 8080", want), ns, func() (string, bool, error) {
		slices_, err := c.client.DiscoveryV1().EndpointSlices(ns).List(t.Context(),
			metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=echo"})
		if err != nil {
			return "", false, err
		}
		var ips, ports []string
		for _, s := range slices_.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					ips = append(ips, e.Addresses...)
				}
			}
			for _, p := range s.Ports {
				ports = append(ports, fmt.Sprintf("%s/%d", ptr.Deref(p.Name, ""), ptr.Deref(p.Port, 0)))
			}
		}
		slices.Sort(ips)
		return fmt.Sprintf("%d slices, ready addresses %v, ports %v", len(slices_.Items), ips, ports),
			slices.Equal(ips, want) && slices.Equal(slices.Compact(ports), []string{"http/8080"}), nil
	})
	c.eventually(t, waitLong, fmt.Sprintf("Endpoints of service echo with the ready pod IPs %v, port 8080", want), ns, func() (string, bool, error) {
		ep, err := c.client.CoreV1().Endpoints(ns).Get(t.Context(), "echo", metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		var ips, ports []string
		for _, s := range ep.Subsets {
			for _, a := range s.Addresses {
				ips = append(ips, a.IP)
			}
			for _, p := range s.Ports {
				ports = append(ports, fmt.Sprintf("%s/%d", p.Name, p.Port))
			}
		}
		slices.Sort(ips)
		return fmt.Sprintf("addresses %v, ports %v", ips, ports),
			slices.Equal(ips, want) && slices.Equal(slices.Compact(ports), []string{"http/8080"}), nil
	})
}

// testVolumeBinding: a PersistentVolumeClaim binds to the matching
// PersistentVolume of its (non-provisioning) StorageClass, both ways.
func (c *cluster) testVolumeBinding(t *testing.T) {
	ns := c.namespace(t, "volume")
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: ns},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
	if _, err := c.client.StorageV1().StorageClasses().Create(t.Context(), class, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating storage class: %v", err)
	}
	t.Cleanup(func() { c.client.StorageV1().StorageClasses().Delete(t.Context(), ns, metav1.DeleteOptions{}) })
	size := resource.MustParse("1Gi")
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              ns,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + ns}},
		},
	}
	if _, err := c.client.CoreV1().PersistentVolumes().Create(t.Context(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating persistent volume: %v", err)
	}
	t.Cleanup(func() { c.client.CoreV1().PersistentVolumes().Delete(t.Context(), ns, metav1.DeleteOptions{}) })
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
			StorageClassName: ptr.To(ns),
		},
	}
	if _, err := c.client.CoreV1().PersistentVolumeClaims(ns).Create(t.Context(), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating persistent volume claim: %v", err)
	}
	c.eventually(t, waitLong, "claim data and volume "+ns+" Bound to each other", ns, func() (string, bool, error) {
		claim, err := c.client.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), "data", metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		vol, err := c.client.CoreV1().PersistentVolumes().Get(t.Context(), ns, metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		ref := "(none)"
		if r := vol.Spec.ClaimRef; r != nil {
			ref = r.Namespace + "/" + r.Name
		}
		return fmt.Sprintf("claim %s volumeName %q; volume %s claimRef %s", claim.Status.Phase, claim.Spec.VolumeName, vol.Status.Phase, ref),
			claim.Status.Phase == corev1.ClaimBound && claim.Spec.VolumeName == ns &&
				vol.Status.Phase == corev1.VolumeBound && ref == ns+"/data", nil
	})
}

// testEviction: evicting a pod that a PodDisruptionBudget protects is
// refused with 429 as kube-apiserver words it (what `kubectl drain`
// retries on); once the budget allows a disruption, the eviction deletes
// the pod and the Deployment replaces it.
func (c *cluster) testEviction(t *testing.T) {
	ns := c.namespace(t, "eviction")
	pods := c.createDeployment(t, ns, "guarded", 2)
	pdbs := c.client.PolicyV1().PodDisruptionBudgets(ns)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "guard"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(2)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}},
		},
	}
	if _, err := pdbs.Create(t.Context(), pdb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod disruption budget: %v", err)
	}
	c.waitBudget(t, ns, 0)
	victim := pods[0]
	err := c.evict(t, ns, victim.Name)
	const refusal = "Cannot evict pod as it would violate the pod's disruption budget."
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("evicting pod %s against budget guard (minAvailable 2 of 2): got %v, want 429 %q", victim.Name, err, refusal)
	}
	p, err := c.client.CoreV1().Pods(ns).Get(t.Context(), victim.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("pod %s after a refused eviction: %v; want it untouched", victim.Name, err)
	}
	if p.DeletionTimestamp != nil {
		t.Fatalf("pod %s after a refused eviction: being deleted (%v); want it untouched", victim.Name, p.DeletionTimestamp)
	}

	patch := []byte(`{"spec":{"minAvailable":1}}`)
	if _, err := pdbs.Patch(t.Context(), "guard", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("lowering the budget: %v", err)
	}
	c.waitBudget(t, ns, 1)
	if err := c.evict(t, ns, victim.Name); err != nil {
		t.Fatalf("evicting pod %s with a disruption allowed: %v", victim.Name, err)
	}
	c.eventually(t, waitLong, "the evicted pod "+victim.Name+" gone", ns, func() (string, bool, error) {
		p, err := c.client.CoreV1().Pods(ns).Get(t.Context(), victim.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return "gone", true, nil
		}
		if err != nil {
			return "", false, err
		}
		return fmt.Sprintf("%s, deletionTimestamp %v", p.Status.Phase, p.DeletionTimestamp), false, nil
	})
	c.waitDeployment(t, ns, "guarded", 2)
}

// waitBudget waits until budget guard has seen the 2 healthy pods and
// allows that many disruptions.
func (c *cluster) waitBudget(t *testing.T, ns string, allowed int32) {
	t.Helper()
	c.eventually(t, waitLong, fmt.Sprintf("budget guard observed, 2 pods healthy, %d disruptions allowed", allowed), ns, func() (string, bool, error) {
		pdb, err := c.client.PolicyV1().PodDisruptionBudgets(ns).Get(t.Context(), "guard", metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		s := pdb.Status
		return fmt.Sprintf("generation %d observed %d, healthy %d/%d, disruptions allowed %d", pdb.Generation, s.ObservedGeneration,
				s.CurrentHealthy, s.DesiredHealthy, s.DisruptionsAllowed),
			s.ObservedGeneration == pdb.Generation && s.CurrentHealthy == 2 && s.DisruptionsAllowed == allowed, nil
	})
}

func (c *cluster) evict(t *testing.T, ns, pod string) error {
	return c.client.PolicyV1().Evictions(ns).Evict(t.Context(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns}})
}

// testCSR: a CertificateSigningRequest for a client certificate, approved
// through its approval subresource (as `kubectl certificate approve`
// does), is signed by the controller-manager with the cluster signing CA.
func (c *cluster) testCSR(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	user := "e2e-user-" + randomHex(4)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: user, Organization: []string{"e2e"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csrs := c.client.CertificatesV1().CertificateSigningRequests()
	csr, err := csrs.Create(t.Context(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName:        certificatesv1.KubeAPIServerClientSignerName,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			ExpirationSeconds: ptr.To[int32](3600),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a CSR: %v", err)
	}
	t.Cleanup(func() { csrs.Delete(t.Context(), csr.Name, metav1.DeleteOptions{}) })
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "E2EApproved", Message: "approved by the cluster test",
	})
	if _, err := csrs.UpdateApproval(t.Context(), csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("approving CSR %s: %v", csr.Name, err)
	}
	var certPEM []byte
	c.eventually(t, waitLong, "CSR "+csr.Name+" signed", "", func() (string, bool, error) {
		got, err := csrs.Get(t.Context(), csr.Name, metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		certPEM = got.Status.Certificate
		return fmt.Sprintf("conditions %v, %d bytes of certificate", got.Status.Conditions, len(certPEM)), len(certPEM) > 0, nil
	})
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("CSR %s's certificate is not PEM: %q", csr.Name, certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(c.pki.signingCA)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("CSR %s's certificate does not verify as a client certificate of the signing CA: %v", csr.Name, err)
	}
	if cert.Subject.CommonName != user {
		t.Errorf("CSR %s's certificate is for %q, want %q", csr.Name, cert.Subject.CommonName, user)
	}
}
