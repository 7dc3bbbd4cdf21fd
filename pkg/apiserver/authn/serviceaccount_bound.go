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
			if err := checkBound("secret", ref, gone, func() (metav1.Object, error) { return getter.GetSecret(ctx, ns, ref.Name) }); err != nil {
				return nil, err
			}
		}
		info := &apiserviceaccount.ServiceAccountInfo{Namespace: ns, Name: saRef.Name, UID: saRef.UID}
		switch {
		case k.Pod != nil:
			if err := checkBound("pod", k.Pod, gone, func() (metav1.Object, error) { return getter.GetPod(ctx, ns, k.Pod.Name) }); err != nil {
				return nil, err
			}
			info.PodName, info.PodUID = k.Pod.Name, k.Pod.UID
			if k.Node != nil {
				// The node the pod ran on when the token was made, as
				// information: it is not checked.
				info.NodeName, info.NodeUID = k.Node.Name, k.Node.UID
			}
		case k.Node != nil:
			if err := checkBound("node", k.Node, gone, func() (metav1.Object, error) { return getter.GetNode(ctx, k.Node.Name) }); err != nil {
				return nil, err
			}
			info.NodeName, info.NodeUID = k.Node.Name, k.Node.UID
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

// checkBound checks that the object a token is bound to still exists,
// with the token's UID, and is not being deleted, in kube's words.
func checkBound(kind string, ref *serviceaccount.Ref, gone func(*metav1.Time) bool, get func() (metav1.Object, error)) error {
	obj, err := get()
	if err != nil {
		return errInvalidated
	}
	if string(obj.GetUID()) != ref.UID {
		return fmt.Errorf("%s UID (%s) does not match service account %s ref claim (%s)", kind, obj.GetUID(), kind, ref.UID)
	}
	if gone(obj.GetDeletionTimestamp()) {
		return errInvalidated
	}
	return nil
}
