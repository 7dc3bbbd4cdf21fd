package authn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gopkg.in/go-jose/go-jose.v2/jwt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/serviceaccount"
)

// errInvalidated is kube's answer to a token whose bound object is gone.
var errInvalidated = errors.New("service account token has been invalidated")

// boundValidator is kube's check of a bound token: its times, then the
// service account and the object it is bound to, each by name and UID.
// An object being deleted invalidates the token once the JWT leeway has
// passed.
func boundValidator(getter ObjectGetter) validator[serviceaccount.PrivateClaims] {
	return func(ctx context.Context, _ string, public *jwt.Claims, private *serviceaccount.PrivateClaims) (*apiserviceaccount.ServiceAccountInfo, error) {
		now := time.Now()
		switch err := public.Validate(jwt.Expected{Time: now}); err {
		case nil:
		case jwt.ErrExpired:
			return nil, errors.New("service account token has expired")
		case jwt.ErrNotValidYet:
			return nil, errors.New("service account token is not valid yet")
		case jwt.ErrIssuedInTheFuture:
			return nil, errors.New("service account token is issued in the future")
		default:
			return nil, errors.New("service account token claims could not be validated due to unexpected validation error")
		}
		deletedBefore := now.Add(-jwt.DefaultLeeway)
		gone := func(ts *metav1.Time) bool { return ts != nil && ts.Time.Before(deletedBefore) }
		k := &private.Kubernetes
		ns, saRef := k.Namespace, k.Svcacct

		sa, err := getter.GetServiceAccount(ctx, ns, saRef.Name)
		if err != nil {
			return nil, err
		}
		if string(sa.UID) != saRef.UID {
			return nil, fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, saRef.UID)
		}
		if gone(sa.DeletionTimestamp) {
			return nil, fmt.Errorf("service account %s/%s has been deleted", ns, saRef.Name)
		}
		if ref := k.Secret; ref != nil {
			secret, err := getter.GetSecret(ctx, ns, ref.Name)
			if err != nil {
				return nil, errInvalidated
			}
			if string(secret.UID) != ref.UID {
				return nil, fmt.Errorf("secret UID (%s) does not match service account secret ref claim (%s)", secret.UID, ref.UID)
			}
			if gone(secret.DeletionTimestamp) {
				return nil, errInvalidated
			}
		}
		info := &apiserviceaccount.ServiceAccountInfo{Namespace: ns, Name: saRef.Name, UID: saRef.UID}
		if ref := k.Pod; ref != nil {
			pod, err := getter.GetPod(ctx, ns, ref.Name)
			if err != nil {
				return nil, errInvalidated
			}
			if string(pod.UID) != ref.UID {
				return nil, fmt.Errorf("pod UID (%s) does not match service account pod ref claim (%s)", pod.UID, ref.UID)
			}
			if gone(pod.DeletionTimestamp) {
				return nil, errInvalidated
			}
			info.PodName, info.PodUID = ref.Name, ref.UID
			if k.Node != nil {
				// The node the pod ran on when the token was made, as
				// information: it is not checked.
				info.NodeName, info.NodeUID = k.Node.Name, k.Node.UID
			}
		} else if ref := k.Node; ref != nil {
			node, err := getter.GetNode(ctx, ref.Name)
			if err != nil {
				return nil, errInvalidated
			}
			if string(node.UID) != ref.UID {
				return nil, fmt.Errorf("node UID (%s) does not match service account node ref claim (%s)", node.UID, ref.UID)
			}
			if gone(node.DeletionTimestamp) {
				return nil, errInvalidated
			}
			info.NodeName, info.NodeUID = ref.Name, ref.UID
		}
		if w := k.WarnAfter; w != nil && *w != 0 && now.After(w.Time()) {
			request.AddAuditAnnotation(ctx, "authentication.k8s.io/stale-token",
				fmt.Sprintf("subject: %s, seconds after warning threshold: %d", public.Subject, now.Unix()-w.Time().Unix()))
		}
		if public.ID != "" {
			info.CredentialID = "JTI=" + public.ID
		}
		return info, nil
	}
}
