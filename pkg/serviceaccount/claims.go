package serviceaccount

import (
	"time"

	"github.com/google/uuid"
	"gopkg.in/go-jose/go-jose.v2/jwt"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// LegacyIssuer is the issuer of the tokens of kubernetes.io/service-account-token
// secrets (signed by kube-controller-manager).
const LegacyIssuer = "kubernetes/serviceaccount"

// PrivateClaims are the "kubernetes.io" claims of a bound token.
type PrivateClaims struct {
	Kubernetes Kubernetes `json:"kubernetes.io,omitempty"`
}

// Kubernetes says what a bound token belongs and is bound to.
type Kubernetes struct {
	Namespace string `json:"namespace,omitempty"`
	Svcacct   Ref    `json:"serviceaccount,omitempty"`
	Pod       *Ref   `json:"pod,omitempty"`
	Secret    *Ref   `json:"secret,omitempty"`
	Node      *Ref   `json:"node,omitempty"`
	// WarnAfter is when a token whose expiry was extended (kubelet's
	// projected tokens) would have expired.
	WarnAfter *jwt.NumericDate `json:"warnafter,omitempty"`
}

// Ref names an object by name and uid.
type Ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// Binding is what a bound token belongs and is bound to (at most one of
// Pod, Secret, Node; a pod's token also names the node of the pod).
type Binding struct {
	Namespace      string
	ServiceAccount Ref
	Pod, Secret    *Ref
	Node           *Ref
}

// Claims are the claims of a bound token, as kube's TokenRequest makes
// them: subject, audiences, issued now, expiring after expiration, a
// unique ID, and the binding. warnAfter (0: none) marks a token whose
// expiry was extended.
func Claims(b Binding, audiences []string, expiration, warnAfter time.Duration, now time.Time) (*jwt.Claims, *PrivateClaims) {
	public := &jwt.Claims{
		Subject:   serviceaccount.MakeUsername(b.Namespace, b.ServiceAccount.Name),
		Audience:  jwt.Audience(audiences),
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(now.Add(expiration)),
		ID:        uuid.NewString(),
	}
	private := &PrivateClaims{Kubernetes: Kubernetes{
		Namespace: b.Namespace, Svcacct: b.ServiceAccount,
		Pod: b.Pod, Secret: b.Secret, Node: b.Node,
	}}
	if warnAfter != 0 {
		private.Kubernetes.WarnAfter = jwt.NewNumericDate(now.Add(warnAfter))
	}
	return public, private
}

// LegacyPrivateClaims are the claims of a legacy (secret) token.
type LegacyPrivateClaims struct {
	ServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name"`
	ServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid"`
	SecretName         string `json:"kubernetes.io/serviceaccount/secret.name"`
	Namespace          string `json:"kubernetes.io/serviceaccount/namespace"`
}

// LegacyClaims are the claims kube-controller-manager puts in the token of
// a service account's secret.
func LegacyClaims(namespace, saName, saUID, secretName string) (*jwt.Claims, *LegacyPrivateClaims) {
	return &jwt.Claims{Subject: serviceaccount.MakeUsername(namespace, saName)},
		&LegacyPrivateClaims{Namespace: namespace, ServiceAccountName: saName, ServiceAccountUID: saUID, SecretName: secretName}
}
